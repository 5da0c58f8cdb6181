package ai.smd;

/** smdebug's NoMoreData: the job ended before that step. */
public class NoMoreData extends SmdException {
  public NoMoreData(String message) {
    super(SmdException.NO_MORE_DATA, message);
  }
}
