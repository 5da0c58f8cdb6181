package ai.smd;

/** smdebug's RuleEvaluationConditionMet: a rule invoked with raiseEvalCond met its condition. */
public class RuleEvaluationConditionMet extends SmdException {
  public RuleEvaluationConditionMet(String message) {
    super(SmdException.RULE_CONDITION_MET, message);
  }
}
