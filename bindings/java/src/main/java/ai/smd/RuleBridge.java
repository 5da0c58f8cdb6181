package ai.smd;

/** Called from the native trampolines (java.i) for a custom rule. Never throws. */
final class RuleBridge {
  private final CustomRule rule;
  /** The last exception a callback threw, attached as the cause of the invocation's error. */
  volatile Throwable thrown;

  RuleBridge(CustomRule rule) {
    this.rule = rule;
  }

  /** 1: met, 0: not met, -1: failed (the error was handed to smd). */
  int invoke(long ctxPtr, long step) {
    RuleContext ctx = new RuleContext(new smd_rule_context(ctxPtr, false));
    try {
      return rule.evaluate(ctx, step) ? 1 : 0;
    } catch (Throwable t) {
      return fail(ctx, t);
    } finally {
      ctx.invalidate();
    }
  }

  int required(long ctxPtr, long step) {
    RuleContext ctx = new RuleContext(new smd_rule_context(ctxPtr, false));
    try {
      rule.requiredTensors(ctx, step);
      return 0;
    } catch (Throwable t) {
      return fail(ctx, t);
    } finally {
      ctx.invalidate();
    }
  }

  private int fail(RuleContext ctx, Throwable t) {
    int code = t instanceof SmdException ? ((SmdException) t).code() : SmdException.INTERNAL;
    if (!SmdNative.smd_code_skips_rule_step(code)) { // the C library's policy: these codes skip the step
      thrown = t;
    }
    String msg = t.getMessage() != null ? t.getMessage() : t.toString();
    if (!(t instanceof SmdException)) msg = "the Java rule threw " + t;
    SmdNative.smd_java_rule_context_fail_with(ctx.raw(), code, msg);
    return -1;
  }
}
