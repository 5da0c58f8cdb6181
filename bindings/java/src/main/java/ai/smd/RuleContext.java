package ai.smd;

/** What a {@link CustomRule} may do during its callback. Invalid after the callback returns. */
public final class RuleContext {
  private final smd_rule_context ctx;
  private boolean valid = true;

  RuleContext(smd_rule_context ctx) {
    this.ctx = ctx;
  }

  private smd_rule_context c() {
    if (!valid) throw new IllegalStateException("a RuleContext is valid only during its callback");
    return ctx;
  }

  void invalidate() {
    valid = false;
  }

  smd_rule_context raw() {
    return c();
  }

  public String ruleName() {
    return SmdNative.smd_rule_context_rule_name(c());
  }

  /** 1 (the base trial) + the other trials. */
  public int trialCount() {
    return (int) SmdNative.smd_rule_context_trial_count(c());
  }

  /** Trial i (0: the base trial), owned by the rule: valid as long as the rule; do not close. */
  public Trial trial(int index) {
    smd_trial t = SmdNative.smd_java_rule_context_trial(c(), index);
    if (t == null) throw new IndexOutOfBoundsException("trial index " + index + " of " + trialCount());
    return Trial.borrowed(t);
  }

  /** The base trial. */
  public Trial trial() {
    return trial(0);
  }

  /** Adds a finding (delivered if the callback answers "condition met"). */
  public void report(int trialIndex, String tensor, String message) throws SmdException {
    if (message == null) throw new NullPointerException("message is null");
    SmdNative.smd_rule_context_report(c(), trialIndex, tensor, message);
  }

  /** Adds a finding about a tensor of the base trial. */
  public void report(String tensor, String message) throws SmdException {
    report(0, tensor, message);
  }

  /** From {@link CustomRule#requiredTensors} only: tensor {@code name} of a trial at these steps. */
  public void requireTensor(int trialIndex, String name, long... steps) throws SmdException {
    if (name == null) throw new NullPointerException("tensor name is null");
    SmdNative.smd_rule_context_require_tensor(c(), trialIndex, name, false, steps == null ? new long[0] : steps);
  }

  /** The same for every tensor whose name the regex matches. */
  public void requireTensorRegex(int trialIndex, String regex, long... steps) throws SmdException {
    if (regex == null) throw new NullPointerException("regex is null");
    SmdNative.smd_rule_context_require_tensor(c(), trialIndex, regex, true, steps == null ? new long[0] : steps);
  }

  /** The rule needs no more steps after this one. */
  public void endRule() {
    SmdNative.smd_rule_context_end_rule(c());
  }
}
