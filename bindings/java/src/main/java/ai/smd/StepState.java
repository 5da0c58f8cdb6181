package ai.smd;

/** smdebug's StepState: whether a trial has passed a step. */
public enum StepState {
  UNAVAILABLE(smd_step_state.SMD_STEP_UNAVAILABLE), AVAILABLE(smd_step_state.SMD_STEP_AVAILABLE),
  NOT_YET_AVAILABLE(smd_step_state.SMD_STEP_NOT_YET_AVAILABLE);

  private final int value;

  StepState(int value) {
    this.value = value;
  }

  static StepState of(int v) {
    for (StepState s : values()) {
      if (s.value == v) return s;
    }
    throw new IllegalArgumentException("unknown step state " + v);
  }
}
