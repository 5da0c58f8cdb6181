// CrossDump: the cross-language test's canonical dump of a trial, read through the Java binding:
//   java -cp smd.jar tests/cross/CrossDump.java TRIAL
// Format "smd-cross/1" (the same program exists for Go, Rust and the real smdebug):
//   one line "T" TAB name TAB global step TAB mode TAB mode step TAB dtype TAB shape TAB data per
//   tensor and global step of tensor.steps(GLOBAL), tensors in the trial's (byte) order; dtype is
//   numpy's name, shape comma-separated, data the hex of the little-endian C-order bytes (for str:
//   the hex of each string's UTF-8 bytes, comma-separated). A step without a value has dtype,
//   shape and data "-" (and shape the saved shape, if any). Then, if reductions were saved there,
//   "R" TAB name TAB step TAB name=hex of the float64's little-endian bytes, comma-separated,
//   sorted by reduction name.
import ai.smd.DType;
import ai.smd.Mode;
import ai.smd.SmdException;
import ai.smd.Tensor;
import ai.smd.TensorUnavailableForStep;
import ai.smd.ShapeUnavailableForStep;
import ai.smd.Trial;
import ai.smd.Value;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public class CrossDump {
  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static String shape(long[] s) {
    List<String> p = new ArrayList<>();
    for (long d : s) p.add(Long.toString(d));
    return String.join(",", p);
  }

  public static void main(String[] args) throws Exception {
    StringBuilder out = new StringBuilder("smd-cross/1\n");
    try (Trial t = Trial.open(args[0])) {
      for (String name : t.tensorNames()) {
        try (Tensor x = t.tensor(name)) {
          for (long g : x.steps()) {
            String mode = t.mode(g).name();
            long ms = t.modeStep(g);
            String dtype = "-";
            String sh = "-";
            String data = "-";
            try (Value v = x.value(g)) {
              dtype = v.dtype().numpyName();
              sh = shape(v.shape());
              if (v.dtype() == DType.STRING) {
                List<String> parts = new ArrayList<>();
                for (long i = 0; i < v.count(); ++i) parts.add(hex(v.stringBytes(i)));
                data = String.join(",", parts);
              } else {
                data = hex(v.toByteArray());
              }
            } catch (TensorUnavailableForStep e) {
              try {
                sh = shape(x.shape(g, Mode.GLOBAL, null));
              } catch (ShapeUnavailableForStep | TensorUnavailableForStep e2) {
                sh = "-";
              }
            }
            out.append(String.join("\t", "T", name, Long.toString(g), mode, Long.toString(ms), dtype, sh, data)).append('\n');
            Map<String, Double> red = new TreeMap<>(x.reductionValues(g, Mode.GLOBAL, null));
            if (!red.isEmpty()) {
              List<String> parts = new ArrayList<>();
              for (Map.Entry<String, Double> e : red.entrySet()) {
                ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble(e.getValue());
                parts.add(e.getKey() + "=" + hex(b.array()));
              }
              out.append(String.join("\t", "R", name, Long.toString(g), String.join(",", parts))).append('\n');
            }
          }
        }
      }
    }
    System.out.print(out);
  }
}
