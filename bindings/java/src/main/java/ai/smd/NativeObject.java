package ai.smd;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;

/**
 * An owned native handle: closed explicitly (try-with-resources) or, when forgotten, freed by a
 * {@link Cleaner} once the SWIG proxy that every native call receives is unreachable (so it cannot
 * be freed during a call). After {@link #close()} every method throws {@link IllegalStateException}.
 * Closing a handle while another thread is using it is the caller's error (as in the C ABI).
 */
abstract class NativeObject<P> {
  static final Cleaner CLEANER = Cleaner.create();

  /** Frees a pointer once. Holds no reference to the proxy or the wrapper. */
  static final class Releaser implements Runnable {
    private long ptr;
    private final LongConsumer free;

    Releaser(long ptr, LongConsumer free) {
      this.ptr = ptr;
      this.free = free;
    }

    @Override
    public synchronized void run() {
      if (ptr != 0) {
        long p = ptr;
        ptr = 0;
        free.accept(p);
      }
    }
  }

  private final P proxy;
  private final Cleaner.Cleanable cleanable;
  private volatile boolean closed;

  /** Owns ptr (the proxy must not own it), freed with free. */
  NativeObject(P proxy, long ptr, LongConsumer free) {
    if (ptr == 0) throw new IllegalStateException("smd returned no handle");
    this.proxy = proxy;
    this.cleanable = CLEANER.register(proxy, new Releaser(ptr, free));
  }

  /** Borrows the proxy's pointer: never freed here. */
  NativeObject(P proxy) {
    this.proxy = proxy;
    this.cleanable = null;
  }

  /** The proxy, for a native call; throws if closed. */
  final P p() {
    if (closed) throw new IllegalStateException(getClass().getSimpleName() + " is closed");
    return proxy;
  }

  /** Whether {@link #close()} was called. */
  public final boolean isClosed() {
    return closed;
  }

  /**
   * Marks the handle closed without freeing it: the Cleaner frees it once no call can be using it
   * (for handles that other threads may still be calling while one closes them).
   */
  void markClosed() {
    closed = true;
  }

  /** Frees the native object now (idempotent). */
  void release() {
    closed = true;
    if (cleanable != null) cleanable.clean();
  }

  static void requireNonNull(Object o, String what) {
    if (o == null) throw new NullPointerException(what + " is null");
  }
}
