package ai.smd;

/** Called from the native trampolines (java.i) for an InvokeOptions' listeners. Never throws. */
final class InvokeCallbacks {
  volatile InvokeOptions.FindingListener finding;
  volatile InvokeOptions.ProgressListener progress;
  /** What a listener threw: it cancelled the invocation, and becomes its error's cause. */
  volatile Throwable thrown;

  /** 0: go on; 1: cancel. */
  int finding(long rulePtr, long findingPtr) {
    InvokeOptions.FindingListener l = finding;
    if (l == null) return 0;
    try {
      smd_rule r = new smd_rule(rulePtr, false);
      return l.onFinding(SmdNative.smd_rule_name(r), Finding.of(new SWIGTYPE_p_smd_rule_finding(findingPtr, false))) ? 0 : 1;
    } catch (Throwable t) {
      thrown = t;
      return 1;
    }
  }

  int progress(long rulePtr, long step, int outcome) {
    InvokeOptions.ProgressListener l = progress;
    if (l == null) return 0;
    try {
      String name = rulePtr == 0 ? null : SmdNative.smd_rule_name(new smd_rule(rulePtr, false));
      return l.onProgress(name, step, RuleOutcome.of(outcome)) ? 0 : 1;
    } catch (Throwable t) {
      thrown = t;
      return 1;
    }
  }
}
