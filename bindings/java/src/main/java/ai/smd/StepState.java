package ai.smd;

/** smdebug's StepState: whether a trial has passed a step. */
public enum StepState {
  UNAVAILABLE, AVAILABLE, NOT_YET_AVAILABLE;

  static StepState of(int v) {
    return values()[v];
  }
}
