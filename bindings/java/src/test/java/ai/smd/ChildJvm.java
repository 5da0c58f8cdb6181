package ai.smd;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/** A main class of the tests run in a child JVM: this JVM's java and class path, -Xcheck:jni as in surefire. */
final class ChildJvm {
  private ChildJvm() {}

  /** Runs {@code main} with {@code options} and {@code args}; its output (which `log` keeps) once it exited 0. */
  static String run(Path log, List<String> options, Class<?> main, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xcheck:jni");
    cmd.addAll(options);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean exited = p.waitFor(300, TimeUnit.SECONDS);
    if (!exited) p.destroyForcibly().waitFor();
    String out = Files.readString(log, StandardCharsets.UTF_8);
    assertTrue(exited, "the child JVM did not exit: " + out);
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  /**
   * Options for measuring native memory with {@link #rssKb()}: a Java heap of fixed size, touched
   * at start, so that the RSS grows only with native memory.
   */
  static final List<String> FIXED_HEAP = List.of("-Xms64m", "-Xmx64m", "-XX:+AlwaysPreTouch");

  /** This process's resident memory (VmRSS), in KiB. */
  static long rssKb() throws Exception {
    for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (l.startsWith("VmRSS:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
    }
    throw new AssertionError("no VmRSS in /proc/self/status");
  }

  /** Skips a test that reads /proc/self/status where there is none. */
  static void assumeProcStatus() {
    Assumptions.assumeTrue(Files.exists(Path.of("/proc/self/status")), "needs /proc/self/status");
  }

  /**
   * The RSS growths a child printed as lines "grew KIB WHAT", each checked to stay under
   * {@code limitMb}; returns how many there were.
   */
  static int checkGrowths(String output, long limitMb) {
    int n = 0;
    for (String line : output.split("\n")) {
      if (!line.startsWith("grew ")) continue;
      String[] f = line.split(" ", 3);
      long kb = Long.parseLong(f[1]);
      assertTrue(kb < limitMb * 1024, f[2] + " grew the RSS by " + kb / 1024 + " MB (native memory leaked)\n" + output);
      ++n;
    }
    return n;
  }
}
