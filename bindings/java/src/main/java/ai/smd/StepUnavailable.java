package ai.smd;

/** smdebug's StepUnavailable: the step was not saved and never will be. */
public class StepUnavailable extends SmdException {
  public StepUnavailable(String message) {
    super(SmdException.STEP_UNAVAILABLE, message);
  }
}
