package ai.smd;

/**
 * Options of {@link Rule#invoke}. Every setter returns this. Not thread-safe. The options cannot be
 * closed while an invocation uses them (from one of their listeners, say): {@link #close()} then
 * throws {@link IllegalStateException}.
 */
public final class InvokeOptions extends NativeObject<smd_rule_invoke_options> implements AutoCloseable {
  /** Called for each finding of a met condition, on the invoking thread. */
  @FunctionalInterface
  public interface FindingListener {
    /** Return false (or throw) to cancel the invocation (it then throws CANCELLED). */
    boolean onFinding(String rule, Finding finding) throws Exception;
  }

  /** Called after each step of each rule, and about once a second while waiting for a step. */
  @FunctionalInterface
  public interface ProgressListener {
    /**
     * {@code rule} is null while waiting. Return false (or throw) to cancel: how an open-ended
     * invocation of a running job is stopped.
     */
    boolean onProgress(String rule, long step, RuleOutcome outcome) throws Exception;
  }

  final InvokeCallbacks callbacks = new InvokeCallbacks();
  /** The native global reference to {@link #callbacks}, released with the options. */
  private final long[] payload;
  /** Invocations in progress: the options cannot be freed under them (e.g. from a listener). */
  private int invoking;

  /** Defaults: findings collected, wait as long as a running job takes, every step evaluated. */
  public InvokeOptions() throws SmdException {
    this(create(), new long[1]);
  }

  private InvokeOptions(long ptr, long[] payload) {
    super(new smd_rule_invoke_options(ptr, false), ptr, p -> {
      SmdNativeJNI.delete_smd_rule_invoke_options(p);
      synchronized (payload) {
        SmdNative.smd_java_rule_release(payload[0]);
        payload[0] = 0;
      }
    });
    this.payload = payload;
  }

  private void hookCallbacks() throws SmdException {
    synchronized (payload) {
      if (payload[0] != 0) return;
      long[] out = new long[1];
      SmdNative.smd_java_invoke_options_set_callbacks(p(), callbacks, out);
      payload[0] = out[0];
    }
  }

  /** Calls the listener for each finding (null: none). */
  public InvokeOptions onFinding(FindingListener listener) throws SmdException {
    p();
    callbacks.finding = listener;
    if (listener != null) hookCallbacks();
    return this;
  }

  /** Calls the listener after each step and while waiting (null: none). */
  public InvokeOptions onProgress(ProgressListener listener) throws SmdException {
    p();
    callbacks.progress = listener;
    if (listener != null) hookCallbacks();
    return this;
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

  /** The proxy for an invocation, counted until {@link #leave()}. */
  synchronized smd_rule_invoke_options enter() {
    smd_rule_invoke_options o = p();
    ++invoking;
    return o;
  }

  synchronized void leave() {
    --invoking;
  }

  /**
   * Frees the options. Throws {@link IllegalStateException} while an invocation uses them (a
   * listener closing its own options): close them once {@link Rule#invoke} has returned.
   */
  @Override
  public synchronized void close() {
    if (invoking > 0) throw new IllegalStateException("InvokeOptions are used by an invocation; close them afterwards");
    release();
  }
}
