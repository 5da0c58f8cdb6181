package ai.smd;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Closes the hooks and TensorBoard writers still open when the JVM exits, so that a forgotten one
 * completes its files (its last step, training_job_end.ts) as smdebug's hooks do at interpreter
 * exit: the Cleaner does not run at exit. One shutdown hook for all of them, added with the first;
 * each is held weakly (one dropped earlier is freed, and closed, by the Cleaner) and removed when
 * closed. A close that fails at exit is reported on stderr.
 */
final class ExitCloser {
  private static final Map<AutoCloseable, Boolean> OPEN = new WeakHashMap<>();
  private static boolean hooked;

  private ExitCloser() {}

  static synchronized void register(AutoCloseable c) {
    if (!hooked) {
      try {
        Runtime.getRuntime().addShutdownHook(new Thread(ExitCloser::closeAll, "smd-close-at-exit"));
      } catch (IllegalStateException e) {
        return; // the JVM is exiting already: the caller closes what it opens now
      }
      hooked = true;
    }
    OPEN.put(c, Boolean.TRUE);
  }

  static synchronized void deregister(AutoCloseable c) {
    OPEN.remove(c);
  }

  private static void closeAll() {
    List<AutoCloseable> open;
    synchronized (ExitCloser.class) {
      open = new ArrayList<>(OPEN.keySet());
      OPEN.clear();
    }
    for (AutoCloseable c : open) {
      try {
        c.close();
      } catch (Exception | Error e) {
        System.err.println("smd: closing a " + c.getClass().getSimpleName() + " left open at exit: " + e);
      }
    }
  }
}
