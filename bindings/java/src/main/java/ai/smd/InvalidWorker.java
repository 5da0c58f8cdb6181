package ai.smd;

/** smdebug's InvalidWorker: the named worker did not save the tensor at that step. */
public class InvalidWorker extends SmdException {
  public InvalidWorker(String message) {
    super(SmdException.INVALID_WORKER, message);
  }
}
