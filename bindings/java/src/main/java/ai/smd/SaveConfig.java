package ai.smd;

import java.util.List;
import java.util.Optional;

/**
 * When to save, per mode (smdebug's SaveConfig / SaveConfigMode). A mode is unset or has
 * saveInterval (default 500), startStep (0), endStep (exclusive, negative: no end) and saveSteps.
 * Mode step s is saved if it is one of saveSteps, or startStep &lt;= s &lt; endStep and
 * s % saveInterval == 0. Not thread-safe.
 */
public final class SaveConfig extends NativeObject<smd_save_config> implements AutoCloseable {
  SaveConfig(long ptr) {
    super(new smd_save_config(ptr, false), ptr, SmdNativeJNI::delete_smd_save_config);
  }

  /** A configuration with every mode unset. */
  public SaveConfig() throws SmdException {
    this(create());
  }

  /** A configuration saving every {@code interval} steps in every mode. */
  public static SaveConfig every(long interval) throws SmdException {
    SaveConfig c = new SaveConfig();
    try {
      c.setInterval(Mode.ALL, interval);
      return c;
    } catch (SmdException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  private static long create() throws SmdException {
    Native.load();
    long[] out = new long[1];
    SmdNative.smd_save_config_create(out);
    return out[0];
  }

  /** Sets one mode (or {@link Mode#ALL}). */
  public SaveConfig set(Mode mode, long saveInterval, long startStep, long endStep, long... saveSteps)
      throws SmdException {
    requireNonNull(mode, "mode");
    SmdNative.smd_save_config_set(p(), mode.value, saveInterval, startStep, endStep,
        saveSteps == null ? new long[0] : saveSteps);
    return this;
  }

  /** Sets only save_interval of a mode. */
  public SaveConfig setInterval(Mode mode, long saveInterval) throws SmdException {
    requireNonNull(mode, "mode");
    SmdNative.smd_save_config_set_interval(p(), mode.value, saveInterval);
    return this;
  }

  /** Makes a mode unset again. */
  public SaveConfig unset(Mode mode) throws SmdException {
    requireNonNull(mode, "mode");
    SmdNative.smd_save_config_unset(p(), mode.value);
    return this;
  }

  /** Whether mode step {@code modeStep} of {@code mode} is saved. */
  public boolean shouldSave(long modeStep, Mode mode) throws SmdException {
    requireNonNull(mode, "mode");
    boolean[] out = new boolean[1];
    SmdNative.smd_save_config_should_save(p(), modeStep, mode.value, out);
    return out[0];
  }

  /**
   * One mode's settings (smdebug's SaveConfigMode): every {@code saveInterval} steps from
   * {@code startStep} up to {@code endStep} (exclusive; negative: no end), plus {@code saveSteps}.
   */
  public record ModeSettings(long saveInterval, long startStep, long endStep, List<Long> saveSteps) {
    public ModeSettings {
      saveSteps = List.copyOf(saveSteps);
    }
  }

  /** The settings of {@code mode} (not {@link Mode#ALL}); empty when the mode is unset. */
  public Optional<ModeSettings> settings(Mode mode) throws SmdException {
    requireNonNull(mode, "mode");
    boolean[] set = new boolean[1];
    long[] interval = new long[1];
    long[] start = new long[1];
    long[] end = new long[1];
    long[][] steps = new long[1][];
    SmdNative.smd_save_config_settings(p(), mode.value, set, interval, start, end, steps);
    if (!set[0]) {
      return Optional.empty();
    }
    Long[] boxed = new Long[steps[0].length];
    for (int i = 0; i < boxed.length; i++) {
      boxed[i] = steps[0][i];
    }
    return Optional.of(new ModeSettings(interval[0], start[0], end[0], List.of(boxed)));
  }

  /** An independent copy. */
  public SaveConfig copy() throws SmdException {
    long[] out = new long[1];
    SmdNative.smd_save_config_clone(p(), out);
    return new SaveConfig(out[0]);
  }

  @Override
  public void close() {
    release();
  }
}
