package ai.smd;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * An immutable array read from a trial: dtype, shape and C-contiguous little-endian elements.
 * {@link #buffer()} views smd's memory without a copy; the typed {@code to...Array()} methods
 * copy. Thread-safe.
 */
public final class Value extends NativeObject<smd_value> implements AutoCloseable {
  private ByteBuffer buffer;

  Value(long ptr) {
    super(new smd_value(ptr, false), ptr, SmdNativeJNI::delete_smd_value);
  }

  public DType dtype() {
    return DType.of(SmdNative.smd_value_dtype(p()));
  }

  /** The dimensions (a copy). */
  public long[] shape() {
    return SmdNative.smd_java_value_shape(p());
  }

  /** The number of elements. */
  public long count() {
    return SmdNative.smd_value_count(p());
  }

  /** Bytes of the elements (0 for strings). */
  public long nbytes() {
    return SmdNative.smd_value_nbytes(p());
  }

  /**
   * The elements as a read-only, little-endian direct buffer over smd's memory (no copy). The
   * memory stays valid as long as this buffer (or a view made from it) is reachable, even after
   * {@link #close()}. Throws {@link IllegalStateException} for string values.
   */
  public synchronized ByteBuffer buffer() {
    smd_value v = p();
    if (buffer == null) {
      if (dtype() == DType.STRING) throw new IllegalStateException("a STRING value has no element buffer (use strings())");
      ByteBuffer b = (ByteBuffer) SmdNative.smd_java_value_buffer(v);
      if (b == null) {
        b = ByteBuffer.allocateDirect(0); // an empty value
      } else {
        long ref = SmdNative.smd_java_value_ref(v);
        CLEANER.register(b, new Releaser(ref, SmdNativeJNI::delete_smd_value));
      }
      buffer = b.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }
    return buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
  }

  private int length() {
    long n = count();
    if (n > Integer.MAX_VALUE - 8) throw new IllegalStateException("the value's " + n + " elements do not fit a Java array");
    return (int) n;
  }

  private void expect(DType want) {
    DType d = dtype();
    if (d != want) throw new IllegalStateException("the value is " + d + ", not " + want);
  }

  public float[] toFloatArray() {
    expect(DType.FLOAT32);
    float[] a = new float[length()];
    buffer().asFloatBuffer().get(a);
    return a;
  }

  public double[] toDoubleArrayExact() {
    expect(DType.FLOAT64);
    double[] a = new double[length()];
    buffer().asDoubleBuffer().get(a);
    return a;
  }

  public long[] toLongArray() {
    expect(DType.INT64);
    long[] a = new long[length()];
    buffer().asLongBuffer().get(a);
    return a;
  }

  public int[] toIntArray() {
    expect(DType.INT32);
    int[] a = new int[length()];
    buffer().asIntBuffer().get(a);
    return a;
  }

  /** The raw element bytes (a copy). */
  public byte[] toByteArray() {
    ByteBuffer b = buffer();
    byte[] a = new byte[b.remaining()];
    b.get(a);
    return a;
  }

  /**
   * Every element converted to a double (bool 0/1, float16/bfloat16 widened, 64-bit integers
   * rounded). Throws {@link SmdException} (UNSUPPORTED) for strings and complex values.
   */
  public double[] toDoubleArray() throws SmdException {
    DType d = dtype();
    int n = length();
    double[] a = new double[n];
    ByteBuffer b = d == DType.STRING ? null : buffer();
    switch (d) {
      case FLOAT32: for (int i = 0; i < n; ++i) a[i] = b.getFloat(4 * i); break;
      case FLOAT64: for (int i = 0; i < n; ++i) a[i] = b.getDouble(8 * i); break;
      case INT32: for (int i = 0; i < n; ++i) a[i] = b.getInt(4 * i); break;
      case INT64: for (int i = 0; i < n; ++i) a[i] = b.getLong(8 * i); break;
      case INT16: for (int i = 0; i < n; ++i) a[i] = b.getShort(2 * i); break;
      case INT8: for (int i = 0; i < n; ++i) a[i] = b.get(i); break;
      case UINT8: case BOOL: for (int i = 0; i < n; ++i) a[i] = b.get(i) & 0xFF; break;
      case UINT16: for (int i = 0; i < n; ++i) a[i] = b.getShort(2 * i) & 0xFFFF; break;
      case UINT32: for (int i = 0; i < n; ++i) a[i] = b.getInt(4 * i) & 0xFFFFFFFFL; break;
      default: for (int i = 0; i < n; ++i) a[i] = getDouble(i); break;
    }
    return a;
  }

  /** Element i converted to a double (as {@link #toDoubleArray()}). */
  public double getDouble(long i) throws SmdException {
    double[] out = new double[1];
    SmdNative.smd_value_double_at(p(), i, out);
    return out[0];
  }

  /** Element i of a string value, as raw bytes (normally UTF-8). */
  public byte[] stringBytes(long i) throws SmdException {
    byte[][] out = new byte[1][];
    SmdNative.smd_value_string(p(), i, out);
    return out[0];
  }

  /** The elements of a string value, decoded as UTF-8. */
  public List<String> strings() throws SmdException {
    if (dtype() != DType.STRING) throw new IllegalStateException("the value is " + dtype() + ", not STRING");
    long n = count();
    List<String> r = new ArrayList<>();
    for (long i = 0; i < n; ++i) r.add(new String(stringBytes(i), StandardCharsets.UTF_8));
    return r;
  }

  /** Drops this reference to the value (a buffer obtained from it stays valid). */
  @Override
  public void close() {
    release();
  }
}
