package ai.smd;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One named tensor of a trial. Per-step methods take a step, the mode it is counted in
 * ({@link Mode#GLOBAL}: a global step) and a worker (null: the first worker that saved it), and
 * throw smdebug's exceptions: {@link TensorUnavailableForStep}, {@link StepUnavailable},
 * {@link StepNotYetAvailable}, {@link NoMoreData}, {@link InvalidWorker}. Thread-safe; stays
 * valid after its trial is closed.
 */
public final class Tensor extends NativeObject<smd_tensor> implements AutoCloseable {
  /** The dtype and shape of a saved value. */
  public record Info(DType dtype, long[] shape) {}

  Tensor(long ptr) {
    super(new smd_tensor(ptr, false), ptr, SmdNativeJNI::delete_smd_tensor);
  }

  public String name() {
    return SmdNative.smd_tensor_name(p());
  }

  /**
   * smdebug's {@code Tensor.original_name}: the "originalname" of the last shape entry loaded for
   * the tensor (smdebug's TensorFlow hooks write the variable's own name there, such as
   * "dense/kernel:0"; the name itself when the entry has none); empty when its shape was not
   * saved (save_shape).
   */
  public Optional<String> originalName() throws SmdException {
    String[] out = new String[1];
    SmdNative.smd_tensor_original_name(p(), out);
    return Optional.ofNullable(out[0]);
  }

  /** The global steps at which anything of this tensor was saved. */
  public long[] steps() throws SmdException {
    return steps(Mode.GLOBAL, false);
  }

  public long[] steps(Mode mode) throws SmdException {
    return steps(mode, false);
  }

  public long[] steps(Mode mode, boolean showIncomplete) throws SmdException {
    requireNonNull(mode, "mode");
    long[][] out = new long[1][];
    SmdNative.smd_tensor_steps(p(), mode.value, showIncomplete, out);
    return out[0];
  }

  /** The value at a global step. */
  public Value value(long step) throws SmdException {
    return value(step, Mode.GLOBAL, null);
  }

  public Value value(long step, Mode mode) throws SmdException {
    return value(step, mode, null);
  }

  public Value value(long step, Mode mode, String worker) throws SmdException {
    requireNonNull(mode, "mode");
    long[] out = new long[1];
    SmdNative.smd_tensor_value(p(), step, mode.value, worker, out);
    return new Value(out[0]);
  }

  /** Every value of the complete steps of a mode (smdebug's values()), by step. */
  public SortedMap<Long, Value> values(Mode mode, String worker) throws SmdException {
    requireNonNull(mode, "mode");
    long[][] out = new long[2][];
    SmdNative.smd_tensor_values(p(), mode.value, worker, out);
    SortedMap<Long, Value> r = new TreeMap<>();
    for (int i = 0; i < out[0].length; ++i) r.put(out[0][i], new Value(out[1][i]));
    return r;
  }

  /** The shape at a step (the saved shape, else the value's). */
  public long[] shape(long step, Mode mode, String worker) throws SmdException {
    requireNonNull(mode, "mode");
    long[][] out = new long[1][];
    SmdNative.smd_tensor_shape(p(), step, mode.value, worker, out);
    return out[0];
  }

  /** The dtype and shape of the value at a step, without reading the value. */
  public Info valueInfo(long step, Mode mode, String worker) throws SmdException {
    requireNonNull(mode, "mode");
    long[][] out = new long[2][];
    SmdNative.smd_tensor_value_info(p(), step, mode.value, worker, out);
    return new Info(DType.of((int) out[0][0]), out[1]);
  }

  /** The shapes of every complete step of a mode, by step. */
  public SortedMap<Long, long[]> shapes(Mode mode, String worker) throws SmdException {
    requireNonNull(mode, "mode");
    long[][] out = new long[3][];
    SmdNative.smd_tensor_shapes(p(), mode.value, worker, out);
    SortedMap<Long, long[]> r = new TreeMap<>();
    for (int i = 0; i < out[0].length; ++i) {
      int from = (int) out[1][i];
      int to = (int) out[1][i + 1];
      long[] dims = new long[to - from];
      System.arraycopy(out[2], from, dims, 0, dims.length);
      r.put(out[0][i], dims);
    }
    return r;
  }

  /**
   * A reduction at a step ("min", "abs_mean", "l2", ...): the saved one, else computed from the
   * saved value.
   */
  public double reductionValue(long step, Mode mode, String worker, String reduction) throws SmdException {
    requireNonNull(mode, "mode");
    requireNonNull(reduction, "reduction name");
    long[] out = new long[1];
    SmdNative.smd_tensor_reduction_value(p(), step, mode.value, worker, reduction, out);
    try (Value v = new Value(out[0])) {
      return v.getDouble(0);
    }
  }

  /** The names of the reductions saved at a step, sorted. */
  public List<String> reductionNames(long step, Mode mode, String worker) throws SmdException {
    requireNonNull(mode, "mode");
    String[][] out = new String[1][];
    SmdNative.smd_tensor_reduction_names(p(), step, mode.value, worker, out);
    return List.of(out[0]);
  }

  /** The reductions saved at a step (smdebug's reduction_values()), by name. */
  public Map<String, Double> reductionValues(long step, Mode mode, String worker) throws SmdException {
    requireNonNull(mode, "mode");
    Object[] out = new Object[2];
    SmdNative.smd_tensor_reduction_values(p(), step, mode.value, worker, out);
    String[] names = (String[]) out[0];
    long[] ptrs = (long[]) out[1];
    List<Value> vs = new ArrayList<>();
    for (long ptr : ptrs) vs.add(new Value(ptr));
    Map<String, Double> r = new LinkedHashMap<>();
    try {
      for (int i = 0; i < names.length; ++i) r.put(names[i], vs.get(i).getDouble(0));
    } finally {
      for (Value v : vs) v.close();
    }
    return Collections.unmodifiableMap(r);
  }

  /** The workers that saved anything of this tensor at a step, sorted. */
  public List<String> workers(long step, Mode mode) throws SmdException {
    requireNonNull(mode, "mode");
    String[][] out = new String[1][];
    SmdNative.smd_tensor_workers(p(), step, mode.value, out);
    return List.of(out[0]);
  }

  /** The complete steps of a mode up to and including step, the last n (0: all). */
  public long[] prevSteps(long step, Mode mode, long n) throws SmdException {
    requireNonNull(mode, "mode");
    if (n < 0) throw new IllegalArgumentException("n must be >= 0");
    long[][] out = new long[1][];
    SmdNative.smd_tensor_prev_steps(p(), step, mode.value, n, out);
    return out[0];
  }

  @Override
  public void close() {
    release();
  }
}
