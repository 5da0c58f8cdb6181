// CrossWriter: writes the cross-language test's trial from Java (run as a single-file program):
//   java -cp smd.jar tests/cross/CrossWriter.java OUT_DIR
// Three modes, twelve global steps, every dtype smdebug reads (float16/32/64, int8/16/32/64,
// uint8, bool, str), special float values, scalars, a reductions-only collection with shapes,
// tensors from direct ByteBuffers and from arrays, and a non-ASCII tensor name. Every value is a
// function of the step, so any reader can be compared with any other.
import ai.smd.Collection;
import ai.smd.DType;
import ai.smd.Hook;
import ai.smd.HookOptions;
import ai.smd.Mode;
import ai.smd.ReductionConfig;
import ai.smd.SaveConfig;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

public class CrossWriter {
  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: CrossWriter OUT_DIR");
      System.exit(2);
    }
    try (SaveConfig every1 = SaveConfig.every(1);
         SaveConfig every3 = SaveConfig.every(3);
         ReductionConfig red = ReductionConfig.parse("min,max,mean,abs_mean,l2,std").setSaveShape(true);
         HookOptions o = new HookOptions().saveConfig(every1).includeRegex("^(?!gradient/)").includeCollection("gradients")
             .worker("worker_0").wallTimeBase(1.7e9);
         Hook h = Hook.create(args[0], o);
         Collection grads = h.collection("gradients")) {
      // Reductions and shapes only, and not raw too: smdebug loses a raw value saved with a shape
      // at the same step (docs/compatibility.md R2), which smd does not.
      grads.saveConfig(every3).reductionConfig(red);
      Mode[] plan = {Mode.TRAIN, Mode.TRAIN, Mode.TRAIN, Mode.TRAIN, Mode.EVAL, Mode.EVAL, Mode.TRAIN, Mode.TRAIN,
                     Mode.PREDICT, Mode.TRAIN, Mode.EVAL, Mode.TRAIN};
      for (int g = 0; g < plan.length; ++g) {
        if (g == 0 || plan[g] != plan[g - 1]) h.setMode(plan[g]);
        h.beginStep();
        int s = g;
        float[] w = new float[12];
        for (int i = 0; i < w.length; ++i) w[i] = (float) Math.sin(0.1 * (i + 1) * (s + 1));
        h.saveTensor("layer1/weight", new long[] {3, 4}, w);
        h.saveTensor("layer1/bias", new long[] {4}, new double[] {s, -s, s / 3.0, 1e-300});
        h.saveTensor("counts", new long[] {2, 2}, new long[] {s, -1L << 40, Long.MAX_VALUE - s, Long.MIN_VALUE});
        h.saveTensor("ids", new long[] {3}, new int[] {s, -s, Integer.MAX_VALUE});
        h.saveTensor("mask", new long[] {2, 2}, new boolean[] {true, s % 2 == 0, false, s % 3 == 0});
        h.saveTensor("special", new long[] {6},
            new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0.0f, Float.MIN_VALUE, s});
        ByteBuffer b8 = ByteBuffer.allocateDirect(5);
        for (int i = 0; i < 5; ++i) b8.put((byte) (i * 60 - s));
        b8.flip();
        h.saveTensor("bytes/int8", DType.INT8, new long[] {5}, b8);
        h.saveTensor("bytes/uint8", DType.UINT8, new long[] {5}, b8);
        ByteBuffer b16 = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 4; ++i) b16.putShort((short) (1000 * i - 7 * s));
        b16.flip();
        h.saveTensor("short/int16", DType.INT16, new long[] {2, 2}, b16);
        ByteBuffer f16 = ByteBuffer.allocateDirect(6).order(ByteOrder.LITTLE_ENDIAN);
        f16.putShort((short) 0x3C00).putShort((short) 0xC000).putShort((short) (0x3800 + s)); // 1, -2, ~0.5
        f16.flip();
        h.saveTensor("half", DType.FLOAT16, new long[] {3}, f16);
        h.saveTensor("empty", new long[] {0, 3}, new float[0]);
        h.saveTensor("zero_d", new long[] {}, new double[] {s * 0.25});
        h.saveTensor("gradient/layer1", new long[] {2, 3}, new float[] {-s, 1, 2, 3, 4, 0.5f}, "gradients");
        h.saveTensor("größe/ü", new long[] {1}, new float[] {s});
        h.saveStrings("labels", List.of("step " + s, "ü€\uD83D\uDE00", ""));
        h.saveScalar("loss", 1.0 / (s + 1));
        h.saveScalar("seen", (long) s * 1000);
        h.saveScalar("odd", s % 2 == 1);
      }
    }
    System.out.println("wrote " + args[0]);
  }
}
