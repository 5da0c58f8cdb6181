package ai.smd;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input gives Java exceptions (checked smdebug-named ones for smd's errors), never a crash. */
class ErrorsTest {
  @TempDir Path tmp;

  @Test
  void smdebugExceptionsCarryTheirCodes() throws Exception {
    Path out = HookTrialTest.writeTrial(tmp);
    try (Trial t = Trial.open(out.toString())) {
      TensorUnavailable tu = assertThrows(TensorUnavailable.class, () -> t.tensor("no/such/tensor"));
      assertEquals(SmdException.TENSOR_UNAVAILABLE, tu.code());
      assertTrue(tu.getMessage().contains("no/such/tensor"), tu.getMessage());
      assertTrue(tu.toString().contains("SMD_E_TENSOR_UNAVAILABLE"), tu.toString());
      try (Tensor w = t.tensor("direct")) {
        // step 4 is an EVAL step where "direct" was not saved
        TensorUnavailableForStep e = assertThrows(TensorUnavailableForStep.class, () -> w.value(4));
        assertEquals(SmdException.TENSOR_UNAVAILABLE_FOR_STEP, e.code());
        assertThrows(StepUnavailable.class, () -> w.value(100));
        assertThrows(InvalidWorker.class, () -> w.value(0, Mode.GLOBAL, "worker_9"));
        assertThrows(SmdException.class, () -> w.reductionValue(0, Mode.GLOBAL, null, "not_a_reduction"));
        assertThrows(TensorUnavailableForStep.class, () -> w.shape(4, Mode.GLOBAL, null));
        assertThrows(TensorUnavailableForStep.class, () -> w.workers(4, Mode.GLOBAL));
        // wrong dtype for a typed copy
        try (Value v = w.value(0)) {
          assertThrows(IllegalStateException.class, v::toLongArray);
          assertThrows(IllegalStateException.class, v::toDoubleArrayExact);
          assertThrows(IllegalStateException.class, v::toIntArray);
          assertThrows(IllegalStateException.class, v::strings);
          assertThrows(SmdException.class, () -> v.getDouble(99));
          assertThrows(SmdException.class, () -> v.stringBytes(0));
        }
      }
      assertThrows(NoMoreData.class, () -> t.waitForSteps(new long[] {50}, Mode.GLOBAL, 0));
      assertThrows(SmdException.class, () -> t.tensorNames("(unclosed"));
      assertThrows(SmdException.class, () -> t.tensorNames(new TensorFilter().regex("a").collection("b")));
      assertThrows(SmdException.class, () -> t.collection("no_such_collection"));
      assertThrows(SmdException.class, () -> t.mode(77));
    }
    SmdException nf = assertThrows(SmdException.class, () -> Trial.open(tmp.resolve("missing").toString()));
    assertEquals(SmdException.NOT_FOUND, nf.code());
    Files.createDirectories(tmp.resolve("empty"));
    assertThrows(MissingCollectionFiles.class, () -> Trial.open(tmp.resolve("empty").toString()));
  }

  @Test
  void everyCodeMapsToItsClass() {
    Object[][] cases = {
        {SmdException.TENSOR_UNAVAILABLE_FOR_STEP, TensorUnavailableForStep.class},
        {SmdException.TENSOR_UNAVAILABLE, TensorUnavailable.class},
        {SmdException.STEP_UNAVAILABLE, StepUnavailable.class},
        {SmdException.STEP_NOT_YET_AVAILABLE, StepNotYetAvailable.class},
        {SmdException.NO_MORE_DATA, NoMoreData.class},
        {SmdException.MISSING_COLLECTION_FILES, MissingCollectionFiles.class},
        {SmdException.SHAPE_UNAVAILABLE_FOR_STEP, ShapeUnavailableForStep.class},
        {SmdException.INVALID_WORKER, InvalidWorker.class},
        {SmdException.RULE_CONDITION_MET, RuleEvaluationConditionMet.class},
        {SmdException.IO, SmdException.class},
    };
    for (Object[] c : cases) {
      SmdException e = SmdException.fromNative((Integer) c[0], "m\u00fc".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      assertEquals(c[1], e.getClass());
      assertEquals((int) (Integer) c[0], e.code());
      assertEquals("m\u00fc", e.getMessage());
      assertTrue(e.codeName().startsWith("SMD_E_"), e.codeName());
    }
  }

  @Test
  void constantsAndTheRuleSkipPolicyAreTheCLibrarys() throws Exception {
    // every public code constant is named, by the C library, after the constant itself
    int n = 0;
    for (java.lang.reflect.Field f : SmdException.class.getFields()) {
      if (f.getType() != int.class) continue;
      assertEquals("SMD_E_" + f.getName(), SmdException.of(f.getInt(null), "m").codeName());
      n++;
    }
    assertEquals(21, n);
    assertEquals("SMD_E_UNKNOWN(99)", Smd.codeName(99));
    for (DType d : DType.values()) {
      assertEquals(d, DType.fromName(d.numpyName()));
    }
    assertEquals(4, DType.FLOAT32.size());
    assertEquals(2, DType.BFLOAT16.size());
    assertEquals(0, DType.STRING.size());
    // the codes that make a rule skip a step: asked of the C library (the bridge does the same)
    for (int c = 0; c <= SmdException.AUTH; c++) {
      boolean skips = c == SmdException.TENSOR_UNAVAILABLE_FOR_STEP
          || c == SmdException.TENSOR_UNAVAILABLE || c == SmdException.STEP_UNAVAILABLE;
      assertEquals(skips, SmdNative.smd_code_skips_rule_step(c), "code " + c);
    }
  }

  @Test
  void badArgumentsAreJavaExceptions() throws Exception {
    try (Hook h = Hook.create(tmp.resolve("bad").toString())) {
      h.beginStep();
      assertThrows(NullPointerException.class, () -> h.saveTensor(null, new long[] {1}, new float[] {1}));
      assertThrows(NullPointerException.class, () -> h.saveTensor("x", null, new float[] {1}));
      assertThrows(NullPointerException.class, () -> h.saveTensor("x", new long[] {1}, (float[]) null));
      assertThrows(NullPointerException.class, () -> h.saveTensor("x", new long[] {1}, new float[] {1}, "a", null));
      assertThrows(IllegalArgumentException.class, () -> h.saveTensor("x", new long[] {2, 2}, new float[] {1, 2, 3}));
      assertThrows(IllegalArgumentException.class, () -> h.saveTensor("x", new long[] {-1}, new double[] {}));
      assertThrows(IllegalArgumentException.class, () -> h.saveTensor("x", new long[] {3}, new long[] {1}));
      assertThrows(IllegalArgumentException.class, () -> h.saveTensor("x", new long[] {3}, new int[] {1}));
      assertThrows(IllegalArgumentException.class, () -> h.saveTensor("x", new long[] {3}, new boolean[] {true}));
      assertThrows(IllegalArgumentException.class,
          () -> h.saveTensor("x", DType.FLOAT32, new long[] {1}, ByteBuffer.allocate(4)), "heap buffer");
      assertThrows(IllegalArgumentException.class,
          () -> h.saveTensor("x", DType.FLOAT64, new long[] {1}, ByteBuffer.allocateDirect(4)), "too small");
      assertThrows(IllegalArgumentException.class,
          () -> h.saveTensor("x", DType.STRING, new long[] {1}, ByteBuffer.allocateDirect(4)));
      assertThrows(IllegalArgumentException.class, () -> h.saveTensor("bad\u0000name", new long[] {1}, new float[] {1}));
      SmdException e = assertThrows(SmdException.class, () -> h.saveTensor("x", new long[] {1}, new float[] {1}, ""));
      assertEquals(SmdException.INVALID_ARGUMENT, e.code());
      SmdException e2 = assertThrows(SmdException.class, () -> h.saveTensor("", new long[] {1}, new float[] {1}));
      assertEquals(SmdException.INVALID_ARGUMENT, e2.code());
      assertThrows(NullPointerException.class, () -> h.saveStrings("s", null));
      assertThrows(NullPointerException.class, () -> h.saveStrings("s", java.util.Arrays.asList("a", null)));
      assertThrows(NullPointerException.class, () -> h.setMode(null));
      assertThrows(SmdException.class, () -> h.setMode(Mode.ALL));
      assertThrows(NullPointerException.class, () -> h.collection(null));
      assertThrows(SmdException.class, () -> h.collection(""));
      assertThrows(NullPointerException.class, () -> h.isDue(null));
    }
  }

  /** A shape whose element or byte count overflows a long is an IllegalArgumentException naming it. */
  @Test
  void overflowingShapesAreIllegalArguments() throws Exception {
    try (Hook h = Hook.create(tmp.resolve("overflow").toString())) {
      h.beginStep();
      ByteBuffer b = ByteBuffer.allocateDirect(8);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> h.saveTensor("x", DType.FLOAT32, new long[] {Long.MAX_VALUE, 2}, b));
      assertTrue(e.getMessage().contains("[9223372036854775807, 2]"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class,
          () -> h.saveTensor("x", DType.FLOAT64, new long[] {1L << 61}, b), "elements fit, bytes do not");
      assertTrue(e.getMessage().contains("[2305843009213693952]"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class,
          () -> h.saveTensor("x", new long[] {1L << 32, 1L << 32}, new float[] {1}));
      assertTrue(e.getMessage().contains("[4294967296, 4294967296]"), e.getMessage());
      h.saveTensor("x", DType.FLOAT32, new long[] {2}, b); // the buffer itself is fine
    }
  }

  /**
   * A call that fails (an SmdException from smd, or an argument refused after others were
   * converted) frees the arguments converted for it: names longer than the stack buffer, long
   * step arrays, collection names. Each loop leaked 80 MB or more (in a child JVM whose Java
   * heap cannot grow).
   */
  @Test
  void failingCallsFreeTheirConvertedArguments() throws Exception {
    ChildJvm.assumeProcStatus();
    Path out = HookTrialTest.writeTrial(tmp);
    String output = ChildJvm.run(tmp.resolve("failing.log"), ChildJvm.FIXED_HEAP, FailingCalls.class,
        out.toString(), tmp.resolve("failing").toString());
    assertEquals(3, ChildJvm.checkGrowths(output, 40), output);
  }

  /** Fails each kind of call many times over the trial args[0] and a hook of args[1]. */
  public static final class FailingCalls {
    public static void main(String[] args) throws Exception {
      String longName = "x".repeat(1000); // 3,001 bytes converted on the heap
      long[] manySteps = new long[1000];  // 8,000 bytes copied on the heap
      for (int i = 0; i < manySteps.length; ++i) manySteps[i] = 1000 + i;
      try (Trial t = Trial.open(args[0]); Hook h = Hook.create(args[1])) {
        h.beginStep();
        List<String> strings = List.of("a");
        loop("100000 tensor(1,000-character name): TensorUnavailable", 100_000, () -> {
          try {
            t.tensor(longName);
          } catch (TensorUnavailable e) {
            return;
          }
          throw new AssertionError("no TensorUnavailable");
        });
        loop("10000 waitForSteps(1,000 steps): NoMoreData", 10_000, () -> {
          try {
            t.waitForSteps(manySteps, Mode.GLOBAL, 0);
          } catch (NoMoreData e) {
            return;
          }
          throw new AssertionError("no NoMoreData");
        });
        loop("30000 saveStrings(1,000-character name, then a refused collection name)", 30_000, () -> {
          try {
            h.saveStrings(longName, strings, "c\u0000d");
          } catch (IllegalArgumentException e) {
            return;
          }
          throw new AssertionError("no IllegalArgumentException");
        });
      }
    }

    interface Call {
      void run() throws Exception;
    }

    private static void loop(String what, int times, Call call) throws Exception {
      for (int i = 0; i < times / 10; ++i) call.run(); // warm up
      long before = ChildJvm.rssKb();
      for (int i = 0; i < times; ++i) call.run();
      System.out.println("grew " + (ChildJvm.rssKb() - before) + " " + what);
    }
  }

  /**
   * A Hook and a TensorBoardWriter a program forgets to close are closed when the JVM exits: the
   * last step and training_job_end.ts are written, and every TensorBoard file is completed.
   */
  @Test
  void forgottenHookAndWriterAreClosedAtExit() throws Exception {
    Path run = tmp.resolve("exit-run");
    Path tb = tmp.resolve("exit-tb");
    String output = ChildJvm.run(tmp.resolve("exit.log"), List.of(), ForgetsItsHandles.class, run.toString(),
        tb.toString());
    assertFalse(output.contains("smd:"), output); // nothing failed at exit
    try (Trial t = Trial.open(run.toString())) {
      assertArrayEquals(new long[] {0, 1, 2}, t.steps(), output);
      assertTrue(t.hasEnded(), "no training_job_end.ts: " + output);
    }
    try (Stream<Path> files = Files.walk(tb)) {
      List<Path> events = files.filter(f -> f.toString().endsWith(".tfevents")).toList();
      assertEquals(3, events.size(), events.toString());
      for (Path f : events) assertTrue(Files.size(f) > 0, f + " is empty");
    }
  }

  /** Saves 3 steps to args[0] and 3 TensorBoard scalars to args[1], and exits closing neither. */
  public static final class ForgetsItsHandles {
    public static void main(String[] args) throws Exception {
      Hook h = Hook.create(args[0]);
      TensorBoardWriter w = TensorBoardWriter.create(args[1]);
      for (int s = 0; s < 3; ++s) {
        h.beginStep();
        h.saveScalar("loss", 1.0 / (s + 1));
        w.addScalar(s, Mode.TRAIN, 0, "loss", 1.0 / (s + 1));
      }
    }
  }

  /** A NUL would end the C string: "a\0b" would silently name "a" (another tensor, worker or
   * folder). Every string argument refuses it. */
  @Test
  void namesAndPathsWithNulAreRefused() throws Exception {
    Path dir = tmp.resolve("nul");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Hook.create(dir.toString() + "\u0000x"));
    assertTrue(e.getMessage().contains("NUL"), e.getMessage());
    assertFalse(Files.exists(dir), "a hook was made in the folder named before the NUL");
    try (HookOptions o = new HookOptions()) {
      assertThrows(IllegalArgumentException.class, () -> o.worker("worker_0\u0000b"));
      assertThrows(IllegalArgumentException.class, () -> o.includeCollection("c\u0000d"));
    }
    try (HookOptions all = new HookOptions().saveAll(true); Hook h = Hook.create(dir.toString(), all)) {
      h.beginStep();
      assertThrows(IllegalArgumentException.class, () -> h.saveTensor("a\u0000b", new long[] {1}, new float[] {1}));
      assertThrows(IllegalArgumentException.class, () -> h.saveTensor("t", new long[] {1}, new float[] {1}, "c\u0000d"));
      assertThrows(IllegalArgumentException.class, () -> h.saveScalar("s\u0000t", 1.0));
      assertThrows(IllegalArgumentException.class, () -> h.collection("c\u0000d"));
      assertThrows(IllegalArgumentException.class, () -> h.includeCollection("c\u0000d"));
      h.saveTensor("a", new long[] {1}, new float[] {7});
      h.saveStrings("s", java.util.List.of("x\u0000y"));  // data, not a name: the NUL is kept
    }
    try (Trial t = Trial.open(dir.toString())) {
      assertThrows(IllegalArgumentException.class, () -> t.tensor("a\u0000b"));
      assertEquals(java.util.List.of("a", "s"), t.tensorNames());
      try (Tensor s = t.tensor("s"); Value v = s.value(0)) {
        assertArrayEquals(new byte[] {'x', 0, 'y'}, v.stringBytes(0));
      }
    }
    assertThrows(IllegalArgumentException.class, () -> Trial.open(dir.toString() + "\u0000x"));
  }

  @Test
  void closedHandlesThrowIllegalState() throws Exception {
    Path out = tmp.resolve("closed");
    Hook h = Hook.create(out.toString());
    h.beginStep();
    h.close();
    h.close(); // idempotent
    assertTrue(h.isClosed());
    assertThrows(IllegalStateException.class, h::beginStep);
    assertThrows(IllegalStateException.class, () -> h.saveTensor("x", new long[] {1}, new float[] {1}));
    assertThrows(IllegalStateException.class, h::globalStep);
    Trial t = Trial.open(out.toString());
    Tensor[] keep = new Tensor[1];
    t.close();
    t.close();
    assertThrows(IllegalStateException.class, t::steps);
    assertThrows(IllegalStateException.class, () -> t.tensor("x"));
    SaveConfig sc = new SaveConfig();
    sc.close();
    assertThrows(IllegalStateException.class, () -> sc.setInterval(Mode.ALL, 2));
    try (HookOptions o = new HookOptions()) {
      assertThrows(IllegalStateException.class, () -> o.saveConfig(sc));
      assertThrows(NullPointerException.class, () -> o.saveConfig(null));
    }
    assertNull(keep[0]);
  }

  @Test
  void closingAHookWhileOtherThreadsSaveIsSafe() throws Exception {
    for (int round = 0; round < 20; ++round) {
      Hook h = Hook.create(tmp.resolve("race" + round).toString());
      h.beginStep();
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      Thread[] ts = new Thread[2];
      for (int k = 0; k < ts.length; ++k) {
        ts[k] = new Thread(() -> {
          while (!stop.get()) {
            try {
              h.saveTensor("x", new long[] {2}, new float[] {1, 2});
              h.beginStep();
            } catch (IllegalStateException e) {
              return; // closed: the expected end
            } catch (SmdException e) {
              if (e.code() != SmdException.INVALID_STATE) throw new AssertionError(e);
              return;
            }
          }
        });
        ts[k].start();
      }
      Thread.sleep(2);
      h.close();
      stop.set(true);
      for (Thread t : ts) t.join();
      assertTrue(h.isClosed());
    }
  }

  @Test
  void tensorsAndValuesOutliveTheirTrial() throws Exception {
    Path out = HookTrialTest.writeTrial(tmp);
    Tensor w;
    Value v;
    ByteBuffer b;
    try (Trial t = Trial.open(out.toString())) {
      w = t.tensor("fc1.weight");
    }
    v = w.value(3);
    w.close();
    b = v.buffer();
    v.close();
    assertThrows(IllegalStateException.class, v::buffer);
    // The buffer keeps smd's memory alive after the Value is closed and collected.
    for (int i = 0; i < 5; ++i) {
      System.gc();
      Thread.sleep(10);
    }
    assertEquals(3f, b.getFloat(0));
    assertEquals(5.5f, b.asFloatBuffer().get(5));
  }

  @Test
  void forgottenHandlesAreFreedByTheCleaner() throws Exception {
    Path out = HookTrialTest.writeTrial(tmp);
    for (int i = 0; i < 2000; ++i) {
      Trial t = Trial.open(out.toString());
      Tensor w = t.tensor("fc1.weight");
      Value v = w.value(i % 4);
      if (v.toFloatArray()[0] != i % 4) fail("wrong value");
      v.buffer();
      new SaveConfig();
      new HookOptions();
    }
    for (int i = 0; i < 5; ++i) {
      System.gc();
      Thread.sleep(20);
    }
    // An unclosed hook is closed (its files completed) by the Cleaner.
    Path lost = tmp.resolve("lost");
    makeLostHook(lost);
    for (int i = 0; i < 50 && !Files.exists(lost.resolve("training_job_end.ts")); ++i) {
      System.gc();
      Thread.sleep(20);
    }
    assertTrue(Files.exists(lost.resolve("training_job_end.ts")), "the Cleaner closed the forgotten hook");
  }

  private static void makeLostHook(Path dir) throws SmdException {
    Hook h = Hook.create(dir.toString());
    h.beginStep();
    h.saveScalar("x", 1.0);
  }
}
