package ai.smd;

/**
 * What to save of a tensor (smdebug's ReductionConfig): reductions ("min", "max", "mean", "std",
 * "variance", "sum", "prod", "median", "l1", "l2", each also "abs_..."), the raw tensor, its shape.
 * Not thread-safe.
 */
public final class ReductionConfig extends NativeObject<smd_reduction_config> implements AutoCloseable {
  private ReductionConfig(long ptr) {
    super(new smd_reduction_config(ptr, false), ptr, SmdNativeJNI::delete_smd_reduction_config);
  }

  /** No reductions, no raw tensor, no shape. */
  public ReductionConfig() throws SmdException {
    this(create());
  }

  private static long create() throws SmdException {
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_reduction_config_create(out);
    return out[0];
  }

  /** Parses a comma-separated list as SageMaker passes it ("min,abs_mean,l2_norm"). */
  public static ReductionConfig parse(String reductions) throws SmdException {
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_reduction_config_parse(reductions, out);
    return new ReductionConfig(out[0]);
  }

  /** Adds reductions by name. */
  public ReductionConfig add(String... names) throws SmdException {
    for (String n : names) {
      requireNonNull(n, "reduction name");
      SmdNative.smd_reduction_config_add(p(), n);
    }
    return this;
  }

  public ReductionConfig setSaveRawTensor(boolean save) throws SmdException {
    SmdNative.smd_reduction_config_set_save_raw_tensor(p(), save);
    return this;
  }

  public ReductionConfig setSaveShape(boolean save) throws SmdException {
    SmdNative.smd_reduction_config_set_save_shape(p(), save);
    return this;
  }

  /** An independent copy. */
  public ReductionConfig copy() throws SmdException {
    long[] out = new long[1];
    SmdNative.smd_reduction_config_clone(p(), out);
    return new ReductionConfig(out[0]);
  }

  @Override
  public void close() {
    release();
  }
}
