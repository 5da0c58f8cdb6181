package ai.smd;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The Java binding's cost next to the same C calls made in the same JVM (bench_bindings_jni.c,
 * through JNI, timed inside C), for tests/bench/bench_bindings.sh. Prints "name value" lines:
 *   java_idle_ns c_idle_ns             save_tensor of a 64x64 float32 tensor, nothing due
 *   java_big_us java_big_buffer_us c_big_us   a 4 MiB float32 save_tensor that is due
 *                                       (float[] and direct ByteBuffer; no copy by the binding)
 *   java_read_ns java_read_double_ns c_read_ns  one value read (Tensor.value + buffer view of
 *                                       element 0 + close; Tensor.value + getDouble + close)
 * Best of 5 rounds after a warm-up. SMD_BENCH_TINY=1 (bench_bindings.sh --tiny): one round of
 * each, iteration counts divided by 1000 (at least 1), so that the test command runs it in a
 * moment; its figures mean nothing.
 *
 *   java -cp smd.jar:classes -Djava.library.path=DIR ai.smd.BenchBindings [OUT_DIR]
 */
public final class BenchBindings {
  static native long cSaveNotDue(long hook, ByteBuffer data, long n);
  static native long cSaveBig(long hook, ByteBuffer data, int first, int n);
  static native long cRead(long tensor, long steps, long rounds);

  interface Body {
    void run() throws Exception;
  }

  static double best(int rounds, long iters, Body f) throws Exception {
    double best = Double.MAX_VALUE;
    for (int r = 0; r < rounds; ++r) {
      long t = System.nanoTime();
      for (long i = 0; i < iters; ++i) f.run();
      best = Math.min(best, (System.nanoTime() - t) / (double) iters);
    }
    return best;
  }

  static final boolean TINY = "1".equals(System.getenv("SMD_BENCH_TINY"));
  static final int ROUNDS = TINY ? 1 : 5;

  /** An iteration count: {@code iters}, or divided by 1000 (at least 1) when tiny. */
  static long n(long iters) {
    return TINY ? Math.max(1, iters / 1000) : iters;
  }

  static Hook hook(Path dir, long interval) throws SmdException {
    try (SaveConfig sc = SaveConfig.every(interval); HookOptions o = new HookOptions().saveConfig(sc).saveAll(true)) {
      return Hook.create(dir.toString(), o);
    }
  }

  static void check(long rc) {
    if (rc != 0) throw new IllegalStateException("a C call failed with smd code " + rc);
  }

  public static void main(String[] args) throws Exception {
    Native.load();
    System.loadLibrary("smd_bench_jni");
    Path base = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("smd-java-bench");
    long[] shape = {64, 64};
    float[] small = new float[64 * 64];
    java.util.Arrays.fill(small, 0.5f);
    ByteBuffer smallC = ByteBuffer.allocateDirect(small.length * 4).order(ByteOrder.LITTLE_ENDIAN);

    // 1. Nothing due: step 1 of a hook saving every 1000 steps.
    double idleJava;
    double idleC;
    try (Hook h = hook(base.resolve("idle"), 1000)) {
      h.beginStep();
      h.beginStep();
      long hp = smd_hook.getCPtr(h.p());
      best(TINY ? 1 : 3, n(1_000_000), () -> h.saveTensor("layer1/weight", shape, small));
      idleJava = best(ROUNDS, n(2_000_000), () -> h.saveTensor("layer1/weight", shape, small));
      check(cSaveNotDue(hp, smallC, n(200_000)));
      double c = Double.MAX_VALUE;
      for (int r = 0; r < ROUNDS; ++r) {
        long t = System.nanoTime();
        check(cSaveNotDue(hp, smallC, n(2_000_000)));
        c = Math.min(c, (System.nanoTime() - t) / (double) n(2_000_000));
      }
      idleC = c;
    }

    // 2. A 4 MiB save that is due, every step: batches of 8 saves alternating C, Java float[],
    //    Java direct ByteBuffer, each starting with an empty queue (flush); best batch after 2
    //    (tiny: one round of batches of 1).
    float[] big = new float[1 << 20];
    java.util.Arrays.fill(big, 1.25f);
    ByteBuffer bigBuf = ByteBuffer.allocateDirect(4 << 20).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < big.length; ++i) bigBuf.putFloat(4 * i, 1.25f);
    long[] bshape = {1024, 1024};
    double bigC = 0, bigJava = 0, bigBufJava = 0;
    int batch = TINY ? 1 : 8;
    int bigRounds = TINY ? 1 : 14;
    int warmUp = TINY ? 0 : 2;
    String[] jn = new String[batch];
    String[] bn = new String[batch];
    for (int i = 0; i < batch; ++i) {
      jn[i] = "j" + i;
      bn[i] = "b" + i;
    }
    try (Hook h = hook(base.resolve("big"), 1)) {
      long hp = smd_hook.getCPtr(h.p());
      for (int round = 0; round < bigRounds; ++round) {
        h.beginStep();
        double[] r = new double[3];
        for (int k = 0; k < 3; ++k) {
          int which = (k + round) % 3;
          long t = System.nanoTime();
          if (which == 0) {
            check(cSaveBig(hp, bigBuf, 0, batch));
          } else if (which == 1) {
            for (int i = 0; i < batch; ++i) h.saveTensor(jn[i], bshape, big);
          } else {
            for (int i = 0; i < batch; ++i) h.saveTensor(bn[i], DType.FLOAT32, bshape, bigBuf);
          }
          r[which] = (System.nanoTime() - t) / (batch * 1e3);
          h.flush();
        }
        if (round >= warmUp) {
          bigC = bigC == 0 ? r[0] : Math.min(bigC, r[0]);
          bigJava = bigJava == 0 ? r[1] : Math.min(bigJava, r[1]);
          bigBufJava = bigBufJava == 0 ? r[2] : Math.min(bigBufJava, r[2]);
        }
      }
    }

    // 3. Per-value read: 200 steps of a small tensor, cached.
    int steps = (int) n(200);
    try (Hook h = hook(base.resolve("read"), 1)) {
      for (int s = 0; s < steps; ++s) {
        h.beginStep();
        h.saveTensor("v", new long[] {4}, new float[] {s, 1, 2, 3});
      }
    }
    double readJava, readJavaDouble, readC;
    try (Trial t = Trial.open(base.resolve("read").toString()); Tensor x = t.tensor("v")) {
      x.values(Mode.GLOBAL, null).values().forEach(Value::close); // warm the cache
      float[] sink = new float[1];
      Body javaRead = () -> {
        for (int s = 0; s < steps; ++s) {
          try (Value v = x.value(s)) {
            sink[0] += v.buffer().getFloat(0);
          }
        }
      };
      Body javaReadDouble = () -> {
        for (int s = 0; s < steps; ++s) {
          try (Value v = x.value(s)) {
            sink[0] += (float) v.getDouble(0);
          }
        }
      };
      best(TINY ? 1 : 3, n(2000), javaRead);
      best(TINY ? 1 : 3, n(2000), javaReadDouble);
      readJava = best(ROUNDS, n(200), javaRead) / steps;
      readJavaDouble = best(ROUNDS, n(200), javaReadDouble) / steps;
      long tp = smd_tensor.getCPtr(x.p());
      check(cRead(tp, steps, n(200)));
      double c = Double.MAX_VALUE;
      for (int r = 0; r < ROUNDS; ++r) {
        long t0 = System.nanoTime();
        check(cRead(tp, steps, n(200)));
        c = Math.min(c, (System.nanoTime() - t0) / ((double) steps * n(200)));
      }
      readC = c;
      if (sink[0] == 42) System.out.print("");
    }
    if (args.length == 0) {
      try (Stream<Path> s = Files.walk(base)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    System.out.printf("java_idle_ns %.1f%nc_idle_ns %.1f%n", idleJava, idleC);
    System.out.printf("java_big_us %.1f%njava_big_buffer_us %.1f%nc_big_us %.1f%n", bigJava, bigBufJava, bigC);
    System.out.printf("java_read_ns %.1f%njava_read_double_ns %.1f%nc_read_ns %.1f%n", readJava, readJavaDouble, readC);
  }
}
