package ai.smd;

import java.util.List;

/**
 * A collection of a {@link Hook}: a named group of tensors with its own configuration. Changes
 * fail with {@link SmdException} (INVALID_STATE) once the hook is closed. Thread-safe.
 */
public final class Collection extends NativeObject<smd_collection> implements AutoCloseable {
  Collection(long ptr) {
    super(new smd_collection(ptr, false), ptr, SmdNativeJNI::delete_smd_collection);
  }

  public String name() {
    return SmdNative.smd_collection_name(p());
  }

  /** Adds a regex (Python re syntax, search semantics) of tensor names. */
  public Collection includeRegex(String regex) throws SmdException {
    requireNonNull(regex, "regex");
    SmdNative.smd_collection_add_include_regex(p(), regex);
    return this;
  }

  /**
   * Takes every include regex out of the collection, its built-in one too; the tensor names added
   * to it, and those it already holds, stay.
   */
  public Collection clearIncludeRegex() throws SmdException {
    SmdNative.smd_collection_clear_include_regex(p());
    return this;
  }

  /** Adds an exact tensor name. */
  public Collection addTensorName(String name) throws SmdException {
    requireNonNull(name, "tensor name");
    SmdNative.smd_collection_add_tensor_name(p(), name);
    return this;
  }

  /** The collection's own save configuration (copied; null removes it). */
  public Collection saveConfig(SaveConfig config) throws SmdException {
    SmdNative.smd_collection_set_save_config(p(), config == null ? null : config.p());
    return this;
  }

  /** The collection's own reduction configuration (copied; null removes it). */
  public Collection reductionConfig(ReductionConfig config) throws SmdException {
    SmdNative.smd_collection_set_reduction_config(p(), config == null ? null : config.p());
    return this;
  }

  public Collection saveHistogram(boolean on) throws SmdException {
    SmdNative.smd_collection_set_save_histogram(p(), on);
    return this;
  }

  /** The tensor names the collection holds so far, sorted. */
  public List<String> tensorNames() throws SmdException {
    String[][] out = new String[1][];
    SmdNative.smd_collection_tensor_names(p(), out);
    return List.of(out[0]);
  }

  @Override
  public void close() {
    release();
  }
}
