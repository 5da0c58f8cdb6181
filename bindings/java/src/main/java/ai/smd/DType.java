package ai.smd;

/** Element types, with TensorFlow's DataType numbers (what the files store). */
public enum DType {
  FLOAT32(1, 4), FLOAT64(2, 8), INT32(3, 4), UINT8(4, 1), INT16(5, 2), INT8(6, 1), STRING(7, 0),
  COMPLEX64(8, 8), INT64(9, 8), BOOL(10, 1), BFLOAT16(14, 2), UINT16(17, 2), COMPLEX128(18, 16),
  FLOAT16(19, 2), UINT32(22, 4), UINT64(23, 8);

  final int value;
  final int size;

  DType(int value, int size) {
    this.value = value;
    this.size = size;
  }

  /** The C ABI's (TensorFlow's) number. */
  public int value() {
    return value;
  }

  /** Bytes per element (0 for STRING). */
  public int size() {
    return size;
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
