package ai.smd;

import java.nio.ByteBuffer;

/**
 * Writes TensorBoard logs (scalars and histograms) the way smdebug exports them:
 * {@code <dir>/<MODE>/<step>_<pid>_<host>.tfevents}. Write each mode's steps (>= 0) in ascending order.
 * One thread at a time. A writer still open when the JVM exits is closed then (a shutdown hook; an
 * error it meets is printed on stderr).
 */
public final class TensorBoardWriter extends NativeObject<smd_tensorboard_writer> implements AutoCloseable {
  private TensorBoardWriter(long ptr) {
    super(new smd_tensorboard_writer(ptr, false), ptr, SmdNativeJNI::delete_smd_tensorboard_writer);
    ExitCloser.register(this);
  }

  /**
   * A writer of the log folder (or s3://bucket/prefix, reached with the AWS configuration chain);
   * nothing is written until the first record.
   */
  public static TensorBoardWriter create(String dir) throws SmdException {
    return create(dir, null);
  }

  /**
   * A writer of the log folder or of s3://bucket/prefix, reached with {@code storage} (copied;
   * null: the AWS configuration chain). Nothing is written until the first record.
   */
  public static TensorBoardWriter create(String dir, StorageOptions storage) throws SmdException {
    requireNonNull(dir, "dir");
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_tensorboard_writer_create(dir, storage == null ? null : storage.p(), out);
    return new TensorBoardWriter(out[0]);
  }

  /** A scalar summary; wallTime in seconds since the epoch (0: now). */
  public void addScalar(long step, Mode mode, double wallTime, String tag, double value) throws SmdException {
    requireNonNull(mode, "mode");
    requireNonNull(tag, "tag");
    SmdNative.smd_tensorboard_writer_add_scalar(p(), step, mode.value, wallTime, tag, value);
  }

  /** A histogram of the values, as smdebug computes it; false if no value fell in a bucket. */
  public boolean addHistogram(long step, Mode mode, double wallTime, String tag, float[] values) throws SmdException {
    return histogram(step, mode, wallTime, tag, DType.FLOAT32, values, 4);
  }

  public boolean addHistogram(long step, Mode mode, double wallTime, String tag, double[] values) throws SmdException {
    return histogram(step, mode, wallTime, tag, DType.FLOAT64, values, 8);
  }

  /** A histogram of the elements of a direct buffer (its remaining bytes). */
  public boolean addHistogram(long step, Mode mode, double wallTime, String tag, DType dtype, ByteBuffer data)
      throws SmdException {
    requireNonNull(mode, "mode");
    requireNonNull(tag, "tag");
    requireNonNull(dtype, "dtype");
    requireNonNull(data, "data");
    if (!data.isDirect()) throw new IllegalArgumentException("histogram data must be a direct ByteBuffer");
    boolean[] written = new boolean[1];
    SmdNative.smd_tensorboard_writer_add_histogram(p(), step, mode.value, wallTime, tag, dtype.value, data.slice(), written);
    return written[0];
  }

  private boolean histogram(long step, Mode mode, double wallTime, String tag, DType dtype, Object values, int size)
      throws SmdException {
    requireNonNull(mode, "mode");
    requireNonNull(tag, "tag");
    requireNonNull(values, "values");
    boolean[] written = new boolean[1];
    SmdNative.smd_java_tb_histogram_array(p(), step, mode.value, wallTime, tag, dtype.value, values, size, written);
    return written[0];
  }

  /** Writes out what is buffered, keeping the files open. */
  public void flush() throws SmdException {
    SmdNative.smd_tensorboard_writer_flush(p());
  }

  /** Completes every file; throws the first error met. Calling it again does nothing. */
  @Override
  public void close() throws SmdException {
    if (isClosed()) return;
    ExitCloser.deregister(this);
    try {
      SmdNative.smd_tensorboard_writer_close(p());
    } finally {
      release();
    }
  }
}
