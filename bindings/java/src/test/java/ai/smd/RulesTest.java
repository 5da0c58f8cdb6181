package ai.smd;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RulesTest {
  @TempDir Path tmp;

  /** 10 steps: weights all zero at steps >= 5, a loss that stops decreasing. */
  static Path writeRun(Path dir) throws SmdException {
    Path out = dir.resolve("rules-run");
    try (HookOptions o = new HookOptions().saveConfig(SaveConfig.every(1)).saveAll(true);
         Hook h = Hook.create(out.toString(), o)) {
      h.setMode(Mode.TRAIN);
      for (int s = 0; s < 10; ++s) {
        h.beginStep();
        float v = s < 5 ? 1 : 0;
        h.saveTensor("fc1.weight", new long[] {3}, new float[] {v, v, v}, "weights");
        h.saveScalar("loss", 1.0);
      }
    }
    return out;
  }

  @Test
  void builtinRuleFindsAllZeroWeights() throws Exception {
    Path out = writeRun(tmp);
    assertTrue(Rule.builtinNames().contains("AllZero"));
    assertNotNull(Rule.builtinSummary("AllZero"));
    assertNull(Rule.builtinSummary("NoSuchRule"));
    List<Rule.Param> params = Rule.builtinParams("AllZero");
    assertTrue(params.stream().anyMatch(p -> p.name().equals("collection_names")), params.toString());
    for (Rule.Param p : params) assertFalse(p.help().isEmpty(), p.toString());
    assertEquals(List.of(new Rule.Param("threshold", "0.0000001", params("VanishingGradient").get(0).help())),
        params("VanishingGradient"));
    assertEquals(params("VanishingGradient"), params("vanishinggradient")); // any case, defaults and help too
    List<Rule.Param> variance = params("TensorVariance");
    assertEquals(4, variance.size());
    assertEquals("max_threshold", variance.get(2).name());
    assertEquals("", variance.get(2).defaultValue()); // no default
    assertFalse(variance.get(2).help().isEmpty());
    SmdException unknown = assertThrows(SmdException.class, () -> Rule.builtinParams("NoSuchRule"));
    assertEquals(SmdException.INVALID_ARGUMENT, unknown.code());
    assertThrows(NullPointerException.class, () -> Rule.builtinParams(null));
    try (Trial t = Trial.open(out.toString());
         Rule r = Rule.builtin("AllZero", t, Map.of("tensor_regex", "fc1.*"))) {
      assertEquals("AllZero", r.name());
      assertEquals(RuleEnd.NONE, r.endReason());
      r.invoke();
      assertEquals(RuleEnd.NO_MORE_DATA, r.endReason());
      assertEquals(10, r.stepsEvaluated());
      assertEquals(5, r.conditionsMet());
      assertEquals(9, r.lastStep());
      assertEquals(0, r.stepsSkipped());
      assertEquals(-1, r.failedStep());
      List<Finding> f = r.findings();
      assertEquals(5, f.size());
      assertEquals(5, f.get(0).step());
      assertEquals("fc1.weight", f.get(0).tensor());
      assertEquals("AllZero", f.get(0).rule());
      assertEquals(0, f.get(0).trial());
      assertTrue(f.get(0).line().startsWith("SMDebugRule:AllZero fired."), f.get(0).line());
      r.clearFindings();
      assertTrue(r.findings().isEmpty());
      assertFalse(r.stopTraining());
      r.setStopTraining(true);
      assertTrue(r.stopTraining());
      Path msgs = tmp.resolve("messages.txt");
      try (InvokeOptions o = new InvokeOptions().stopAtFirst(true).messageFile(msgs.toString()).waitTimeoutMs(0)
          .waitSliceMs(10).collectFindings(true).stopTraining(false)) {
        r.invoke(0, -1, false, o);
      }
      assertEquals(RuleEnd.CONDITION_MET, r.endReason());
      assertEquals(1, r.findings().size());
      assertTrue(Files.readString(msgs).contains("AllZero"));
      RuleEvaluationConditionMet met = assertThrows(RuleEvaluationConditionMet.class, () -> r.invoke(0, -1, true, null));
      assertEquals(SmdException.RULE_CONDITION_MET, met.code());
      r.invoke(0, 3, true, null); // steps before the weights are zero: no condition met
      assertEquals(RuleEnd.STEP, r.endReason());
    }
    try (Trial t = Trial.open(out.toString())) {
      SmdException e = assertThrows(SmdException.class, () -> Rule.builtin("AllZero", t, Map.of()));
      assertEquals(SmdException.INVALID_ARGUMENT, e.code());
      assertThrows(SmdException.class, () -> Rule.builtin("AllZero", t, Map.of("tensor_regex", ".*", "bogus", "1")));
      assertThrows(SmdException.class, () -> Rule.builtin("NoSuchRule", t, null));
      assertThrows(NullPointerException.class, () -> Rule.builtin("AllZero", null, null));
    }
  }

  @Test
  void customJavaRuleRunsOnTheInvokersThread() throws Exception {
    Path out = writeRun(tmp);
    Thread caller = Thread.currentThread();
    List<Long> seen = new ArrayList<>();
    List<Long> required = new ArrayList<>();
    CustomRule zeros = new CustomRule() {
      @Override
      public boolean evaluate(RuleContext ctx, long step) throws Exception {
        assertSame(caller, Thread.currentThread());
        assertEquals("ZeroWeights", ctx.ruleName());
        assertEquals(1, ctx.trialCount());
        seen.add(step);
        try (Tensor w = ctx.trial().tensor("fc1.weight"); Value v = w.value(step)) {
          float[] a = v.toFloatArray();
          if (a[0] == 0) {
            ctx.report("fc1.weight", "all zero at step " + step);
            return true;
          }
          return false;
        }
      }

      @Override
      public void requiredTensors(RuleContext ctx, long step) throws Exception {
        required.add(step);
        ctx.requireTensor(0, "fc1.weight", step);
        ctx.requireTensorRegex(0, "^loss", step);
      }

      @Override
      public boolean declaresRequiredTensors() {
        return true;
      }
    };
    try (Trial t = Trial.open(out.toString()); Rule r = Rule.custom("ZeroWeights", t, zeros)) {
      r.invoke(0, -1, false, null);
      assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L), seen);
      assertEquals(seen, required);
      assertEquals(5, r.conditionsMet());
      assertEquals("all zero at step 5", r.findings().get(0).message());
      assertEquals("ZeroWeights", r.name());
    }
    // A rule that ends itself, and one that skips steps by throwing TensorUnavailableForStep.
    try (Trial t = Trial.open(out.toString());
         Rule ender = Rule.custom("Ender", t, (ctx, step) -> {
           if (step == 2) ctx.endRule();
           return false;
         });
         Rule skipper = Rule.custom("Skipper", t, (ctx, step) -> {
           if (step % 2 == 1) throw new TensorUnavailableForStep("odd step " + step);
           return false;
         })) {
      Rule.invokeAll(List.of(ender, skipper), 0, -1, false, null);
      assertEquals(RuleEnd.END_OF_RULE, ender.endReason());
      assertEquals(3, ender.stepsEvaluated());
      assertEquals(5, skipper.stepsSkipped());
      assertEquals(5, skipper.stepsEvaluated());
    }
  }

  @Test
  void aThrowingRuleFailsTheInvocationWithItsCause() throws Exception {
    Path out = writeRun(tmp);
    try (Trial t = Trial.open(out.toString());
         Rule boom = Rule.custom("Boom", t, (ctx, step) -> {
           if (step == 3) throw new IllegalStateException("kaput at 3");
           return false;
         });
         Rule smdErr = Rule.custom("SmdErr", t, (ctx, step) -> {
           throw new SmdException(SmdException.INVALID_ARGUMENT, "insufficient information");
         });
         Rule leak = Rule.custom("Leak", t, (ctx, step) -> {
           RuleContext[] keep = {ctx};
           return keep[0] == null;
         })) {
      SmdException e = assertThrows(SmdException.class, boom::invoke);
      assertEquals(SmdException.INTERNAL, e.code());
      assertTrue(e.getCause() instanceof IllegalStateException);
      assertEquals("kaput at 3", e.getCause().getMessage());
      // The rule's failure is the thrown exception; the rule says where it failed.
      assertTrue(e.getMessage().contains("rule Boom at step 3"), e.getMessage());
      assertTrue(e.getMessage().contains("kaput at 3"), e.getMessage());
      assertEquals(RuleEnd.ERROR, boom.endReason());
      assertEquals(3, boom.failedStep());
      SmdException e2 = assertThrows(SmdException.class, smdErr::invoke);
      assertEquals(SmdException.INVALID_ARGUMENT, e2.code());
      assertTrue(e2.getMessage().contains("insufficient information"), e2.getMessage());
      leak.invoke();
      assertThrows(NullPointerException.class, () -> Rule.custom("x", t, null));
    }
    // A context used after its callback is refused.
    RuleContext[] kept = new RuleContext[1];
    try (Trial t = Trial.open(out.toString());
         Rule r = Rule.custom("Keep", t, (ctx, step) -> {
           kept[0] = ctx;
           ctx.endRule();
           return false;
         })) {
      r.invoke();
    }
    assertThrows(IllegalStateException.class, () -> kept[0].ruleName());
    // A rule cannot be closed under its own invocation.
    try (Trial t = Trial.open(out.toString())) {
      Rule[] self = new Rule[1];
      self[0] = Rule.custom("SelfClose", t, (ctx, step) -> {
        assertThrows(IllegalStateException.class, () -> self[0].close());
        ctx.endRule();
        return false;
      });
      self[0].invoke();
      assertEquals(RuleEnd.END_OF_RULE, self[0].endReason());
      self[0].close();
      assertThrows(IllegalStateException.class, self[0]::invoke);
    }
  }

  private static List<Rule.Param> params(String rule) throws SmdException {
    return Rule.builtinParams(rule);
  }

  /** One failing rule among several: its error is the invocation's, the others are stopped. */
  @Test
  void invokeAllReportsTheFailedRuleAndStopsTheOthers() throws Exception {
    Path out = writeRun(tmp);
    List<Long> fineSteps = new ArrayList<>();
    try (Trial t = Trial.open(out.toString());
         Rule fine = Rule.custom("Fine", t, (ctx, step) -> {
           fineSteps.add(step);
           return false;
         });
         Rule broken = Rule.custom("Broken", t, (ctx, step) -> {
           if (step == 4) throw new SmdException(SmdException.CORRUPT, "cannot make sense of it");
           return false;
         })) {
      SmdException e = assertThrows(SmdException.class,
          () -> Rule.invokeAll(List.of(fine, broken), 0, -1, false, null));
      assertEquals(SmdException.CORRUPT, e.code());
      assertTrue(e.getMessage().contains("rule Broken at step 4"), e.getMessage());
      assertTrue(e.getMessage().contains("cannot make sense of it"), e.getMessage());
      assertEquals(RuleEnd.ERROR, broken.endReason());
      assertEquals(4, broken.failedStep());
      assertEquals(RuleEnd.STOPPED, fine.endReason());
      assertEquals(-1, fine.failedStep());
      assertTrue(fineSteps.size() <= 5 && !fineSteps.contains(5L), fineSteps.toString()); // not past the failure

      // Invoked again without the failure, both finish normally and the failure is gone.
      Rule.invokeAll(List.of(fine), 0, -1, false, null);
      assertEquals(RuleEnd.NO_MORE_DATA, fine.endReason());
      assertEquals(-1, fine.failedStep());
      assertEquals(RuleEnd.ERROR, broken.endReason()); // not invoked: unchanged
      assertEquals(4, broken.failedStep());
    }
  }

  @Test
  void rulesOverTwoTrials() throws Exception {
    Path a = writeRun(tmp.resolve("a"));
    Path b = writeRun(tmp.resolve("b"));
    try (Trial ta = Trial.open(a.toString()); Trial tb = Trial.open(b.toString());
         Rule r = Rule.custom("Compare", ta, (ctx, step) -> {
           assertEquals(2, ctx.trialCount());
           try (Tensor x = ctx.trial(0).tensor("fc1.weight"); Tensor y = ctx.trial(1).tensor("fc1.weight");
                Value vx = x.value(step); Value vy = y.value(step)) {
             if (vx.toFloatArray()[0] != vy.toFloatArray()[0]) {
               ctx.report(1, "fc1.weight", "differs");
               return true;
             }
             return false;
           }
         }, tb)) {
      r.invoke();
      assertEquals(0, r.conditionsMet());
      assertEquals(10, r.stepsEvaluated());
    }
    // A built-in rule over two trials, and a context's trial index out of range.
    try (Trial ta = Trial.open(a.toString()); Trial tb = Trial.open(b.toString());
         Rule similar = Rule.builtin("SimilarAcrossRuns", ta, Map.of("include_regex", "fc1.*"), tb);
         Rule bad = Rule.custom("Bad", ta, (ctx, step) -> {
           assertThrows(IndexOutOfBoundsException.class, () -> ctx.trial(5));
           ctx.endRule();
           return false;
         })) {
      similar.invoke();
      assertEquals(0, similar.conditionsMet(), similar.findings().toString());
      assertTrue(similar.stepsEvaluated() > 0);
      bad.invoke();
      assertEquals(RuleEnd.END_OF_RULE, bad.endReason());
    }
  }

  @Test
  void invokeListenersSeeFindingsAndProgressAndCanCancel() throws Exception {
    Path out = writeRun(tmp);
    Thread caller = Thread.currentThread();
    List<String> seen = new ArrayList<>();
    List<RuleOutcome> outcomes = new ArrayList<>();
    try (Trial t = Trial.open(out.toString());
         Rule r = Rule.builtin("AllZero", t, Map.of("tensor_regex", "fc1.*"));
         InvokeOptions o = new InvokeOptions()
             .onFinding((rule, f) -> {
               assertSame(caller, Thread.currentThread());
               seen.add(rule + "@" + f.step() + ":" + f.tensor());
               return true;
             })
             .onProgress((rule, step, outcome) -> {
               if (rule != null) outcomes.add(outcome);
               return true;
             })) {
      r.invoke(0, -1, false, o);
      assertEquals(List.of("AllZero@5:fc1.weight", "AllZero@6:fc1.weight", "AllZero@7:fc1.weight",
          "AllZero@8:fc1.weight", "AllZero@9:fc1.weight"), seen);
      assertEquals(10, outcomes.size());
      assertEquals(RuleOutcome.NOT_MET, outcomes.get(0));
      assertEquals(RuleOutcome.CONDITION_MET, outcomes.get(5));
      // A listener answering false cancels; one that throws cancels with its exception as cause.
      o.onFinding((rule, f) -> false);
      SmdException e = assertThrows(SmdException.class, () -> r.invoke(0, -1, false, o));
      assertEquals(SmdException.CANCELLED, e.code());
      // A cancellation is not the rule's failure: it stopped unfinished.
      assertEquals(RuleEnd.STOPPED, r.endReason());
      assertEquals(-1, r.failedStep());
      o.onFinding(null);
      o.onProgress((rule, step, outcome) -> {
        if (step == 2) throw new IllegalArgumentException("stop at 2");
        return true;
      });
      SmdException e2 = assertThrows(SmdException.class, () -> r.invoke(0, -1, false, o));
      assertEquals(SmdException.CANCELLED, e2.code());
      assertTrue(e2.getCause() instanceof IllegalArgumentException);
      assertEquals(2, r.lastStep());
      o.onProgress(null);
      r.invoke(0, -1, false, o);
      assertEquals(RuleEnd.NO_MORE_DATA, r.endReason());
    }
    InvokeOptions closed = new InvokeOptions();
    closed.close();
    assertThrows(IllegalStateException.class, () -> closed.onFinding((r, f) -> true));
  }

  /**
   * Options closed by their own listener during the invocation would be freed while smd uses them
   * (a JVM fatal error): close() is refused until the invocation returns, for invoke and invokeAll.
   */
  @Test
  void invokeOptionsCannotBeClosedDuringTheirInvocation() throws Exception {
    Path out = writeRun(tmp);
    try (Trial t = Trial.open(out.toString()); Rule r = Rule.custom("R", t, (ctx, step) -> false)) {
      InvokeOptions[] o = new InvokeOptions[1];
      List<Throwable> refused = new ArrayList<>();
      o[0] = new InvokeOptions().waitTimeoutMs(0).onProgress((rule, step, outcome) -> {
        if (step == 1) {
          try {
            o[0].close();
          } catch (IllegalStateException e) {
            refused.add(e);
          }
          System.gc();
        }
        return true;
      });
      r.invoke(0, -1, false, o[0]);
      assertEquals(1, refused.size());
      assertFalse(o[0].isClosed());
      assertEquals(10, r.stepsEvaluated());
      Rule.invokeAll(List.of(r), 0, -1, false, o[0]);
      assertEquals(2, refused.size());
      assertEquals(20, r.stepsEvaluated()); // counted over both invocations
      o[0].close(); // once no invocation uses them
      assertTrue(o[0].isClosed());
      assertThrows(IllegalStateException.class, () -> r.invoke(0, -1, false, o[0]));
      assertThrows(IllegalStateException.class, () -> Rule.invokeAll(List.of(r), 0, -1, false, o[0]));
      r.invoke(0, -1, false, null); // the rule was left usable
    }
  }

  /**
   * The other trials of a rule reach smd as raw pointers: a Trial only the varargs array holds
   * must stay reachable until the rule has its own reference, or the Cleaner may free it in
   * between (a JVM crash). A child JVM whose Rule.custom is compiled (its arguments' liveness is
   * then exact) collects garbage from inside that window: CustomRule.declaresRequiredTensors() is
   * called after the trials became pointers and before the rule is made.
   */
  @Test
  void otherTrialsStayReachableWhileTheRuleIsMade() throws Exception {
    Path out = writeRun(tmp);
    String output = ChildJvm.run(tmp.resolve("reachable.log"), List.of("-Xbatch"), CollectsWhileMakingRules.class,
        out.toString());
    assertTrue(output.contains("the other trial stayed reachable"), output);
  }

  /** Makes rules over the trial args[0] with another trial, collecting garbage while they are made. */
  public static final class CollectsWhileMakingRules {
    private static WeakReference<Trial> other;
    private static boolean collected;

    private static Trial openOther(String dir) throws SmdException {
      Trial t = Trial.open(dir);
      other = new WeakReference<>(t);
      return t;
    }

    /** The other trial is reachable only through the varargs array of Rule.custom. */
    private static Rule make(Trial base, CustomRule rule, String dir) throws SmdException {
      return Rule.custom("R", base, rule, openOther(dir));
    }

    public static void main(String[] args) throws Exception {
      String dir = args[0];
      try (Trial base = Trial.open(dir)) {
        CustomRule plain = (ctx, step) -> false;
        for (int i = 0; i < 12_000; ++i) make(base, plain, dir).close(); // compiled by now (-Xbatch)
        CustomRule collecting = new CustomRule() {
          @Override
          public boolean evaluate(RuleContext ctx, long step) {
            return false;
          }

          @Override
          public boolean declaresRequiredTensors() {
            for (int i = 0; i < 20 && !collected; ++i) {
              System.gc();
              collected = other.get() == null;
            }
            return false;
          }
        };
        for (int i = 0; i < 5 && !collected; ++i) make(base, collecting, dir).close();
        if (collected) {
          System.out.println("the other trial was collected while the rule was made");
          System.exit(1);
        }
        System.out.println("the other trial stayed reachable");
      }
    }
  }
}
