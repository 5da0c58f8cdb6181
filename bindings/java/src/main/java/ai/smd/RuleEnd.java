package ai.smd;

/** Why the last invocation of a rule stopped evaluating it. */
public enum RuleEnd {
  /** Not invoked yet. */
  NONE,
  /** Reached the end step. */
  STEP,
  /** The job ended (smdebug's NoMoreData): a normal end. */
  NO_MORE_DATA,
  /** The rule said it needs no more steps. */
  END_OF_RULE,
  /** The condition was met and raised, or stop-at-first. */
  CONDITION_MET,
  /** The invocation failed. */
  ERROR;

  static RuleEnd of(int v) {
    return values()[v];
  }
}
