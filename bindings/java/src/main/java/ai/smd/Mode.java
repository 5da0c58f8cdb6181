package ai.smd;

/** smdebug's ModeKeys, with their values. {@link #ALL} only in save-configuration setters. */
public enum Mode {
  ALL(0), TRAIN(1), EVAL(2), PREDICT(3), GLOBAL(4);

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
