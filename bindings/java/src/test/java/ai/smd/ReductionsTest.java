package ai.smd;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reductions the caller computed are written byte for byte as the hook writes its own. */
class ReductionsTest {
  @TempDir Path tmp;

  private Path run(String name, boolean given) throws Exception {
    Path out = tmp.resolve(name);
    try (SaveConfig sc = SaveConfig.every(1);
         ReductionConfig rc = ReductionConfig.parse("min,max,sum,l1,abs_max");
         HookOptions o = new HookOptions().saveConfig(sc).reductionConfig(rc).saveAll(true).wallTimeBase(100);
         Hook hook = Hook.create(out.toString(), o)) {
      hook.beginStep();
      if (given) {
        Hook.DueReductions due = hook.dueReductions("g");
        assertEquals(List.of("min", "max", "sum", "l1", "abs_max"), due.reductions);
        assertFalse(due.valueNeeded);
        assertFalse(due.histogram);
        hook.saveReductions("g", DType.FLOAT32, new long[] {2, 2},
            new String[] {"l1", "max", "sum", "min", "max"}, new boolean[] {false, true, false, false, false},
            new double[] {10, 4, -2, -4, 3});
        SmdException e = assertThrows(SmdException.class, () -> hook.saveReductions("g2", DType.FLOAT32,
            new long[] {4}, new String[] {"min"}, new boolean[] {false}, new double[] {1}));
        assertTrue(e.getMessage().contains("max"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> hook.saveReductions("g3", DType.FLOAT32,
            new long[] {4}, new String[] {"min"}, new boolean[] {false, true}, new double[] {1}));
      } else {
        hook.saveTensor("g", new long[] {2, 2}, new float[] {1, -2, 3, -4});
      }
    }
    return out.resolve("events/000000000000/000000000000_worker_0.tfevents");
  }

  /** Counts over the bucket edges as numpy.histogram counts (the last bucket closed). */
  private static Hook.Histogram histogramOf(double[] xs) {
    double[] e = Hook.histogramBucketEdges();
    long[] counts = new long[e.length - 1];
    double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY, sum = 0, sq = 0;
    boolean nan = false;
    for (double x : xs) {
      nan |= Double.isNaN(x);
      min = Math.min(min, x);
      max = Math.max(max, x);
      sum += x;
      sq += x * x;
      if (!Double.isFinite(x) || x < e[0] || x > e[e.length - 1]) continue;
      int b = java.util.Arrays.binarySearch(e, x);
      b = b >= 0 ? Math.min(b, counts.length - 1) : -b - 2;
      counts[b]++;
    }
    if (nan) min = max = Double.NaN;
    return new Hook.Histogram(min, max, sum, sq, counts);
  }

  private Path runWithHistograms(String name, boolean given) throws Exception {
    Path out = tmp.resolve(name);
    Path tb = tmp.resolve(name + "_tb");
    float[] data = {1, -2, 3, -4, 0.5f, (float) Math.scalb(1.0, -40)};  // sums exact in any order
    double[] asDoubles = new double[data.length];
    for (int i = 0; i < data.length; ++i) asDoubles[i] = data[i];
    try (SaveConfig sc = SaveConfig.every(1);
         ReductionConfig rc = ReductionConfig.parse("max,abs_max");
         HookOptions o = new HookOptions().saveConfig(sc).reductionConfig(rc).saveAll(true).wallTimeBase(100)
             .tensorboardDir(tb.toString());
         Hook hook = Hook.create(out.toString(), o)) {
      hook.beginStep();
      if (given) {
        Hook.DueReductions due = hook.dueReductions("g");
        assertEquals(List.of("max", "abs_max"), due.reductions);
        assertFalse(due.valueNeeded);
        assertTrue(due.histogram);
        String[] names = {"max", "max"};
        boolean[] abs = {false, true};
        double[] values = {3, 4};
        SmdException missing = assertThrows(SmdException.class,
            () -> hook.saveReductions("g", DType.FLOAT32, new long[] {6}, names, abs, values));
        assertTrue(missing.getMessage().contains("histogram"), missing.getMessage());
        SmdException wrong = assertThrows(SmdException.class, () -> hook.saveReductions("g", DType.FLOAT32,
            new long[] {6}, names, abs, values, new Hook.Histogram(0, 0, 0, 0, new long[3])));
        assertTrue(wrong.getMessage().contains("1548 buckets"), wrong.getMessage());
        hook.saveReductions("g", DType.FLOAT32, new long[] {6}, names, abs, values, histogramOf(asDoubles));
      } else {
        hook.saveTensor("g", new long[] {6}, data);
      }
    }
    return tb;
  }

  @Test
  void givenHistogramsEqualTheHooksOwn() throws Exception {
    assertEquals(1549, Hook.histogramBucketEdges().length);
    Path a = runWithHistograms("ha", false), b = runWithHistograms("hb", true);
    List<Path> fa, fb;
    try (var s = Files.walk(a)) { fa = s.filter(Files::isRegularFile).sorted().toList(); }
    try (var s = Files.walk(b)) { fb = s.filter(Files::isRegularFile).sorted().toList(); }
    assertEquals(1, fa.size());
    assertEquals(fa.size(), fb.size());
    for (int i = 0; i < fa.size(); ++i) {
      assertEquals(a.relativize(fa.get(i)), b.relativize(fb.get(i)));
      assertArrayEquals(Files.readAllBytes(fa.get(i)), Files.readAllBytes(fb.get(i)));
    }
    assertArrayEquals(Files.readAllBytes(tmp.resolve("ha/events/000000000000/000000000000_worker_0.tfevents")),
        Files.readAllBytes(tmp.resolve("hb/events/000000000000/000000000000_worker_0.tfevents")));
  }

  @Test
  void savedReductionsEqualTheHooksOwn() throws Exception {
    byte[] a = Files.readAllBytes(run("a", false));
    byte[] b = Files.readAllBytes(run("b", true));
    assertTrue(a.length > 16);
    assertArrayEquals(a, b);
  }

  /**
   * A reduction name refused (null, or holding a NUL) after the histogram's counts were taken
   * releases them: each call leaked the 12 KB copy of the counts (240 MB over this loop).
   */
  @Test
  void refusedReductionNameReleasesTheHistogramCounts() throws Exception {
    ChildJvm.assumeProcStatus();
    String output = ChildJvm.run(tmp.resolve("refused.log"), ChildJvm.FIXED_HEAP, RefusedNames.class,
        tmp.resolve("refused").toString());
    assertEquals(2, ChildJvm.checkGrowths(output, 40), output);
  }

  /** Saves reductions with a histogram and a refused name many times to a hook of args[0]. */
  public static final class RefusedNames {
    public static void main(String[] args) throws Exception {
      try (Hook h = Hook.create(args[0])) {
        h.beginStep();
        Hook.Histogram hist = new Hook.Histogram(0, 1, 1, 1, new long[Hook.histogramBucketEdges().length - 1]);
        String[][] refused = {{"min\u0000"}, {null}};
        for (String[] names : refused) {
          Class<? extends RuntimeException> expected =
              names[0] == null ? NullPointerException.class : IllegalArgumentException.class;
          for (int i = 0; i < 2_000; ++i) save(h, names, hist, expected); // warm up
          long before = ChildJvm.rssKb();
          for (int i = 0; i < 20_000; ++i) save(h, names, hist, expected);
          System.out.println("grew " + (ChildJvm.rssKb() - before) + " 20000 saveReductions(histogram, "
              + (names[0] == null ? "a null name" : "a name with a NUL") + ")");
        }
      }
    }

    private static void save(Hook h, String[] names, Hook.Histogram hist, Class<? extends RuntimeException> expected)
        throws SmdException {
      try {
        h.saveReductions("t", DType.FLOAT32, new long[] {2}, names, new boolean[] {false}, new double[] {1}, hist);
      } catch (RuntimeException e) {
        if (expected.isInstance(e)) return;
        throw e;
      }
      throw new AssertionError("no " + expected.getSimpleName());
    }
  }
}
