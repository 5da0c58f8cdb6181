package ai.smd;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A trial: the output of a finished or running training job, read as smdebug's Trial does
 * (steps, modes, workers, tensors, collections). Queries that need data the trial does not have
 * yet refresh automatically (smdebug's dynamic refresh), unless the trial was opened with
 * {@link TrialOptions#autoRefresh} false; a {@link #refreshScope} overrides that on one thread for
 * a while. Thread-safe; a trial's settings are fixed when it opens.
 */
public final class Trial extends NativeObject<smd_trial> implements AutoCloseable {
  private Trial(long ptr) {
    super(new smd_trial(ptr, false), ptr, SmdNativeJNI::delete_smd_trial);
  }

  /** A trial borrowed from a rule (owned by the rule; close() does nothing). */
  private Trial(smd_trial borrowed) {
    super(borrowed);
  }

  static Trial borrowed(smd_trial t) {
    return new Trial(t);
  }

  /** Opens the trial in a folder or under s3://bucket/prefix, with default options. */
  public static Trial open(String path) throws SmdException {
    return open(path, null);
  }

  /** Opens a trial with options (null: defaults; copied). */
  public static Trial open(String path, TrialOptions options) throws SmdException {
    requireNonNull(path, "trial path");
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_trial_open(path, options == null ? null : options.p(), out);
    return new Trial(out[0]);
  }

  public String path() {
    return SmdNative.smd_trial_path(p());
  }

  /** Looks for new index files now. */
  public void refresh() throws SmdException {
    SmdNative.smd_trial_refresh(p());
  }

  /**
   * Whether queries of this trial refresh by themselves on the calling thread: the setting of the
   * innermost {@link RefreshScope} of this trial open on this thread, else the one the trial was
   * opened with ({@link TrialOptions#autoRefresh}, fixed for the trial's life).
   */
  public boolean autoRefresh() {
    return SmdNative.smd_trial_auto_refresh(p());
  }

  /**
   * Opens a refresh block on the calling thread: smdebug's {@code no_refresh} ({@code on} false)
   * or {@code refresh} ({@code on} true). Until the scope is closed, queries of this trial made
   * on this thread (through any handle of it, its tensors included) refresh by themselves if
   * {@code on}, never if not; other threads are unaffected. Scopes nest: the innermost wins. Use
   * it with try-with-resources, on one thread:
   *
   * <pre>{@code
   * try (RefreshScope frozen = trial.refreshScope(false)) {
   *   long[] steps = trial.steps(); // one consistent view while the job goes on writing
   * }
   * }</pre>
   */
  public RefreshScope refreshScope(boolean on) throws SmdException {
    long[] out = new long[1];
    SmdNative.smd_trial_refresh_scope_create(p(), on, out);
    return new RefreshScope(out[0]);
  }

  /** Index files that could not be parsed, and similar problems, one line each. */
  public List<String> warnings() throws SmdException {
    String[][] out = new String[1][];
    SmdNative.smd_trial_warnings(p(), out);
    return List.of(out[0]);
  }

  /** Whether the job has ended (training_job_end.ts seen). */
  public boolean hasEnded() throws SmdException {
    boolean[] out = new boolean[1];
    SmdNative.smd_trial_has_ended(p(), out);
    return out[0];
  }

  public long numWorkers() {
    return SmdNative.smd_trial_num_workers(p());
  }

  /**
   * Whether the trial has seen the end of the job and loaded every step written before it, so that
   * no step can appear any more (smdebug's {@code trial.loaded_all_steps}): set by the first
   * refresh (the one {@code open} makes included) that found {@code training_job_end.ts} before
   * listing and could read every index file. It checks nothing itself.
   */
  public boolean loadedAllSteps() {
    return SmdNative.smd_trial_loaded_all_steps(p());
  }

  /**
   * The last global step that every worker has written (-1 before any), as smdebug's
   * {@code trial.last_complete_step}.
   */
  public long lastCompleteStep() {
    return SmdNative.smd_trial_last_complete_step(p());
  }

  /**
   * The index file after which the next refresh lists new ones, relative to the trial
   * ("index/000000000/000000000070_worker_0.json"); empty before any step is complete. smdebug's
   * {@code trial.last_index_token} is this joined to the trial's path.
   */
  public Optional<String> indexCursor() throws SmdException {
    String[] out = new String[1];
    SmdNative.smd_trial_index_cursor(p(), out);
    return Optional.ofNullable(out[0]);
  }

  /** The complete global steps. */
  public long[] steps() throws SmdException {
    return steps(Mode.GLOBAL, false);
  }

  /** The complete steps of a mode (mode steps; global steps for GLOBAL). */
  public long[] steps(Mode mode) throws SmdException {
    return steps(mode, false);
  }

  public long[] steps(Mode mode, boolean showIncomplete) throws SmdException {
    requireNonNull(mode, "mode");
    long[][] out = new long[1][];
    SmdNative.smd_trial_steps(p(), mode.value, showIncomplete, out);
    return out[0];
  }

  /** The modes the trial has steps in. */
  public List<Mode> modes() throws SmdException {
    int[][] out = new int[1][];
    SmdNative.smd_trial_modes(p(), out);
    List<Mode> r = new ArrayList<>();
    for (int m : out[0]) r.add(Mode.of(m));
    return r;
  }

  /** The mode of a global step. */
  public Mode mode(long globalStep) throws SmdException {
    int[] out = new int[1];
    SmdNative.smd_trial_mode(p(), globalStep, out);
    return Mode.of(out[0]);
  }

  /** The mode step of a global step. */
  public long modeStep(long globalStep) throws SmdException {
    long[] out = new long[1];
    SmdNative.smd_trial_mode_step(p(), globalStep, out);
    return out[0];
  }

  /** The global step of a mode step. */
  public long globalStep(Mode mode, long modeStep) throws SmdException {
    requireNonNull(mode, "mode");
    long[] out = new long[1];
    SmdNative.smd_trial_global_step(p(), modeStep, mode.value, out);
    return out[0];
  }

  /** The workers that wrote the trial, sorted. */
  public List<String> workers() throws SmdException {
    String[][] out = new String[1][];
    SmdNative.smd_trial_workers(p(), out);
    return List.of(out[0]);
  }

  /** smdebug's has_passed_step. */
  public StepState hasPassedStep(long step, Mode mode) throws SmdException {
    requireNonNull(mode, "mode");
    int[] out = new int[1];
    SmdNative.smd_trial_has_passed_step(p(), step, mode.value, out);
    return StepState.of(out[0]);
  }

  /**
   * Waits until every step is available ({@code timeoutMs} &lt; 0: as long as it takes; 0: check
   * once). Throws {@link StepUnavailable}, {@link NoMoreData} or {@link StepNotYetAvailable}
   * (timeout).
   */
  public void waitForSteps(long[] steps, Mode mode, long timeoutMs) throws SmdException {
    requireNonNull(steps, "steps");
    requireNonNull(mode, "mode");
    SmdNative.smd_trial_wait_for_steps(p(), steps, mode.value, timeoutMs);
  }

  /** Every tensor name, sorted. */
  public List<String> tensorNames() throws SmdException {
    String[][] out = new String[1][];
    SmdNative.smd_trial_tensor_names(p(), null, out);
    return List.of(out[0]);
  }

  /** The tensor names that pass a filter, sorted. */
  public List<String> tensorNames(TensorFilter filter) throws SmdException {
    requireNonNull(filter, "filter");
    long[] h = new long[1];
    SmdNative.smd_tensor_filter_create(h);
    smd_tensor_filter f = new smd_tensor_filter(h[0], true);
    try {
      if (filter.step != null) SmdNative.smd_tensor_filter_set_step(f, filter.step);
      if (filter.mode != null) SmdNative.smd_tensor_filter_set_mode(f, filter.mode.value);
      for (String r : filter.regexes) SmdNative.smd_tensor_filter_add_include_regex(f, r);
      if (filter.collection != null) SmdNative.smd_tensor_filter_set_collection(f, filter.collection);
      String[][] out = new String[1][];
      SmdNative.smd_trial_tensor_names(p(), f, out);
      return List.of(out[0]);
    } finally {
      f.delete();
    }
  }

  /** The tensor names matching a regex (search semantics). */
  public List<String> tensorNames(String regex) throws SmdException {
    return tensorNames(new TensorFilter().regex(regex));
  }

  public boolean hasTensor(String name) throws SmdException {
    requireNonNull(name, "tensor name");
    boolean[] out = new boolean[1];
    SmdNative.smd_trial_has_tensor(p(), name, out);
    return out[0];
  }

  /** The named tensor; throws {@link TensorUnavailable} if there is none. */
  public Tensor tensor(String name) throws SmdException {
    requireNonNull(name, "tensor name");
    long[] out = new long[1];
    SmdNative.smd_trial_tensor(p(), name, out);
    return new Tensor(out[0]);
  }

  public List<String> collectionNames() throws SmdException {
    String[][] out = new String[1][];
    SmdNative.smd_trial_collection_names(p(), out);
    return List.of(out[0]);
  }

  public CollectionInfo collection(String name) throws SmdException {
    requireNonNull(name, "collection name");
    long[] out = new long[1];
    SmdNative.smd_trial_collection(p(), name, out);
    return new CollectionInfo(out[0]);
  }

  /** Frees the trial (tensors and values obtained from it stay valid). */
  @Override
  public void close() {
    release();
  }
}
