package ai.smd;

import java.util.List;
import java.util.Optional;

/** A collection as a trial's collections file describes it. */
public final class CollectionInfo extends NativeObject<smd_collection_info> implements AutoCloseable {
  CollectionInfo(long ptr) {
    super(new smd_collection_info(ptr, false), ptr, SmdNativeJNI::delete_smd_collection_info);
  }

  public String name() {
    return SmdNative.smd_collection_info_name(p());
  }

  public List<String> includeRegex() throws SmdException {
    String[][] out = new String[1][];
    SmdNative.smd_collection_info_include_regex(p(), out);
    return List.of(out[0]);
  }

  public List<String> tensorNames() throws SmdException {
    String[][] out = new String[1][];
    SmdNative.smd_collection_info_tensor_names(p(), out);
    return List.of(out[0]);
  }

  /** The reductions, comma-separated as in the file ("" for none). */
  public String reductions() {
    String r = SmdNative.smd_collection_info_reductions(p());
    return r == null ? "" : r;
  }

  public boolean saveRawTensor() {
    return SmdNative.smd_collection_info_save_raw_tensor(p());
  }

  public boolean saveShape() {
    return SmdNative.smd_collection_info_save_shape(p());
  }

  public boolean saveHistogram() {
    return SmdNative.smd_collection_info_save_histogram(p());
  }

  /**
   * The save configuration (smdebug's Collection.save_config), the caller's to close; empty when
   * the collections file gives the collection none. A mode the file leaves null is unset
   * ({@link SaveConfig#settings}).
   */
  public Optional<SaveConfig> saveConfig() throws SmdException {
    long[] out = new long[1];
    SmdNative.smd_collection_info_save_config(p(), out);
    return out[0] == 0 ? Optional.empty() : Optional.of(new SaveConfig(out[0]));
  }

  @Override
  public void close() {
    release();
  }
}
