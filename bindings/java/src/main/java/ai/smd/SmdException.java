package ai.smd;

import java.nio.charset.StandardCharsets;

/**
 * An error reported by smd. Every smd error is a checked exception of this class or of one of its
 * subclasses named after smdebug's exceptions ({@link TensorUnavailableForStep},
 * {@link StepUnavailable}, {@link NoMoreData}, ...). {@link #code()} is smd's stable error code
 * (the C ABI's {@code smd_code}), {@link #codeName()} its name, e.g. {@code "SMD_E_NOT_FOUND"}.
 *
 * <p>Errors that are the caller's mistake on the Java side (a null argument, a closed handle, a
 * buffer too small for the shape) are the usual unchecked {@link NullPointerException},
 * {@link IllegalStateException} and {@link IllegalArgumentException}.
 */
public class SmdException extends Exception {
  /** smd_code values (stable; new ones are only ever added), the C header's own. */
  public static final int INTERNAL = smd_code.SMD_E_INTERNAL;
  public static final int INVALID_ARGUMENT = smd_code.SMD_E_INVALID_ARGUMENT;
  public static final int NOT_FOUND = smd_code.SMD_E_NOT_FOUND;
  public static final int IO = smd_code.SMD_E_IO;
  public static final int CORRUPT = smd_code.SMD_E_CORRUPT;
  public static final int OUT_OF_MEMORY = smd_code.SMD_E_OUT_OF_MEMORY;
  public static final int UNSUPPORTED = smd_code.SMD_E_UNSUPPORTED;
  public static final int INVALID_STATE = smd_code.SMD_E_INVALID_STATE;
  public static final int ALREADY_EXISTS = smd_code.SMD_E_ALREADY_EXISTS;
  public static final int CANCELLED = smd_code.SMD_E_CANCELLED;
  public static final int TENSOR_UNAVAILABLE_FOR_STEP = smd_code.SMD_E_TENSOR_UNAVAILABLE_FOR_STEP;
  public static final int TENSOR_UNAVAILABLE = smd_code.SMD_E_TENSOR_UNAVAILABLE;
  public static final int STEP_UNAVAILABLE = smd_code.SMD_E_STEP_UNAVAILABLE;
  public static final int STEP_NOT_YET_AVAILABLE = smd_code.SMD_E_STEP_NOT_YET_AVAILABLE;
  public static final int NO_MORE_DATA = smd_code.SMD_E_NO_MORE_DATA;
  public static final int MISSING_COLLECTION_FILES = smd_code.SMD_E_MISSING_COLLECTION_FILES;
  public static final int SHAPE_UNAVAILABLE_FOR_STEP = smd_code.SMD_E_SHAPE_UNAVAILABLE_FOR_STEP;
  public static final int INVALID_WORKER = smd_code.SMD_E_INVALID_WORKER;
  public static final int RULE_CONDITION_MET = smd_code.SMD_E_RULE_CONDITION_MET;
  public static final int HTTP = smd_code.SMD_E_HTTP;
  public static final int AUTH = smd_code.SMD_E_AUTH;

  private final int code;

  public SmdException(int code, String message) {
    super(message);
    this.code = code;
  }

  /** smd's error code (one of the constants of this class). */
  public int code() {
    return code;
  }

  /** The code's stable name, e.g. {@code "SMD_E_TENSOR_UNAVAILABLE_FOR_STEP"} (see {@link Smd#codeName}). */
  public String codeName() {
    return Smd.codeName(code);
  }

  @Override
  public String toString() {
    return getClass().getName() + " [" + codeName() + "]: " + getMessage();
  }

  /** Called by the native layer: the exception of a code, with a UTF-8 message. */
  static SmdException fromNative(int code, byte[] utf8) {
    return of(code, new String(utf8, StandardCharsets.UTF_8));
  }

  static SmdException of(int code, String msg) {
    switch (code) {
      case TENSOR_UNAVAILABLE_FOR_STEP: return new TensorUnavailableForStep(msg);
      case TENSOR_UNAVAILABLE: return new TensorUnavailable(msg);
      case STEP_UNAVAILABLE: return new StepUnavailable(msg);
      case STEP_NOT_YET_AVAILABLE: return new StepNotYetAvailable(msg);
      case NO_MORE_DATA: return new NoMoreData(msg);
      case MISSING_COLLECTION_FILES: return new MissingCollectionFiles(msg);
      case SHAPE_UNAVAILABLE_FOR_STEP: return new ShapeUnavailableForStep(msg);
      case INVALID_WORKER: return new InvalidWorker(msg);
      case RULE_CONDITION_MET: return new RuleEvaluationConditionMet(msg);
      default: return new SmdException(code, msg);
    }
  }
}
