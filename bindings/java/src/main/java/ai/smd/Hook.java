package ai.smd;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Writes one smdebug trial (smdebug's hook): call {@link #beginStep()} at each step boundary and
 * offer tensors with {@code saveTensor}; the hook decides from its collections and save
 * configurations whether anything is due, copies what is (direct buffers are passed by address for
 * the duration of the call; an array that may be due is copied once by the binding first, so that
 * the JVM's garbage collection is never held up while the save waits for the writer), and a
 * writer thread encodes and writes it. {@link #close()} drains everything, writes the collections
 * file and training_job_end.ts, and throws the first error met anywhere on the way. A hook still
 * open when the JVM exits is closed then (a shutdown hook; an error it meets is printed on stderr).
 *
 * <p>Thread-safe: every method may be called from any thread; calls are serialized internally.
 */
public final class Hook extends NativeObject<smd_hook> implements AutoCloseable {
  private static final String[] NO_COLLECTIONS = new String[0];
  private static final int MAX_CACHED_NAMES = 1 << 16;
  /** Tensor names as NUL-terminated UTF-8, made once per name (the save path's hot part). */
  private final ConcurrentHashMap<String, byte[]> names = new ConcurrentHashMap<>();

  private Hook(long ptr) {
    super(new smd_hook(ptr, false), ptr, SmdNativeJNI::delete_smd_hook);
    ExitCloser.register(this);
  }

  /** A hook writing to {@code outDir} (a folder or s3://bucket/prefix) with default options. */
  public static Hook create(String outDir) throws SmdException {
    return create(outDir, null);
  }

  /** A hook writing to {@code outDir} with {@code options} (null: defaults; copied). */
  public static Hook create(String outDir, HookOptions options) throws SmdException {
    requireNonNull(outDir, "out_dir");
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_hook_create(outDir, options == null ? null : options.p(), out);
    return new Hook(out[0]);
  }

  /**
   * A hook configured by SageMaker's debughookconfig.json ({@code jsonPath} null:
   * $SMDEBUG_CONFIG_FILE_PATH, else /opt/ml/input/config/debughookconfig.json); {@code options}
   * (may be null) supplies what the JSON cannot say.
   */
  public static Hook fromJsonFile(String jsonPath, HookOptions options) throws SmdException {
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_hook_create_from_json_file(jsonPath, options == null ? null : options.p(), out);
    return new Hook(out[0]);
  }

  /** Ends the current step and starts the next (the first call starts step 0). */
  public void beginStep() throws SmdException {
    SmdNative.smd_hook_begin_step(p());
  }

  /**
   * Ends the current step without beginning another: its files are completed (flush() waits for
   * them) so that a trial sees the step while the hook stays open. Saves made before the next
   * beginStep() are kept for the next step (close() begins one for them). Nothing to do when no
   * step is open.
   */
  public void endStep() throws SmdException {
    SmdNative.smd_hook_end_step(p());
  }

  /** Sets the current mode (a new mode starts at mode step -1). */
  public void setMode(Mode mode) throws SmdException {
    requireNonNull(mode, "mode");
    SmdNative.smd_hook_set_mode(p(), mode.value);
  }

  /** The current global step (-1 before the first {@link #beginStep()}). */
  public long globalStep() {
    return SmdNative.smd_hook_global_step(p());
  }

  public Mode mode() {
    return Mode.of(SmdNative.smd_hook_mode(p()));
  }

  public long modeStep() {
    return SmdNative.smd_hook_mode_step(p());
  }

  /** This hook's worker name. */
  public String worker() {
    return SmdNative.smd_hook_worker(p());
  }

  /** Whether a tensor of this name would be saved now. */
  public boolean isDue(String name) {
    requireNonNull(name, "tensor name");
    return SmdNative.smd_hook_is_due(p(), name);
  }

  /** Whether any collection is due at the current step. */
  public boolean anyDue() {
    return SmdNative.smd_hook_any_due(p());
  }

  /**
   * Whether a tensor of this name can be saved at all under the collections as they are (it can
   * belong to an included collection), whatever the step. With {@code numbered}, whether any name
   * made of {@code name} and a decimal index ("relu_output_" for "relu_output_0", ...) can. False
   * means offering it is useless until {@link #collectionsVersion()} changes.
   */
  public boolean maySave(String name, boolean numbered) {
    requireNonNull(name, "tensor name");
    return SmdNative.smd_hook_may_save(p(), name, numbered);
  }

  /**
   * A number that changes whenever the collections change (the answers of {@link #maySave} hold
   * while it stays the same): an unsigned 64-bit value, to compare for equality.
   */
  public long collectionsVersion() {
    return SmdNative.smd_hook_collections_version(p());
  }

  /** Whether a rule asked this job to stop (the stop_training.smd signal in out_dir). */
  public boolean stopRequested() throws SmdException {
    boolean[] out = new boolean[1];
    SmdNative.smd_hook_stop_requested(p(), out);
    return out[0];
  }

  private byte[] nameBytes(String name) {
    byte[] b = names.get(name);
    if (b == null) {
      if (name.indexOf('\0') >= 0) throw new IllegalArgumentException("tensor name contains a NUL character");
      byte[] u = name.getBytes(StandardCharsets.UTF_8);
      b = Arrays.copyOf(u, u.length + 1);
      if (names.size() < MAX_CACHED_NAMES) names.put(name, b);
    }
    return b;
  }

  /** The shape's element count; IllegalArgumentException for a negative dimension or an overflow. */
  private static long elements(long[] shape) {
    requireNonNull(shape, "shape");
    for (long d : shape) {
      if (d < 0) throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(shape));
    }
    long n = 1;
    try {
      for (long d : shape) n = Math.multiplyExact(n, d);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " has more elements than a long holds", e);
    }
    return n;
  }

  private static void checkCount(long[] shape, long have, String what) {
    long want = elements(shape);
    if (want != have) {
      throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " has " + want
          + " elements but the " + what + " holds " + have);
    }
  }

  private static String[] colls(String[] collections) {
    return collections == null ? NO_COLLECTIONS : collections;
  }

  /**
   * Offers a tensor whose elements (C-contiguous, little-endian, {@code dtype}) are the
   * {@code data.remaining()} bytes of a direct buffer from its position; not copied by the
   * binding, and copied by smd only if something is due. The buffer's position is unchanged.
   * {@code collections} are added to the tensor's collections (created if unknown).
   */
  public void saveTensor(String name, DType dtype, long[] shape, ByteBuffer data, String... collections)
      throws SmdException {
    requireNonNull(name, "tensor name");
    requireNonNull(dtype, "dtype");
    requireNonNull(data, "tensor data");
    if (!data.isDirect()) throw new IllegalArgumentException("tensor data must be a direct ByteBuffer");
    if (dtype == DType.STRING) throw new IllegalArgumentException("strings are saved with saveStrings");
    int pos = data.position();
    int len = data.remaining();
    long need;
    try {
      need = Math.multiplyExact(elements(shape), (long) dtype.size());
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + dtype
          + " has more bytes than a long holds", e);
    }
    if (need != len) {
      throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " of " + dtype + " needs "
          + need + " bytes but the buffer has " + len + " remaining");
    }
    SmdNative.smd_java_save_buffer(p(), nameBytes(name), dtype.value, shape, data, pos, len, colls(collections));
  }

  /** Offers a float32 tensor. */
  public void saveTensor(String name, long[] shape, float[] data, String... collections) throws SmdException {
    saveArray(name, shape, data, data == null ? 0 : data.length, DType.FLOAT32, "float[]", collections);
  }

  /** Offers a float64 tensor. */
  public void saveTensor(String name, long[] shape, double[] data, String... collections) throws SmdException {
    saveArray(name, shape, data, data == null ? 0 : data.length, DType.FLOAT64, "double[]", collections);
  }

  /** Offers an int64 tensor. */
  public void saveTensor(String name, long[] shape, long[] data, String... collections) throws SmdException {
    saveArray(name, shape, data, data == null ? 0 : data.length, DType.INT64, "long[]", collections);
  }

  /** Offers an int32 tensor. */
  public void saveTensor(String name, long[] shape, int[] data, String... collections) throws SmdException {
    saveArray(name, shape, data, data == null ? 0 : data.length, DType.INT32, "int[]", collections);
  }

  /** Offers a bool tensor (one byte 0/1 each). */
  public void saveTensor(String name, long[] shape, boolean[] data, String... collections) throws SmdException {
    saveArray(name, shape, data, data == null ? 0 : data.length, DType.BOOL, "boolean[]", collections);
  }

  // The primitive-array overloads: checks, then the native save (which copies a due array first).
  private void saveArray(String name, long[] shape, Object data, int length, DType dtype, String what,
                         String[] collections) throws SmdException {
    requireNonNull(name, "tensor name");
    requireNonNull(data, "tensor data");
    checkCount(shape, length, what);
    SmdNative.smd_java_save_array(p(), nameBytes(name), dtype.value, shape, data, dtype.size(), colls(collections));
  }

  /** Saves "scalar/&lt;name&gt;" (float64) in the current step, whatever the save configuration. */
  public void saveScalar(String name, double value) throws SmdException {
    requireNonNull(name, "scalar name");
    SmdNative.smd_hook_save_scalar(p(), name, value);
  }

  /**
   * The same with the record's wall time, {@code timestamp} seconds since the Unix epoch (smdebug's
   * {@code save_scalar(name, value, timestamp=...)}); 0 means the time of the call.
   */
  public void saveScalar(String name, double value, double timestamp) throws SmdException {
    requireNonNull(name, "scalar name");
    SmdNative.smd_java_save_scalar_timestamped(p(), name, value, timestamp);
  }

  /** The same keeping an integer type (int64), as smdebug does for Python ints. */
  public void saveScalar(String name, long value) throws SmdException {
    requireNonNull(name, "scalar name");
    SmdNative.smd_java_save_scalar_long(p(), name, value);
  }

  /** The same for a bool. */
  public void saveScalar(String name, boolean value) throws SmdException {
    requireNonNull(name, "scalar name");
    SmdNative.smd_java_save_scalar_bool(p(), name, value);
  }

  /** Saves a 1-D array of strings (UTF-8; smdebug reads a numpy str array). */
  public void saveStrings(String name, List<String> strings, String... collections) throws SmdException {
    requireNonNull(name, "tensor name");
    requireNonNull(strings, "strings");
    SmdNative.smd_java_save_strings(p(), name, strings.toArray(new String[0]), colls(collections));
  }

  /** What {@link #saveTensor} would write for a tensor of some name now. */
  public static final class DueReductions {
    /** The due reductions in write order ("min", "abs_l2", ...). */
    public final List<String> reductions;
    /** Whether the tensor's elements are needed (a raw value or a TensorBoard scalar): then
     * save it with saveTensor. */
    public final boolean valueNeeded;
    /** Whether a TensorBoard histogram of the tensor is due: give it to saveReductions (see
     * {@link Histogram}), or save the tensor itself with saveTensor. */
    public final boolean histogram;

    DueReductions(List<String> reductions, boolean valueNeeded, boolean histogram) {
      this.reductions = reductions;
      this.valueNeeded = valueNeeded;
      this.histogram = histogram;
    }
  }

  /** What saving a tensor of this name would write now (smd_hook_due_reductions). */
  public DueReductions dueReductions(String name) throws SmdException {
    requireNonNull(name, "tensor name");
    String[][] names = new String[1][];
    boolean[] value = new boolean[1];
    boolean[] histogram = new boolean[1];
    SmdNative.smd_hook_due_reductions(p(), name, names, value, histogram);
    return new DueReductions(List.of(names[0]), value[0], histogram[0]);
  }

  /**
   * A tensor's TensorBoard histogram computed by the caller (smd_histogram): {@code counts[i]} is
   * the number of elements x (as doubles) with {@code edges[i] <= x < edges[i + 1]} for the edges
   * of {@link #histogramBucketEdges()} (the last bucket also holds its right edge; NaN, infinities
   * and values outside the edges are in none), read as unsigned; min, max, sum and sumSquares are
   * over all elements (min and max both NaN when an element is NaN).
   */
  public static final class Histogram {
    public final double min, max, sum, sumSquares;
    public final long[] counts;

    public Histogram(double min, double max, double sum, double sumSquares, long[] counts) {
      this.min = min;
      this.max = max;
      this.sum = sum;
      this.sumSquares = sumSquares;
      requireNonNull(counts, "counts");
      this.counts = counts;
    }
  }

  private static double[] bucketEdges;

  /** The bucket edges of smd's TensorBoard histograms (1,549, ascending); a fresh copy. */
  public static synchronized double[] histogramBucketEdges() {
    if (bucketEdges == null) {
      double[] e = new double[(int) SmdNative.smd_java_histogram_bucket_count()];
      SmdNative.smd_java_histogram_bucket_edges(e);
      bucketEdges = e;
    }
    return bucketEdges.clone();
  }

  /**
   * Saves reductions the caller computed (on a GPU, say) for a tensor of {@code dtype} and
   * {@code shape} whose elements smd never sees, exactly as saveTensor writes the reductions it
   * computes: reduction i is {@code reductions[i]} (a name without abs_), over absolute values if
   * {@code abs[i]}, of value {@code values[i]}. Every due reduction must be given; no histogram may
   * be due (see the overload that takes one).
   */
  public void saveReductions(String name, DType dtype, long[] shape, String[] reductions, boolean[] abs,
                             double[] values, String... collections) throws SmdException {
    saveReductions(name, dtype, shape, reductions, abs, values, (Histogram) null, collections);
  }

  /**
   * The same with the tensor's TensorBoard histogram (null: none), required when one is due
   * ({@link DueReductions#histogram}) and ignored otherwise; written as the hook writes the ones it
   * computes.
   */
  public void saveReductions(String name, DType dtype, long[] shape, String[] reductions, boolean[] abs,
                             double[] values, Histogram histogram, String... collections) throws SmdException {
    requireNonNull(name, "tensor name");
    requireNonNull(dtype, "dtype");
    double[] stats = histogram == null ? null
        : new double[] {histogram.min, histogram.max, histogram.sum, histogram.sumSquares};
    long[] counts = histogram == null ? null : histogram.counts;
    SmdNative.smd_java_save_reductions(p(), name, dtype.value, shape, reductions, abs, values, stats, counts,
        colls(collections));
  }

  /** The collection of that name, created (empty) if needed. */
  public Collection collection(String name) throws SmdException {
    requireNonNull(name, "collection name");
    long[] out = new long[1];
    SmdNative.smd_hook_get_collection(p(), name, out);
    return new Collection(out[0]);
  }

  /** Names of all collections, in creation order. */
  public List<String> collectionNames() throws SmdException {
    String[][] out = new String[1][];
    SmdNative.smd_hook_collection_names(p(), out);
    return List.of(out[0]);
  }

  /** Adds a collection to the saved ones. */
  public void includeCollection(String name) throws SmdException {
    requireNonNull(name, "collection name");
    SmdNative.smd_hook_include_collection(p(), name);
  }

  /**
   * Saves an included collection for the rest of the current step whatever its save
   * configuration says (the tensors saved into it until the step ends are written); the next
   * beginStep() or endStep() ends it. Throws NOT_FOUND (no such collection) or INVALID_STATE
   * (closed, or no step open).
   */
  public void makeDue(String collection) throws SmdException {
    requireNonNull(collection, "collection name");
    SmdNative.smd_hook_make_due(p(), collection);
  }

  /** Waits until everything queued so far is written; throws the first error met so far. */
  public void flush() throws SmdException {
    SmdNative.smd_hook_flush(p());
  }

  /**
   * Drains and finishes the trial, throwing the first error met since the hook was created.
   * Calling it again does nothing; later calls throw {@link IllegalStateException} (or, if they
   * raced with close, an INVALID_STATE {@link SmdException}). Other threads may still be inside a
   * call while one thread closes the hook: the small native object left is freed by the Cleaner
   * once the Hook is unreachable.
   */
  @Override
  public void close() throws SmdException {
    smd_hook h;
    synchronized (this) {
      if (isClosed()) return;
      h = p();
      markClosed();
    }
    ExitCloser.deregister(this);
    SmdNative.smd_hook_close(h);
  }
}
