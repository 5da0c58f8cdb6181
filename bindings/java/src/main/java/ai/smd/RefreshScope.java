package ai.smd;

/**
 * A refresh block on one trial, made by {@link Trial#refreshScope(boolean)}: smdebug's
 * {@code no_refresh} (off) and {@code refresh} (on) blocks. While it is open, queries of the trial
 * made on the thread that opened it (through any {@link Trial} handle of it, its {@link Tensor}s
 * included) refresh by themselves if it is on, never if it is off, whatever the trial was opened
 * with. The trial itself does not change: {@link Trial#autoRefresh()} on this thread answers the
 * innermost open scope, and other threads keep their own behaviour, so a block in one thread does
 * not stop another thread's refreshes. Scopes nest; the innermost wins, and closing it brings the
 * outer one back.
 *
 * <p>It applies to the calling platform thread only: open and close it on the same thread, with
 * try-with-resources.
 *
 * <pre>{@code
 * try (RefreshScope frozen = trial.refreshScope(false)) {
 *   ... // this thread sees the trial as it was loaded when the block began
 * }
 * }</pre>
 *
 * Closed on another thread, the scope is freed but its block does not end (a scope never closed
 * is freed the same way by the garbage collector, so always close it). The scope keeps the trial's
 * data alive, even after {@link Trial#close()}.
 */
public final class RefreshScope extends NativeObject<smd_trial_refresh_scope> implements AutoCloseable {
  RefreshScope(long ptr) {
    super(new smd_trial_refresh_scope(ptr, false), ptr, SmdNativeJNI::delete_smd_trial_refresh_scope);
  }

  /** Ends the block (on the thread that opened it) and frees the scope. Calling it again does nothing. */
  @Override
  public void close() {
    release();
  }
}
