package ai.smd;

/** smdebug's ModeKeys, with their values. {@link #ALL} only in save-configuration setters. */
public enum Mode {
  ALL(smd_mode.SMD_MODE_ALL), TRAIN(smd_mode.SMD_MODE_TRAIN), EVAL(smd_mode.SMD_MODE_EVAL),
  PREDICT(smd_mode.SMD_MODE_PREDICT), GLOBAL(smd_mode.SMD_MODE_GLOBAL);

  final int value;

  Mode(int value) {
    this.value = value;
  }

  /** The C ABI's value. */
  public int value() {
    return value;
  }

  static Mode of(int v) {
    for (Mode m : values()) {
      if (m.value == v) return m;
    }
    throw new IllegalArgumentException("unknown mode " + v);
  }
}
