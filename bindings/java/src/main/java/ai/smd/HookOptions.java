package ai.smd;

/**
 * Options of a {@link Hook} (smdebug's hook arguments and more). Every setter returns this.
 * The configurations passed in are copied. Not thread-safe.
 */
public final class HookOptions extends NativeObject<smd_hook_options> implements AutoCloseable {
  /** Every default: save every 500 steps, raw tensors, no reductions, worker from the environment. */
  public HookOptions() throws SmdException {
    this(create());
  }

  private HookOptions(long ptr) {
    super(new smd_hook_options(ptr, false), ptr, SmdNativeJNI::delete_smd_hook_options);
  }

  private static long create() throws SmdException {
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_hook_options_create(out);
    return out[0];
  }

  public HookOptions saveConfig(SaveConfig config) throws SmdException {
    requireNonNull(config, "save config");
    SmdNative.smd_hook_options_set_save_config(p(), config.p());
    return this;
  }

  public HookOptions reductionConfig(ReductionConfig config) throws SmdException {
    requireNonNull(config, "reduction config");
    SmdNative.smd_hook_options_set_reduction_config(p(), config.p());
    return this;
  }

  public HookOptions includeRegex(String regex) throws SmdException {
    SmdNative.smd_hook_options_add_include_regex(p(), regex);
    return this;
  }

  public HookOptions includeCollection(String name) throws SmdException {
    SmdNative.smd_hook_options_add_include_collection(p(), name);
    return this;
  }

  public HookOptions saveAll(boolean on) throws SmdException {
    SmdNative.smd_hook_options_set_save_all(p(), on);
    return this;
  }

  /** Whether every worker writes its own files (true) or only the chief (false, the default). */
  public HookOptions includeAllWorkers(boolean all) throws SmdException {
    SmdNative.smd_hook_options_set_include_workers(p(), all ? 1 : 0);
    return this;
  }

  public HookOptions worker(String worker) throws SmdException {
    SmdNative.smd_hook_options_set_worker(p(), worker);
    return this;
  }

  public HookOptions numWorkers(long n) throws SmdException {
    SmdNative.smd_hook_options_set_num_workers(p(), n);
    return this;
  }

  public HookOptions dryRun(boolean on) throws SmdException {
    SmdNative.smd_hook_options_set_dry_run(p(), on);
    return this;
  }

  public HookOptions realPayloadCrc(boolean on) throws SmdException {
    SmdNative.smd_hook_options_set_real_payload_crc(p(), on);
    return this;
  }

  /**
   * Keeps a TensorFlow name's {@code :<digits>} in its reduction tags, so that the reductions of
   * {@code dense/kernel:0} belong to that name (smdebug's TensorFlow hooks). By default the index
   * is dropped and they belong to {@code dense/kernel} (smdebug's other hooks).
   */
  public HookOptions keepColonIndex(boolean on) throws SmdException {
    SmdNative.smd_hook_options_set_keep_colon_index(p(), on);
    return this;
  }

  /** Seconds since the epoch that wall times count from (tests: fixed wall times). */
  public HookOptions wallTimeBase(double base) throws SmdException {
    SmdNative.smd_hook_options_set_wall_time_base(p(), base);
    return this;
  }

  /** The most bytes of tensor data held for the writer at once; a save beyond it waits. */
  public HookOptions memoryBudget(long bytes) throws SmdException {
    SmdNative.smd_hook_options_set_memory_budget(p(), bytes);
    return this;
  }

  /** The most steps queued for the writer at once. */
  public HookOptions maxPendingSteps(long steps) throws SmdException {
    SmdNative.smd_hook_options_set_max_pending_steps(p(), steps);
    return this;
  }

  public HookOptions writeEndMarker(boolean on) throws SmdException {
    SmdNative.smd_hook_options_set_write_end_marker(p(), on);
    return this;
  }

  /** fsync each completed file (durability at a cost). */
  public HookOptions fsync(boolean on) throws SmdException {
    SmdNative.smd_hook_options_set_fsync(p(), on);
    return this;
  }

  public HookOptions exportTensorboard(boolean on) throws SmdException {
    SmdNative.smd_hook_options_set_export_tensorboard(p(), on);
    return this;
  }

  public HookOptions tensorboardDir(String dir) throws SmdException {
    SmdNative.smd_hook_options_set_tensorboard_dir(p(), dir);
    return this;
  }

  /**
   * How an s3:// out_dir and TensorBoard folder are reached (copied: the StorageOptions may be
   * closed afterwards); null goes back to none set (the AWS configuration chain).
   */
  public HookOptions storage(StorageOptions storage) throws SmdException {
    SmdNative.smd_hook_options_set_storage(p(), storage == null ? null : storage.p());
    return this;
  }

  @Override
  public void close() {
    release();
  }
}
