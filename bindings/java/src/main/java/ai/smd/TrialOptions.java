package ai.smd;

/** Options of {@link Trial#open(String, TrialOptions)}. Every setter returns this. Not thread-safe. */
public final class TrialOptions extends NativeObject<smd_trial_options> implements AutoCloseable {
  /** Every default: all steps, automatic refresh on, no collection wait, a 64 MiB cache. */
  public TrialOptions() throws SmdException {
    this(create());
  }

  private TrialOptions(long ptr) {
    super(new smd_trial_options(ptr, false), ptr, SmdNativeJNI::delete_smd_trial_options);
  }

  private static long create() throws SmdException {
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_trial_options_create(out);
    return out[0];
  }

  /** smdebug's range_steps: only global steps begin &lt;= step &lt; end (-1: no bound). */
  public TrialOptions rangeSteps(long begin, long end) throws SmdException {
    SmdNative.smd_trial_options_set_range_steps(p(), begin, end);
    return this;
  }

  /**
   * Whether queries refresh the trial by themselves when they need newer data (default true);
   * fixed for the trial's life. {@link Trial#refreshScope} overrides it on one thread for a while.
   */
  public TrialOptions autoRefresh(boolean on) throws SmdException {
    SmdNative.smd_trial_options_set_auto_refresh(p(), on);
    return this;
  }

  /** How long open waits for the collections file of a job that has not ended. */
  public TrialOptions collectionWaitMs(long ms) throws SmdException {
    SmdNative.smd_trial_options_set_collection_wait_ms(p(), ms);
    return this;
  }

  public TrialOptions cacheBytes(long bytes) throws SmdException {
    if (bytes < 0) throw new IllegalArgumentException("cache bytes must be >= 0");
    SmdNative.smd_trial_options_set_cache_bytes(p(), bytes);
    return this;
  }

  /**
   * How an s3:// trial is reached (copied: the StorageOptions may be closed afterwards); null
   * goes back to none set (the AWS configuration chain).
   */
  public TrialOptions storage(StorageOptions storage) throws SmdException {
    SmdNative.smd_trial_options_set_storage(p(), storage == null ? null : storage.p());
    return this;
  }

  @Override
  public void close() {
    release();
  }
}
