package ai.smd;

/**
 * One reason a rule's condition was met: the rule, the global step, the tensor ("" when no single
 * tensor), which trial (0 the base trial), why, and smdebug's one-line notification text.
 */
public record Finding(String rule, long step, String tensor, long trial, String message, String line) {
  static Finding of(SWIGTYPE_p_smd_rule_finding f) {
    return new Finding(SmdNative.smd_rule_finding_rule(f), SmdNative.smd_rule_finding_step(f),
        SmdNative.smd_rule_finding_tensor(f), SmdNative.smd_rule_finding_trial(f),
        SmdNative.smd_rule_finding_message(f), SmdNative.smd_rule_finding_line(f));
  }
}
