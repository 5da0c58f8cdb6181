package ai.smd;

/** smdebug's TensorUnavailable: the trial has no tensor of that name. */
public class TensorUnavailable extends SmdException {
  public TensorUnavailable(String message) {
    super(SmdException.TENSOR_UNAVAILABLE, message);
  }
}
