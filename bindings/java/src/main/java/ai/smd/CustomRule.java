package ai.smd;

/**
 * A rule written in Java (smdebug's Rule subclass). Called on the thread that runs
 * {@link Rule#invoke}, once per global step.
 *
 * <p>Throwing {@link TensorUnavailableForStep}, {@link TensorUnavailable} or
 * {@link StepUnavailable} (as the trial's methods do) skips the step, as smdebug does; any other
 * exception ends the invocation, and {@link Rule#invoke} throws an {@link SmdException} of the
 * same code (INTERNAL for exceptions that are not SmdExceptions) with the original as its cause.
 */
@FunctionalInterface
public interface CustomRule {
  /**
   * smdebug's invoke_at_step: whether the condition is met at {@code step}. Explain a met
   * condition with {@link RuleContext#report}.
   */
  boolean evaluate(RuleContext ctx, long step) throws Exception;

  /**
   * smdebug's required tensors: declare with {@link RuleContext#requireTensor} what the rule reads
   * at {@code step}, so that the invoker waits for those steps first. Optional.
   */
  default void requiredTensors(RuleContext ctx, long step) throws Exception {}

  /** Whether {@link #requiredTensors} is implemented (the invoker then calls it). */
  default boolean declaresRequiredTensors() {
    return false;
  }
}
