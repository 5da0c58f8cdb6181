package ai.smd;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A rule evaluated step after step on a base trial (and possibly other trials): a built-in
 * SageMaker rule configured by name with string parameters, or a {@link CustomRule} written in
 * Java. {@link #invoke} is smdebug's invoke_rule. Used by one thread at a time.
 */
public final class Rule extends NativeObject<smd_rule> implements AutoCloseable {
  /** A parameter of a built-in rule: its name, its default ("" for none) and what it means. */
  public record Param(String name, String defaultValue, String help) {}

  private final RuleBridge bridge;
  /** Invocations in progress: the rule cannot be freed under them (e.g. from its own callback). */
  private int invoking;

  private Rule(long ptr, long payload, RuleBridge bridge) {
    super(new smd_rule(ptr, false), ptr, payload == 0 ? SmdNativeJNI::delete_smd_rule : p -> {
      SmdNativeJNI.delete_smd_rule(p);
      SmdNative.smd_java_rule_release(payload);
    });
    this.bridge = bridge;
  }

  /**
   * The other trials' pointers. Only raw pointers cross, so the caller keeps {@code others}
   * reachable ({@link Reference#reachabilityFence}) until the native call has taken its own
   * references: otherwise the Cleaner may free a trial in between.
   */
  private static long[] ptrs(Trial[] others) {
    long[] r = new long[others == null ? 0 : others.length];
    for (int i = 0; i < r.length; ++i) {
      requireNonNull(others[i], "other trial");
      r[i] = smd_trial.getCPtr(others[i].p());
    }
    return r;
  }

  /**
   * Built-in rule {@code name} ("VanishingGradient", "LossNotDecreasing", ...) on {@code base}
   * and {@code others}, with parameters as SageMaker passes them ("threshold" = "0.0001",
   * booleans "True"/"False", lists comma-separated). Missing parameters take their defaults.
   */
  public static Rule builtin(String name, Trial base, Map<String, String> params, Trial... others)
      throws SmdException {
    requireNonNull(name, "rule name");
    requireNonNull(base, "base trial");
    Map<String, String> ps = params == null ? Map.of() : params;
    String[] keys = new String[ps.size()];
    String[] values = new String[ps.size()];
    int i = 0;
    for (Map.Entry<String, String> e : ps.entrySet()) {
      keys[i] = e.getKey();
      values[i] = e.getValue() == null ? "" : e.getValue();
      ++i;
    }
    long[] out = new long[1];
    try {
      SmdNative.smd_java_rule_create_builtin(name, base.p(), ptrs(others), keys, values, out);
    } finally {
      Reference.reachabilityFence(others);
    }
    return new Rule(out[0], 0, null);
  }

  /** A custom rule named {@code name} whose condition {@code rule} evaluates. */
  public static Rule custom(String name, Trial base, CustomRule rule, Trial... others) throws SmdException {
    requireNonNull(name, "rule name");
    requireNonNull(base, "base trial");
    requireNonNull(rule, "rule");
    RuleBridge bridge = new RuleBridge(rule);
    long[] out = new long[1];
    long[] payload = new long[1];
    try {
      SmdNative.smd_java_rule_create(name, base.p(), ptrs(others), bridge, rule.declaresRequiredTensors(), out,
          payload);
    } finally {
      Reference.reachabilityFence(others);
    }
    return new Rule(out[0], payload[0], bridge);
  }

  /** Every step from the first until the job ends, no raise, default options. */
  public void invoke() throws SmdException {
    invoke(0, -1, false, null);
  }

  /**
   * Evaluates the rule at every global step {@code startStep <= step < endStep} ({@code endStep}
   * &lt; 0: until the job ends). With {@code raiseEvalCond}, a met condition throws
   * {@link RuleEvaluationConditionMet}. {@code options} may be null. While the rule evaluates a
   * step, its trials do not refresh on this thread (smdebug's no_refresh; other threads reading
   * them still do), so the rule sees one consistent state. A failure of the rule is the thrown
   * {@link SmdException}, and {@link #endReason()} / {@link #failedStep()} say where it stopped.
   */
  public void invoke(long startStep, long endStep, boolean raiseEvalCond, InvokeOptions options)
      throws SmdException {
    if (bridge != null) bridge.thrown = null;
    smd_rule r = enter();
    smd_rule_invoke_options o = null;
    try {
      if (options != null) {
        o = options.enter();
        options.callbacks.thrown = null;
      }
      SmdNative.smd_rule_invoke(r, startStep, endStep, raiseEvalCond, o);
    } catch (SmdException e) {
      attachCause(e, this);
      attachCause(e, options);
      throw e;
    } finally {
      if (o != null) options.leave();
      leave();
    }
  }

  private static void attachCause(SmdException e, InvokeOptions o) {
    if (o != null && o.callbacks.thrown != null && e.getCause() == null) {
      e.initCause(o.callbacks.thrown);
      o.callbacks.thrown = null;
    }
  }

  private static void attachCause(SmdException e, Rule r) {
    if (r.bridge != null && r.bridge.thrown != null && e.getCause() == null) {
      e.initCause(r.bridge.thrown);
      r.bridge.thrown = null;
    }
  }

  /**
   * Several rules over one base trial, stepping through it once. When one rule fails, the
   * invocation throws that rule's error: its {@link #endReason()} is {@link RuleEnd#ERROR} at
   * {@link #failedStep()}, and the rules it stopped unfinished say {@link RuleEnd#STOPPED}.
   */
  public static void invokeAll(List<Rule> rules, long startStep, long endStep, boolean raiseEvalCond,
                               InvokeOptions options) throws SmdException {
    requireNonNull(rules, "rules");
    long[] ps = new long[rules.size()];
    List<smd_rule> keep = new ArrayList<>();
    List<Rule> entered = new ArrayList<>();
    smd_rule_invoke_options o = null;
    try {
      for (int i = 0; i < ps.length; ++i) {
        Rule r = rules.get(i);
        requireNonNull(r, "rule");
        smd_rule p = r.enter();
        entered.add(r);
        keep.add(p);
        ps[i] = smd_rule.getCPtr(p);
        if (r.bridge != null) r.bridge.thrown = null;
      }
      if (options != null) {
        o = options.enter();
        options.callbacks.thrown = null;
      }
      SmdNative.smd_java_rule_invoke_many(ps, startStep, endStep, raiseEvalCond, o);
    } catch (SmdException e) {
      for (Rule r : rules) attachCause(e, r);
      attachCause(e, options);
      throw e;
    } finally {
      if (o != null) options.leave();
      for (Rule r : entered) r.leave();
      Reference.reachabilityFence(keep);
    }
  }

  private synchronized smd_rule enter() {
    smd_rule r = p();
    ++invoking;
    return r;
  }

  private synchronized void leave() {
    --invoking;
  }

  public String name() {
    return SmdNative.smd_rule_name(p());
  }

  /** Whether the rule raises the stop-training signal when it fires. */
  public boolean stopTraining() {
    return SmdNative.smd_rule_stop_training(p());
  }

  public void setStopTraining(boolean on) throws SmdException {
    SmdNative.smd_rule_set_stop_training(p(), on);
  }

  /** The findings collected so far, oldest first. */
  public List<Finding> findings() {
    smd_rule r = p();
    long n = SmdNative.smd_rule_findings_count(r);
    List<Finding> out = new ArrayList<>();
    for (long i = 0; i < n; ++i) {
      out.add(Finding.of(SmdNative.smd_java_rule_finding_at(r, i)));
    }
    return Collections.unmodifiableList(out);
  }

  /** Forgets the collected findings (the counts are kept). */
  public void clearFindings() {
    SmdNative.smd_rule_findings_clear(p());
  }

  public long stepsEvaluated() {
    return SmdNative.smd_rule_steps_evaluated(p());
  }

  public long stepsSkipped() {
    return SmdNative.smd_rule_steps_skipped(p());
  }

  public long conditionsMet() {
    return SmdNative.smd_rule_conditions_met(p());
  }

  /** The last step evaluated or skipped; -1 if none. */
  public long lastStep() {
    return SmdNative.smd_rule_last_step(p());
  }

  public RuleEnd endReason() {
    return RuleEnd.of(SmdNative.smd_rule_end_reason(p()));
  }

  /**
   * The step at which the rule failed in its last invocation ({@link #endReason()} is
   * {@link RuleEnd#ERROR}), -1 otherwise. How it failed is the {@link SmdException} that
   * invocation threw (its message names the rule and the step): the rule keeps no error.
   */
  public long failedStep() {
    return SmdNative.smd_rule_failed_step(p());
  }

  /** The names of the built-in rules. */
  public static List<String> builtinNames() throws SmdException {
    Native.load();
    String[][] out = new String[1][];
    SmdNative.smd_rule_builtin_names(out);
    return List.of(out[0]);
  }

  /**
   * A built-in rule's parameters in documentation order (the name as {@link #builtin} takes it,
   * any case). Throws {@link SmdException} (INVALID_ARGUMENT) for an unknown rule.
   */
  public static List<Param> builtinParams(String name) throws SmdException {
    requireNonNull(name, "rule name");
    Native.load();
    String[][] names = new String[1][];
    SmdNative.smd_rule_builtin_params(name, names);
    List<Param> r = new ArrayList<>();
    for (String p : names[0]) {
      String d = SmdNative.smd_rule_builtin_param_default(name, p);
      String h = SmdNative.smd_rule_builtin_param_help(name, p);
      r.add(new Param(p, d == null ? "" : d, h == null ? "" : h));
    }
    return Collections.unmodifiableList(r);
  }

  /** A one-line description of a built-in rule, or null for an unknown name. */
  public static String builtinSummary(String name) {
    requireNonNull(name, "rule name");
    Native.load();
    return SmdNative.smd_rule_builtin_summary(name);
  }

  /** Frees the rule. Throws {@link IllegalStateException} while it is being invoked. */
  @Override
  public synchronized void close() {
    if (invoking > 0) throw new IllegalStateException("rule " + name() + " is being invoked; close it afterwards");
    release();
  }
}
