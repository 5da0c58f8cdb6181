package ai.smd;

/** Why the last invocation of a rule stopped evaluating it. */
public enum RuleEnd {
  /** Not invoked yet. */
  NONE(smd_rule_end.SMD_RULE_END_NONE),
  /** Reached the end step. */
  STEP(smd_rule_end.SMD_RULE_END_STEP),
  /** The job ended (smdebug's NoMoreData): a normal end. */
  NO_MORE_DATA(smd_rule_end.SMD_RULE_END_NO_MORE_DATA),
  /** The rule said it needs no more steps. */
  END_OF_RULE(smd_rule_end.SMD_RULE_END_OF_RULE),
  /** The condition was met and raised, or stop-at-first. */
  CONDITION_MET(smd_rule_end.SMD_RULE_END_CONDITION_MET),
  /**
   * The rule failed: the exception its invocation threw is its own (or its trial's), at
   * {@link Rule#failedStep()}.
   */
  ERROR(smd_rule_end.SMD_RULE_END_ERROR),
  /**
   * Stopped unfinished, without failing: another rule of the invocation failed or raised its
   * condition, a listener cancelled, or a wait timed out.
   */
  STOPPED(smd_rule_end.SMD_RULE_END_STOPPED);

  private final int value;

  RuleEnd(int value) {
    this.value = value;
  }

  static RuleEnd of(int v) {
    for (RuleEnd e : values()) {
      if (e.value == v) return e;
    }
    throw new IllegalArgumentException("unknown rule end " + v);
  }
}
