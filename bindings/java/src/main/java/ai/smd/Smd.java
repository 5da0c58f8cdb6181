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

  /** The stable name of an error code, e.g. "SMD_E_NOT_FOUND". */
  public static String codeName(int code) {
    Native.load();
    return SmdNative.smd_code_name(code);
  }
}
