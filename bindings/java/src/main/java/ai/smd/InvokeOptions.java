package ai.smd;

/** Options of {@link Rule#invoke}. Every setter returns this. Not thread-safe. */
public final class InvokeOptions extends NativeObject<smd_rule_invoke_options> implements AutoCloseable {
  /** Defaults: findings collected, wait as long as a running job takes, every step evaluated. */
  public InvokeOptions() throws SmdException {
    this(create());
  }

  private InvokeOptions(long ptr) {
    super(new smd_rule_invoke_options(ptr, false), ptr, SmdNativeJNI::delete_smd_rule_invoke_options);
  }

  private static long create() throws SmdException {
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_rule_invoke_options_create(out);
    return out[0];
  }

  /** Raise the stop-training signal (stop_training.smd in the trial folder) when a rule fires. */
  public InvokeOptions stopTraining(boolean on) throws SmdException {
    SmdNative.smd_rule_invoke_options_set_stop_training(p(), on);
    return this;
  }

  /** Stop evaluating a rule once its condition was met. */
  public InvokeOptions stopAtFirst(boolean on) throws SmdException {
    SmdNative.smd_rule_invoke_options_set_stop_at_first(p(), on);
    return this;
  }

  /** Keep findings in the rule ({@link Rule#findings()}); default true. */
  public InvokeOptions collectFindings(boolean on) throws SmdException {
    SmdNative.smd_rule_invoke_options_set_collect_findings(p(), on);
    return this;
  }

  /** Append each finding's line to this file (null: none). */
  public InvokeOptions messageFile(String path) throws SmdException {
    SmdNative.smd_rule_invoke_options_set_message_file(p(), path);
    return this;
  }

  /** The longest wait for one step of a running job: -1 as long as it takes, 0 not at all. */
  public InvokeOptions waitTimeoutMs(long ms) throws SmdException {
    SmdNative.smd_rule_invoke_options_set_wait_timeout_ms(p(), ms);
    return this;
  }

  /** How often a wait wakes up (default 1000 ms). */
  public InvokeOptions waitSliceMs(long ms) throws SmdException {
    SmdNative.smd_rule_invoke_options_set_wait_slice_ms(p(), ms);
    return this;
  }

  @Override
  public void close() {
    release();
  }
}
