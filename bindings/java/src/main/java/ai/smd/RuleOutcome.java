package ai.smd;

/** How one step went for one rule, for {@link InvokeOptions.ProgressListener}. */
public enum RuleOutcome {
  /** Evaluated; condition not met. */
  NOT_MET(smd_rule_outcome.SMD_RULE_NOT_MET),
  /** Evaluated; condition met (after the finding listeners). */
  CONDITION_MET(smd_rule_outcome.SMD_RULE_CONDITION_MET),
  /** Skipped: a step the job never had, or the rule's tensors were missing. */
  SKIPPED(smd_rule_outcome.SMD_RULE_SKIPPED),
  /** Waiting for the step of a running job (the rule is null). */
  WAITING(smd_rule_outcome.SMD_RULE_WAITING);

  private final int value;

  RuleOutcome(int value) {
    this.value = value;
  }

  static RuleOutcome of(int v) {
    for (RuleOutcome o : values()) {
      if (o.value == v) return o;
    }
    throw new IllegalArgumentException("unknown rule outcome " + v);
  }
}
