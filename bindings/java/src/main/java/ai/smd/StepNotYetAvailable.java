package ai.smd;

/** smdebug's StepNotYetAvailable: the job is running and has not written the step yet (also a wait that timed out). */
public class StepNotYetAvailable extends SmdException {
  public StepNotYetAvailable(String message) {
    super(SmdException.STEP_NOT_YET_AVAILABLE, message);
  }
}
