package ai.smd;

/** Element types, with TensorFlow's DataType numbers (what the files store). */
public enum DType {
  FLOAT32(smd_dtype.SMD_DTYPE_FLOAT32), FLOAT64(smd_dtype.SMD_DTYPE_FLOAT64),
  INT32(smd_dtype.SMD_DTYPE_INT32), UINT8(smd_dtype.SMD_DTYPE_UINT8),
  INT16(smd_dtype.SMD_DTYPE_INT16), INT8(smd_dtype.SMD_DTYPE_INT8),
  STRING(smd_dtype.SMD_DTYPE_STRING), COMPLEX64(smd_dtype.SMD_DTYPE_COMPLEX64),
  INT64(smd_dtype.SMD_DTYPE_INT64), BOOL(smd_dtype.SMD_DTYPE_BOOL),
  BFLOAT16(smd_dtype.SMD_DTYPE_BFLOAT16), UINT16(smd_dtype.SMD_DTYPE_UINT16),
  COMPLEX128(smd_dtype.SMD_DTYPE_COMPLEX128), FLOAT16(smd_dtype.SMD_DTYPE_FLOAT16),
  UINT32(smd_dtype.SMD_DTYPE_UINT32), UINT64(smd_dtype.SMD_DTYPE_UINT64);

  final int value;
  private volatile int size = -1; // the C library's smd_dtype_size, asked once

  DType(int value) {
    this.value = value;
  }

  /** The C ABI's (TensorFlow's) number. */
  public int value() {
    return value;
  }

  /** Bytes per element (0 for STRING). */
  public int size() {
    int s = size;
    if (s < 0) {
      Native.load();
      size = s = (int) SmdNative.smd_dtype_size(value);
    }
    return s;
  }

  /** numpy's name: "float32", "bool", "str", ... */
  public String numpyName() {
    Native.load();
    return SmdNative.smd_dtype_name(value);
  }

  /** Parses a numpy-style name ("float32", "int64", ...). */
  public static DType fromName(String name) throws SmdException {
    Native.load();
    int[] out = new int[1];
    SmdNative.smd_dtype_from_name(name, out);
    return of(out[0]);
  }

  static DType of(int v) {
    for (DType d : values()) {
      if (d.value == v) return d;
    }
    throw new IllegalArgumentException("unknown dtype " + v);
  }
}
