package ai.smd;

/** smdebug's ShapeUnavailableForStep: neither a shape nor a value was saved at that step. */
public class ShapeUnavailableForStep extends SmdException {
  public ShapeUnavailableForStep(String message) {
    super(SmdException.SHAPE_UNAVAILABLE_FOR_STEP, message);
  }
}
