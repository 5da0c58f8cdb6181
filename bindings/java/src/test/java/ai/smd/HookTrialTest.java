package ai.smd;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HookTrialTest {
  @TempDir Path tmp;

  /** Writes 4 TRAIN steps and 2 EVAL steps of several kinds of tensors, every step saved. */
  static Path writeTrial(Path dir) throws SmdException {
    Path out = dir.resolve("run");
    try (SaveConfig sc = SaveConfig.every(1);
         HookOptions o = new HookOptions().saveConfig(sc).saveAll(true).worker("worker_0");
         Hook hook = Hook.create(out.toString(), o)) {
      assertEquals(-1, hook.globalStep());
      hook.setMode(Mode.TRAIN);
      for (int s = 0; s < 4; ++s) {
        hook.beginStep();
        assertEquals(s, hook.globalStep());
        assertEquals(s, hook.modeStep());
        assertEquals(Mode.TRAIN, hook.mode());
        assertTrue(hook.anyDue());
        assertTrue(hook.isDue("fc1.weight"));
        hook.saveTensor("fc1.weight", new long[] {2, 3}, new float[] {s, 1, 2, 3, 4, 5.5f}, "custom_coll");
        hook.saveTensor("f64", new long[] {2}, new double[] {s * 0.5, -1e300});
        hook.saveTensor("i64", new long[] {3}, new long[] {s, Long.MAX_VALUE, Long.MIN_VALUE});
        hook.saveTensor("i32", new long[] {1, 2}, new int[] {s, -7});
        hook.saveTensor("mask", new long[] {3}, new boolean[] {true, false, s % 2 == 0});
        ByteBuffer bb = ByteBuffer.allocateDirect(4 * 4 + 8).order(ByteOrder.LITTLE_ENDIAN);
        bb.putLong(0); // 8 bytes not part of the tensor
        for (int i = 0; i < 4; ++i) bb.putFloat(10 * s + i);
        bb.position(8);
        hook.saveTensor("direct", DType.FLOAT32, new long[] {4}, bb);
        assertEquals(8, bb.position(), "the buffer's position is unchanged");
        hook.saveScalar("loss", 1.0 / (s + 1));
        hook.saveScalar("count", (long) s);
        hook.saveScalar("flag", s == 2);
        hook.saveStrings("labels", List.of("cat", "ü-\uD83D\uDE00", ""));
      }
      hook.setMode(Mode.EVAL);
      for (int s = 0; s < 2; ++s) {
        hook.beginStep();
        assertEquals(Mode.EVAL, hook.mode());
        assertEquals(s, hook.modeStep());
        hook.saveTensor("fc1.weight", new long[] {2, 3}, new float[] {100 + s, 0, 0, 0, 0, 0});
      }
      hook.flush();
      assertEquals("worker_0", hook.worker());
      assertTrue(hook.collectionNames().contains("custom_coll"));
      assertFalse(hook.stopRequested());
    }
    return out;
  }

  @Test
  void writesAndReadsEveryKindOfTensor() throws Exception {
    Path out = writeTrial(tmp);
    try (Trial t = Trial.open(out.toString())) {
      assertEquals(out.toString(), t.path());
      assertTrue(t.hasEnded());
      assertEquals(1, t.numWorkers());
      assertEquals(5, t.lastCompleteStep());
      assertEquals(Optional.of("index/000000000/000000000005_worker_0.json"), t.indexCursor());
      assertEquals(List.of("worker_0"), t.workers());
      assertArrayEquals(new long[] {0, 1, 2, 3, 4, 5}, t.steps());
      assertArrayEquals(new long[] {0, 1, 2, 3}, t.steps(Mode.TRAIN));
      assertArrayEquals(new long[] {0, 1}, t.steps(Mode.EVAL, true));
      assertEquals(List.of(Mode.TRAIN, Mode.EVAL), t.modes());
      assertEquals(Mode.EVAL, t.mode(5));
      assertEquals(1, t.modeStep(5));
      assertEquals(4, t.globalStep(Mode.EVAL, 0));
      assertEquals(StepState.AVAILABLE, t.hasPassedStep(3, Mode.GLOBAL));
      assertEquals(StepState.UNAVAILABLE, t.hasPassedStep(9, Mode.GLOBAL));
      t.waitForSteps(new long[] {0, 5}, Mode.GLOBAL, 0);
      assertTrue(t.warnings().isEmpty());
      t.refresh();
      assertTrue(t.autoRefresh());
      try (RefreshScope off = t.refreshScope(false)) {
        assertFalse(t.autoRefresh());
      }
      assertTrue(t.autoRefresh());

      List<String> names = t.tensorNames();
      for (String n : List.of("fc1.weight", "f64", "i64", "i32", "mask", "direct", "scalar/loss", "scalar/count",
          "scalar/flag", "labels")) {
        assertTrue(names.contains(n), n + " in " + names);
        assertTrue(t.hasTensor(n));
      }
      assertFalse(t.hasTensor("nope"));
      assertEquals(List.of("fc1.weight"), t.tensorNames("^fc1"));
      assertEquals(List.of("fc1.weight"), t.tensorNames(new TensorFilter().collection("custom_coll")));
      assertEquals(List.of("fc1.weight"), t.tensorNames(new TensorFilter().mode(Mode.EVAL)));
      assertEquals(List.of("fc1.weight"), t.tensorNames(new TensorFilter().step(1).mode(Mode.EVAL)));
      assertTrue(t.collectionNames().contains("custom_coll"));
      try (CollectionInfo ci = t.collection("custom_coll")) {
        assertEquals("custom_coll", ci.name());
        assertEquals(List.of("fc1.weight"), ci.tensorNames());
        assertTrue(ci.includeRegex().isEmpty());
        assertEquals("", ci.reductions());
        assertTrue(ci.saveRawTensor() || !ci.saveRawTensor()); // read without error
        assertFalse(ci.saveShape());
        assertTrue(ci.saveHistogram());
      }

      try (Tensor w = t.tensor("fc1.weight")) {
        assertEquals("fc1.weight", w.name());
        assertArrayEquals(new long[] {0, 1, 2, 3, 4, 5}, w.steps());
        assertArrayEquals(new long[] {0, 1}, w.steps(Mode.EVAL));
        try (Value v = w.value(2)) {
          assertEquals(DType.FLOAT32, v.dtype());
          assertArrayEquals(new long[] {2, 3}, v.shape());
          assertEquals(6, v.count());
          assertEquals(24, v.nbytes());
          assertArrayEquals(new float[] {2, 1, 2, 3, 4, 5.5f}, v.toFloatArray());
          assertArrayEquals(new double[] {2, 1, 2, 3, 4, 5.5}, v.toDoubleArray());
          assertEquals(5.5, v.getDouble(5));
          ByteBuffer b = v.buffer();
          assertTrue(b.isReadOnly());
          assertTrue(b.isDirect());
          assertEquals(5.5f, b.getFloat(20));
          assertEquals(24, v.toByteArray().length);
        }
        try (Value v = w.value(1, Mode.EVAL, "worker_0")) {
          assertEquals(101f, v.toFloatArray()[0]);
        }
        SortedMap<Long, Value> all = w.values(Mode.TRAIN, null);
        assertEquals(List.of(0L, 1L, 2L, 3L), List.copyOf(all.keySet()));
        assertEquals(3f, all.get(3L).toFloatArray()[0]);
        all.values().forEach(Value::close);
        assertArrayEquals(new long[] {2, 3}, w.shape(0, Mode.GLOBAL, null));
        Tensor.Info info = w.valueInfo(0, Mode.GLOBAL, null);
        assertEquals(DType.FLOAT32, info.dtype());
        assertArrayEquals(new long[] {2, 3}, info.shape());
        SortedMap<Long, long[]> shapes = w.shapes(Mode.EVAL, null);
        assertEquals(2, shapes.size());
        assertArrayEquals(new long[] {2, 3}, shapes.get(1L));
        assertEquals(5.5, w.reductionValue(3, Mode.GLOBAL, null, "max"));
        assertEquals(Math.sqrt(9 + 1 + 4 + 9 + 16 + 5.5 * 5.5), w.reductionValue(3, Mode.GLOBAL, null, "l2"), 1e-6);
        assertTrue(w.reductionNames(3, Mode.GLOBAL, null).isEmpty());
        assertTrue(w.reductionValues(3, Mode.GLOBAL, null).isEmpty());
        assertEquals(List.of("worker_0"), w.workers(3, Mode.GLOBAL));
        assertArrayEquals(new long[] {2, 3}, w.prevSteps(3, Mode.TRAIN, 2));
        assertArrayEquals(new long[] {0, 1, 2, 3}, w.prevSteps(3, Mode.TRAIN, 0));
      }
      try (Tensor x = t.tensor("f64"); Value v = x.value(3)) {
        assertArrayEquals(new double[] {1.5, -1e300}, v.toDoubleArrayExact());
      }
      try (Tensor x = t.tensor("i64"); Value v = x.value(1)) {
        assertEquals(DType.INT64, v.dtype());
        assertArrayEquals(new long[] {1, Long.MAX_VALUE, Long.MIN_VALUE}, v.toLongArray());
      }
      try (Tensor x = t.tensor("i32"); Value v = x.value(2)) {
        assertArrayEquals(new int[] {2, -7}, v.toIntArray());
        assertArrayEquals(new long[] {1, 2}, v.shape());
      }
      try (Tensor x = t.tensor("mask"); Value v = x.value(1)) {
        assertEquals(DType.BOOL, v.dtype());
        assertArrayEquals(new double[] {1, 0, 0}, v.toDoubleArray());
      }
      try (Tensor x = t.tensor("direct"); Value v = x.value(2)) {
        assertArrayEquals(new float[] {20, 21, 22, 23}, v.toFloatArray());
      }
      try (Tensor x = t.tensor("scalar/loss"); Value v = x.value(3)) {
        assertEquals(DType.FLOAT64, v.dtype());
        assertEquals(0.25, v.getDouble(0));
      }
      try (Tensor x = t.tensor("scalar/count"); Value v = x.value(3)) {
        assertEquals(DType.INT64, v.dtype());
        assertArrayEquals(new long[] {3}, v.toLongArray());
      }
      try (Tensor x = t.tensor("scalar/flag"); Value v = x.value(2)) {
        assertEquals(DType.BOOL, v.dtype());
        assertEquals(1.0, v.getDouble(0));
      }
      try (Tensor x = t.tensor("labels"); Value v = x.value(0)) {
        assertEquals(DType.STRING, v.dtype());
        assertEquals(List.of("cat", "ü-\uD83D\uDE00", ""), v.strings());
        assertArrayEquals("cat".getBytes(), v.stringBytes(0));
        assertThrows(IllegalStateException.class, v::buffer);
        SmdException e = assertThrows(SmdException.class, v::toDoubleArray);
        assertEquals(SmdException.UNSUPPORTED, e.code());
      }
    }
  }

  /** The reader's position: smdebug's last_complete_step and last_index_token. */
  @Test
  void lastCompleteStepAndIndexCursor() throws Exception {
    Path fixtures = Path.of("..", "..", "tests", "data", "trials").toAbsolutePath();
    // 3 workers wrote steps 0-5, all three only steps 0-3.
    try (Trial t = Trial.open(fixtures.resolve("workers3_running").toString())) {
      assertEquals(3, t.numWorkers());
      assertEquals(3, t.lastCompleteStep());
      assertEquals(Optional.of("index/000000000/000000000003_worker_2.json"), t.indexCursor());
      assertFalse(t.loadedAllSteps()); // running
    }
    try (Trial t = Trial.open(fixtures.resolve("modes_reentry").toString())) {
      assertTrue(t.loadedAllSteps()); // ended before it was opened
      assertEquals(9, t.lastCompleteStep());
      assertEquals(Optional.of("index/000000000/000000000009_worker_0.json"), t.indexCursor());
    }
    // Before any step is complete (worker_1 of 2 has written nothing): -1 and empty.
    Path out = tmp.resolve("partial");
    try (SaveConfig sc = SaveConfig.every(1);
         HookOptions o = new HookOptions().saveConfig(sc).saveAll(true).includeAllWorkers(true)
             .numWorkers(2).writeEndMarker(false);
         Hook hook = Hook.create(out.toString(), o)) {
      hook.beginStep();
      hook.saveTensor("w", new long[] {1}, new float[] {1});
    }
    Trial t = Trial.open(out.toString());
    assertEquals(2, t.numWorkers());
    assertArrayEquals(new long[] {0}, t.steps(Mode.GLOBAL, true));
    assertEquals(-1, t.lastCompleteStep());
    assertEquals(Optional.empty(), t.indexCursor());
    t.close();
    assertThrows(IllegalStateException.class, t::lastCompleteStep);
    assertThrows(IllegalStateException.class, t::indexCursor);
  }

  /** smdebug's Tensor.original_name: the shape entries' "originalname"; none without a shape. */
  @Test
  void tensorOriginalName() throws Exception {
    Path fixtures = Path.of("..", "..", "tests", "data", "trials").toAbsolutePath();
    try (Trial t = Trial.open(fixtures.resolve("shapes").toString());
         Tensor sh = t.tensor("sh_4d")) {
      assertEquals(Optional.of("sh_4d"), sh.originalName());
    }
    try (Trial t = Trial.open(fixtures.resolve("modes_reentry").toString());
         Tensor loss = t.tensor("loss")) {
      assertEquals(Optional.empty(), loss.originalName());
    }
  }

  /** keepColonIndex: the reductions of dense/kernel:0 belong to that name, or else to dense/kernel. */
  @Test
  void keepColonIndexDecidesWhichTensorOwnsTheReductions() throws Exception {
    for (boolean keep : new boolean[] {false, true}) {
      Path out = tmp.resolve("colon_" + keep);
      try (ReductionConfig rc = ReductionConfig.parse("max");
           HookOptions o = new HookOptions().reductionConfig(rc).saveAll(true).keepColonIndex(keep);
           Hook hook = Hook.create(out.toString(), o)) {
        hook.beginStep();
        hook.saveTensor("dense/kernel:0", new long[] {2}, new float[] {1, 5});
        hook.close();
      }
      String owner = keep ? "dense/kernel:0" : "dense/kernel";
      String other = keep ? "dense/kernel" : "dense/kernel:0";
      try (Trial t = Trial.open(out.toString())) {
        try (Tensor w = t.tensor(owner)) {
          assertEquals(5.0, w.reductionValue(0, Mode.GLOBAL, null, "max"), "keep=" + keep);
        }
        if (t.tensorNames().contains(other)) {
          try (Tensor w = t.tensor(other)) {
            assertThrows(SmdException.class, () -> w.reductionValue(0, Mode.GLOBAL, null, "max"));
          }
        }
      }
    }
  }

  @Test
  void reductionsAndCollectionsFollowTheirConfigs() throws Exception {
    Path out = tmp.resolve("red");
    try (SaveConfig every2 = new SaveConfig().set(Mode.ALL, 2, 0, -1);
         ReductionConfig rc = ReductionConfig.parse("min,max").add("abs_mean").setSaveShape(true);
         HookOptions o = new HookOptions().saveConfig(SaveConfig.every(1)).includeCollection("grads");
         Hook hook = Hook.create(out.toString(), o);
         Collection c = hook.collection("grads")) {
      assertEquals("grads", c.name());
      c.includeRegex("^grad/").addTensorName("explicit").saveConfig(every2).reductionConfig(rc).saveHistogram(false);
      for (int s = 0; s < 4; ++s) {
        hook.beginStep();
        hook.saveTensor("grad/w", new long[] {2}, new float[] {-3, s});
        hook.saveTensor("explicit", new long[] {1}, new float[] {s});
      }
      assertEquals(List.of("explicit", "grad/w"), c.tensorNames());
      hook.close();
      assertThrows(SmdException.class, () -> c.includeRegex("late"), "the hook is closed");
    }
    try (Trial t = Trial.open(out.toString()); Tensor g = t.tensor("grad/w")) {
      assertArrayEquals(new long[] {0, 2}, g.steps());
      assertEquals(List.of("abs_mean", "max", "min"), g.reductionNames(2, Mode.GLOBAL, null));
      Map<String, Double> rv = g.reductionValues(2, Mode.GLOBAL, null);
      assertEquals(-3.0, rv.get("min"));
      assertEquals(2.0, rv.get("max"));
      assertEquals(2.5, rv.get("abs_mean"));
      assertArrayEquals(new long[] {2}, g.shape(2, Mode.GLOBAL, null));
      assertThrows(TensorUnavailableForStep.class, () -> g.value(2));
      try (CollectionInfo ci = t.collection("grads")) {
        assertEquals(List.of("^grad/"), ci.includeRegex());
        assertTrue(ci.saveShape());
        assertFalse(ci.saveRawTensor());
        assertFalse(ci.saveHistogram());
        assertTrue(ci.reductions().contains("abs_mean"));
      }
    }
  }

  @Test
  void collectionSaveConfigOfTheTrial() throws Exception {
    Path out = tmp.resolve("sc");
    try (SaveConfig every3 = SaveConfig.every(3);
         SaveConfig own = new SaveConfig().set(Mode.TRAIN, 2, 1, 9, 4, 11);
         HookOptions o = new HookOptions().saveConfig(every3).includeCollection("mine");
         Hook hook = Hook.create(out.toString(), o);
         Collection c = hook.collection("mine")) {
      c.includeRegex("^mine/").saveConfig(own);
      hook.beginStep();
      hook.saveScalar("mine/x", 1.0);
      hook.close();
    }
    try (Trial t = Trial.open(out.toString());
         CollectionInfo ci = t.collection("mine");
         SaveConfig sc = ci.saveConfig().orElseThrow()) {
      assertEquals(Optional.of(new SaveConfig.ModeSettings(2, 1, 9, List.of(4L, 11L))), sc.settings(Mode.TRAIN));
      // the modes the collection left unset: the hook's, as the collections file holds them
      assertEquals(Optional.of(new SaveConfig.ModeSettings(3, 0, -1, List.of())), sc.settings(Mode.EVAL));
      assertTrue(sc.shouldSave(4, Mode.TRAIN));
      assertThrows(SmdException.class, () -> sc.settings(Mode.ALL));
    }
    // a collections file written by hand: null and unset
    Path byHand = tmp.resolve("by_hand");
    Files.createDirectories(byHand.resolve("collections/000000000"));
    Files.writeString(byHand.resolve("collections/000000000/worker_0_collections.json"),
        "{\"collections\": {\"none\": {\"name\": \"none\", \"save_config\": null},"
            + " \"partial\": {\"name\": \"partial\", \"save_config\": {\"TRAIN\": {\"save_interval\": 4},"
            + " \"EVAL\": null}}}, \"_meta\": {\"num_workers\": 1}}");
    Files.writeString(byHand.resolve("training_job_end.ts"), "");
    try (Trial t = Trial.open(byHand.toString());
         CollectionInfo none = t.collection("none");
         CollectionInfo partial = t.collection("partial");
         SaveConfig sc = partial.saveConfig().orElseThrow()) {
      assertTrue(none.saveConfig().isEmpty());
      assertEquals(Optional.of(new SaveConfig.ModeSettings(4, 0, -1, List.of())), sc.settings(Mode.TRAIN));
      assertEquals(Optional.empty(), sc.settings(Mode.EVAL));
    }
  }

  @Test
  void optionsAndConfigs() throws Exception {
    try (SaveConfig sc = new SaveConfig()) {
      sc.set(Mode.TRAIN, 5, 10, 30, 3, 7);
      assertTrue(sc.shouldSave(3, Mode.TRAIN));
      assertTrue(sc.shouldSave(15, Mode.TRAIN));
      assertFalse(sc.shouldSave(12, Mode.TRAIN));
      assertFalse(sc.shouldSave(30, Mode.TRAIN));
      assertTrue(sc.shouldSave(500, Mode.EVAL), "unset modes answer with the defaults");
      try (SaveConfig c = sc.copy()) {
        sc.unset(Mode.TRAIN);
        assertFalse(sc.shouldSave(3, Mode.TRAIN));
        assertTrue(c.shouldSave(3, Mode.TRAIN), "a copy is independent");
      }
      sc.setInterval(Mode.EVAL, 3);
      assertTrue(sc.shouldSave(3, Mode.EVAL));
      SmdException e = assertThrows(SmdException.class, () -> sc.setInterval(Mode.TRAIN, 0));
      assertEquals(SmdException.INVALID_ARGUMENT, e.code());
      assertEquals("SMD_E_INVALID_ARGUMENT", e.codeName());
    }
    try (ReductionConfig rc = new ReductionConfig().add("min").setSaveRawTensor(true); ReductionConfig c = rc.copy()) {
      assertNotNull(c);
      SmdException e = assertThrows(SmdException.class, () -> rc.add("bogus"));
      assertTrue(e.getMessage().contains("bogus"), e.getMessage());
      assertThrows(SmdException.class, () -> ReductionConfig.parse("min,nope"));
    }
    Path out = tmp.resolve("opts");
    try (HookOptions o = new HookOptions();
         StorageOptions so = new StorageOptions().s3Region("us-east-1").s3Profile("default").s3AddressingStyle("path")
             .s3CaBundle(null).s3Endpoint("http://127.0.0.1:9").s3Credentials("AK", "SK", null)) {
      o.includeRegex(".*").includeAllWorkers(false).numWorkers(1).realPayloadCrc(true).wallTimeBase(1000)
          .memoryBudget(1 << 20).maxPendingSteps(2).writeEndMarker(true).fsync(true).exportTensorboard(false)
          .tensorboardDir(tmp.resolve("tb").toString()).reductionConfig(new ReductionConfig().setSaveRawTensor(true))
          .storage(so);
      assertThrows(SmdException.class, () -> o.numWorkers(0));
      assertThrows(SmdException.class, () -> o.worker("../x"));
      try (Hook h = Hook.create(out.toString(), o)) {
        h.beginStep();
        h.saveTensor("a", new long[] {1}, new float[] {1});
      }
    }
    try (Trial t = Trial.open(out.toString())) {
      assertEquals(List.of("a"), t.tensorNames());
    }
    try (HookOptions o = new HookOptions().dryRun(true); Hook h = Hook.create(tmp.resolve("dry").toString(), o)) {
      h.beginStep();
      h.saveTensor("a", new long[] {1}, new float[] {1});
    }
    assertFalse(Files.exists(tmp.resolve("dry")), "a dry run writes nothing");
    try (StorageOptions so = new StorageOptions().s3Region("us-east-1").s3Profile("p").s3AddressingStyle("virtual")
             .s3CaBundle(null).s3Endpoint("https://localhost:1").s3Credentials(null, null, null);
         TrialOptions to = new TrialOptions().rangeSteps(1, 3).autoRefresh(false).collectionWaitMs(0).cacheBytes(0)
             .storage(so);
         Trial t = Trial.open(writeTrial(tmp.resolve("ranged")).toString(), to)) {
      assertArrayEquals(new long[] {1, 2}, t.steps());
      assertThrows(SmdException.class, () -> to.rangeSteps(5, 2));
      assertThrows(IllegalArgumentException.class, () -> to.cacheBytes(-1));
    }
  }

  @Test
  void hookFromJsonFile() throws Exception {
    Path json = tmp.resolve("debughookconfig.json");
    Path out = tmp.resolve("fromjson");
    Files.writeString(json, "{\"LocalPath\": \"" + out + "\", \"HookParameters\": {\"save_interval\": \"2\", \"save_all\": \"true\"}}");
    try (Hook h = Hook.fromJsonFile(json.toString(), null)) {
      for (int s = 0; s < 4; ++s) {
        h.beginStep();
        h.saveTensor("x", new long[] {1}, new float[] {s});
      }
    }
    try (Trial t = Trial.open(out.toString())) {
      assertArrayEquals(new long[] {0, 2}, t.steps());
    }
    assertThrows(SmdException.class, () -> Hook.fromJsonFile(tmp.resolve("missing.json").toString(), null));
  }

  @Test
  void scalarWithTimestampAndSavesBeforeTheFirstStep() throws Exception {
    Path out = tmp.resolve("timestamped");
    try (HookOptions o = new HookOptions().saveConfig(SaveConfig.every(1));
         Hook hook = Hook.create(out.toString(), o)) {
      hook.saveScalar("early", 2.5, 1234.5); // before the first step: kept for step 0
      SmdException e = assertThrows(SmdException.class, () -> hook.saveScalar("bad", 1.0, Double.NaN));
      assertEquals(SmdException.INVALID_ARGUMENT, e.code());
      hook.beginStep();
      hook.saveScalar("late", 3.5, 99.25);
    }
    byte[] events = Files.readAllBytes(out.resolve("events/000000000000/000000000000_worker_0.tfevents"));
    ByteBuffer want = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0x09).putDouble(1234.5);
    assertTrue(indexOf(events, want.array()) >= 0, "the event's wall_time is the timestamp");
    try (Trial t = Trial.open(out.toString());
         Tensor x = t.tensor("scalar/early"); Value v = x.value(0)) {
      assertEquals(2.5, v.getDouble(0));
    }
  }

  @Test
  void endStepLeavesTheHookOpen() throws Exception {
    Path out = tmp.resolve("endstep");
    try (HookOptions o = new HookOptions().saveConfig(SaveConfig.every(1));
         Hook hook = Hook.create(out.toString(), o)) {
      hook.beginStep();
      hook.saveScalar("loss", 0.5);
      hook.endStep();
      hook.flush();
      assertEquals(0, hook.globalStep());
      try (Trial t = Trial.open(out.toString())) {
        assertEquals(StepState.AVAILABLE, t.hasPassedStep(0, Mode.GLOBAL));
      }
      hook.saveScalar("after", 2.0); // kept for the step close() begins
    }
    try (Trial t = Trial.open(out.toString());
         Tensor x = t.tensor("scalar/after"); Value v = x.value(1)) {
      assertEquals(2.0, v.getDouble(0));
    }
  }

  /** One live step: begin, a scalar "loss", end, flushed (readable once flush returns). */
  private static void writeLiveStep(Hook hook, double loss) throws SmdException {
    hook.beginStep();
    hook.saveScalar("loss", loss);
    hook.endStep();
    hook.flush();
  }

  /** The global steps of the trial on another thread, started now and joined (its auto refresh first). */
  private static long[] stepsOnAnotherThread(Trial t, boolean[] autoRefreshOut) throws Exception {
    long[][] steps = new long[1][];
    Throwable[] err = new Throwable[1];
    Thread other = new Thread(() -> {
      try {
        autoRefreshOut[0] = t.autoRefresh();
        steps[0] = t.steps(Mode.GLOBAL, true);
      } catch (Throwable e) {
        err[0] = e;
      }
    });
    other.start();
    other.join();
    assertNull(err[0]);
    return steps[0];
  }

  /** smdebug's no_refresh / refresh blocks: per thread, nested, the innermost wins. */
  @Test
  void refreshScopesFreezeOnlyTheirOwnThread() throws Exception {
    Path out = tmp.resolve("scopes");
    try (HookOptions o = new HookOptions().saveConfig(SaveConfig.every(1));
         Hook hook = Hook.create(out.toString(), o)) {
      writeLiveStep(hook, 0.5);
      try (Trial t = Trial.open(out.toString()); Tensor loss = t.tensor("scalar/loss")) {
        assertFalse(t.hasEnded());
        assertArrayEquals(new long[] {0}, t.steps(Mode.GLOBAL, true));
        assertTrue(t.autoRefresh());
        try (RefreshScope off = t.refreshScope(false)) {
          assertFalse(t.autoRefresh());
          writeLiveStep(hook, 0.4); // step 1, written after the block began
          // Not seen on this thread: not by the trial's queries, nor by its tensors.
          assertArrayEquals(new long[] {0}, t.steps(Mode.GLOBAL, true));
          assertArrayEquals(new long[] {0}, loss.steps(Mode.GLOBAL, true));
          assertEquals(StepState.NOT_YET_AVAILABLE, t.hasPassedStep(1, Mode.GLOBAL));
          // Another thread is not in the block: it refreshes, and loads step 1 for every thread.
          boolean[] otherAuto = new boolean[1];
          assertArrayEquals(new long[] {0, 1}, stepsOnAnotherThread(t, otherAuto));
          assertTrue(otherAuto[0]);
          assertFalse(t.autoRefresh());
          assertArrayEquals(new long[] {0, 1}, t.steps(Mode.GLOBAL, true));

          writeLiveStep(hook, 0.3); // step 2
          assertArrayEquals(new long[] {0, 1}, t.steps(Mode.GLOBAL, true));
          // A nested refresh block refreshes; ending it brings the outer block back.
          try (RefreshScope on = t.refreshScope(true)) {
            assertTrue(t.autoRefresh());
            assertArrayEquals(new long[] {0, 1, 2}, t.steps(Mode.GLOBAL, true));
            try (RefreshScope offAgain = t.refreshScope(false)) {
              assertFalse(t.autoRefresh());
            }
            assertTrue(t.autoRefresh());
          }
          assertFalse(t.autoRefresh());
          writeLiveStep(hook, 0.2); // step 3
          assertArrayEquals(new long[] {0, 1, 2}, loss.steps(Mode.GLOBAL, true));
          off.close();
          assertTrue(off.isClosed());
          assertTrue(t.autoRefresh());
          off.close(); // idempotent: ends nothing more
          assertTrue(t.autoRefresh());
        }
        // Out of the block, queries refresh by themselves again.
        assertArrayEquals(new long[] {0, 1, 2, 3}, loss.steps(Mode.GLOBAL, true));
      }

      // A trial opened without automatic refresh refreshes inside a refresh block only, and the
      // block outlives the Trial handle.
      try (TrialOptions manualOpts = new TrialOptions().autoRefresh(false)) {
        Trial manual = Trial.open(out.toString(), manualOpts);
        Tensor loss = manual.tensor("scalar/loss");
        assertFalse(manual.autoRefresh());
        assertArrayEquals(new long[] {0, 1, 2, 3}, manual.steps(Mode.GLOBAL, true));
        writeLiveStep(hook, 0.1); // step 4
        assertArrayEquals(new long[] {0, 1, 2, 3}, manual.steps(Mode.GLOBAL, true));
        boolean[] otherAuto = new boolean[1];
        assertArrayEquals(new long[] {0, 1, 2, 3}, stepsOnAnotherThread(manual, otherAuto));
        assertFalse(otherAuto[0]);
        try (RefreshScope on = manual.refreshScope(true)) {
          assertTrue(manual.autoRefresh());
          assertArrayEquals(new long[] {0, 1, 2, 3, 4}, manual.steps(Mode.GLOBAL, true));
          manual.close();
          assertThrows(IllegalStateException.class, () -> manual.refreshScope(false));
          writeLiveStep(hook, 0.05); // step 5: the tensor still refreshes inside the block
          assertArrayEquals(new long[] {0, 1, 2, 3, 4, 5}, loss.steps(Mode.GLOBAL, true));
        }
        writeLiveStep(hook, 0.01); // step 6: not after the block
        assertArrayEquals(new long[] {0, 1, 2, 3, 4, 5}, loss.steps(Mode.GLOBAL, true));
        loss.close();
      }
    }
  }

  @Test
  void makeDueSavesACollectionForTheRestOfTheStep() throws Exception {
    Path out = tmp.resolve("makedue");
    try (HookOptions o = new HookOptions().saveConfig(SaveConfig.every(100)).includeCollection("metrics");
         Hook hook = Hook.create(out.toString(), o)) {
      try (Collection c = hook.collection("metrics")) {
        c.addTensorName("acc");
      }
      SmdException early = assertThrows(SmdException.class, () -> hook.makeDue("metrics"));
      assertEquals(SmdException.INVALID_STATE, early.code());
      hook.beginStep();
      hook.beginStep();
      assertFalse(hook.isDue("acc"));
      SmdException nf = assertThrows(SmdException.class, () -> hook.makeDue("nope"));
      assertEquals(SmdException.NOT_FOUND, nf.code());
      hook.makeDue("metrics");
      assertTrue(hook.isDue("acc"));
      hook.saveTensor("acc", new long[] {1}, new double[] {0.5});
      hook.beginStep();
      assertFalse(hook.isDue("acc"));
    }
    try (Trial t = Trial.open(out.toString()); Tensor x = t.tensor("acc"); Value v = x.value(1)) {
      assertEquals(0.5, v.getDouble(0));
    }
  }

  /** maySave answers, whatever the step, whether a name (or a numbered family of names) can
   * belong to an included collection; collectionsVersion changes when the collections do. */
  @Test
  void maySaveFollowsTheIncludedCollections() throws Exception {
    Hook closed;
    try (SaveConfig sc = SaveConfig.every(1);
         HookOptions o = new HookOptions().saveConfig(sc);
         Hook hook = Hook.create(tmp.resolve("maysave").toString(), o)) {
      closed = hook;
      // by default only losses is saved
      assertTrue(hook.maySave("CrossEntropyLoss_output_", true));
      assertFalse(hook.maySave("layer1.0.conv1_output_", true));
      assertFalse(hook.maySave("gradient/Net_fc.weight", false));
      assertThrows(IllegalArgumentException.class, () -> hook.maySave("loss\u0000", false));
      assertThrows(NullPointerException.class, () -> hook.maySave(null, false));
      long v0 = hook.collectionsVersion();
      assertEquals(v0, hook.collectionsVersion());
      hook.includeCollection("gradients");
      assertNotEquals(v0, hook.collectionsVersion());
      assertTrue(hook.maySave("gradient/Net_fc.weight", false));
      try (Collection acts = hook.collection("acts")) {
        acts.addTensorName("relu_output_3");
      }
      hook.includeCollection("acts");
      assertTrue(hook.maySave("relu_output_", true));
      assertFalse(hook.maySave("relu_", true));
    }
    assertThrows(IllegalStateException.class, () -> closed.maySave("relu_output_", true));
    assertThrows(IllegalStateException.class, closed::collectionsVersion);
  }

  @Test
  void clearIncludeRegexTakesOutTheBuiltinPattern() throws Exception {
    try (HookOptions o = new HookOptions().includeCollection("weights");
         Hook hook = Hook.create(tmp.resolve("clear").toString(), o);
         Collection w = hook.collection("weights")) {
      hook.beginStep();
      assertTrue(hook.isDue("fc.weight"));
      w.addTensorName("kernel").clearIncludeRegex();
      assertFalse(hook.isDue("conv.weight"));
      assertTrue(hook.isDue("kernel"));
    }
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; ++i) {
      for (int j = 0; j < needle.length; ++j) {
        if (hay[i + j] != needle[j]) continue outer;
      }
      return i;
    }
    return -1;
  }

  @Test
  void libraryFacts() throws Exception {
    assertTrue(Smd.version().matches("\\d+\\.\\d+\\.\\d+.*"), Smd.version());
    assertTrue(Smd.reductionNames().containsAll(List.of("min", "max", "mean", "l2")));
    assertEquals("SMD_E_NOT_FOUND", Smd.codeName(SmdException.NOT_FOUND));
    assertEquals(DType.FLOAT32, DType.fromName("float32"));
    assertEquals("bool", DType.BOOL.numpyName());
    assertEquals(8, DType.INT64.size());
    assertEquals(4, Mode.GLOBAL.value());
    assertThrows(SmdException.class, () -> DType.fromName("float33"));
  }

  @Test
  void hookIsUsableFromManyThreads() throws Exception {
    Path out = tmp.resolve("threads");
    try (HookOptions o = new HookOptions().saveConfig(SaveConfig.every(1)).saveAll(true).includeAllWorkers(true)
        .worker("worker_3");
         Hook h = Hook.create(out.toString(), o)) {
      assertEquals("worker_3", h.worker());
      for (int s = 0; s < 5; ++s) {
        h.beginStep();
        int step = s;
        Thread[] ts = new Thread[4];
        Exception[] errs = new Exception[4];
        for (int k = 0; k < 4; ++k) {
          int kk = k;
          ts[k] = new Thread(() -> {
            try {
              for (int i = 0; i < 25; ++i) h.saveTensor("t" + kk + "_" + i, new long[] {1}, new float[] {step * 100 + i});
            } catch (Exception e) {
              errs[kk] = e;
            }
          });
          ts[k].start();
        }
        for (Thread t : ts) t.join();
        for (Exception e : errs) assertNull(e);
      }
    }
    try (Trial t = Trial.open(out.toString())) {
      assertEquals(100, t.tensorNames().size());
      assertEquals(List.of("worker_3"), t.workers());
      try (Tensor x = t.tensor("t2_7"); Value v = x.value(4)) {
        assertEquals(407f, v.toFloatArray()[0]);
      }
    }
  }
}
