package ai.smd;

/** How one step went for one rule, for {@link InvokeOptions.ProgressListener}. */
public enum RuleOutcome {
  /** Evaluated; condition not met. */
  NOT_MET,
  /** Evaluated; condition met (after the finding listeners). */
  CONDITION_MET,
  /** Skipped: a step the job never had, or the rule's tensors were missing. */
  SKIPPED,
  /** Waiting for the step of a running job (the rule is null). */
  WAITING;

  static RuleOutcome of(int v) {
    return values()[v];
  }
}
