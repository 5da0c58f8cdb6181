package ai.smd;

import java.util.List;

/** Library-wide facts. */
public final class Smd {
  private Smd() {}

  /** The native library's version, e.g. "0.2.0". */
  public static String version() {
    return Native.version();
  }

  /** Every reduction name the library accepts (without the optional "abs_" prefix). */
  public static List<String> reductionNames() throws SmdException {
    Native.load();
    String[][] out = new String[1][];
    SmdNative.smd_reduction_names(out);
    return List.of(out[0]);
  }

  /**
   * The multipart uploads left in progress under the S3 prefix {@code uri} ("s3://bucket/prefix"):
   * a writer killed while it uploaded a large event file leaves one, whose parts the bucket keeps
   * (and bills) until it is aborted. Each is "key\tupload id\tinitiated" (the key without
   * s3://bucket/, the time as S3 gives it), in S3's order. With abortThem each one is aborted and
   * the list names those aborted (do not abort while a writer of that prefix is still running).
   * storage: how S3 is reached (null: the AWS configuration chain).
   */
  public static List<String> s3UploadsInProgress(String uri, StorageOptions storage, boolean abortThem)
      throws SmdException {
    NativeObject.requireNonNull(uri, "uri");
    Native.load();
    String[][] out = new String[1][];
    SmdNative.smd_s3_uploads_in_progress(uri, storage == null ? null : storage.p(), abortThem, out);
    return List.of(out[0]);
  }

  /**
   * The stable name of an error code, e.g. "SMD_E_NOT_FOUND"; "SMD_E_UNKNOWN(n)" for a code the
   * loaded library does not know.
   */
  public static String codeName(int code) {
    Native.load();
    String name = SmdNative.smd_code_name(code);
    return name != null ? name : "SMD_E_UNKNOWN(" + code + ")";
  }
}
