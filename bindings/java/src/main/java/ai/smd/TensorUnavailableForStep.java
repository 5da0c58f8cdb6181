package ai.smd;

/** smdebug's TensorUnavailableForStep: the step exists but this tensor (or the asked part of it) was not saved there. */
public class TensorUnavailableForStep extends SmdException {
  public TensorUnavailableForStep(String message) {
    super(SmdException.TENSOR_UNAVAILABLE_FOR_STEP, message);
  }
}
