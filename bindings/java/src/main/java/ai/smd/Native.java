package ai.smd;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Loads the native libraries carried in the jar (libsmd and the JNI library, listed in load order
 * by {@code ai/smd/native/<platform>/libs.txt}): they are copied to a fresh temporary folder,
 * removed when the JVM exits, and loaded from there. {@code -Dsmd.native.dir=<folder>} loads them
 * from a folder instead.
 */
final class Native {
  private static volatile boolean loaded;

  private Native() {}

  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86_64";
    else if (arch.equals("aarch64") || arch.equals("arm64")) arch = "aarch64";
    return (os.contains("linux") ? "linux" : os.replaceAll("\\s+", "")) + "-" + arch;
  }

  static void load() {
    if (loaded) return;
    synchronized (Native.class) {
      if (loaded) return;
      try {
        String dir = System.getProperty("smd.native.dir");
        String base = "/ai/smd/native/" + platform() + "/";
        List<String> names = new ArrayList<>();
        try (InputStream in = dir != null ? Files.newInputStream(Path.of(dir, "libs.txt"))
                                          : Native.class.getResourceAsStream(base + "libs.txt")) {
          if (in == null) {
            throw new UnsatisfiedLinkError("smd: no native libraries for " + platform() + " in this jar");
          }
          BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
          for (String line; (line = r.readLine()) != null; ) {
            if (!line.isBlank()) names.add(line.trim());
          }
        }
        Path folder;
        if (dir != null) {
          folder = Path.of(dir);
        } else {
          folder = Files.createTempDirectory("smd-java-");
          folder.toFile().deleteOnExit();
          for (String name : names) {
            Path target = folder.resolve(name);
            try (InputStream in = Native.class.getResourceAsStream(base + name)) {
              if (in == null) throw new UnsatisfiedLinkError("smd: " + base + name + " missing from the jar");
              Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
            }
            target.toFile().deleteOnExit();
          }
        }
        for (String name : names) {
          System.load(folder.resolve(name).toAbsolutePath().toString());
        }
        loaded = true;
      } catch (IOException e) {
        UnsatisfiedLinkError err = new UnsatisfiedLinkError("smd: cannot extract the native libraries: " + e);
        err.initCause(e);
        throw err;
      }
    }
  }

  /** The library's version, e.g. "0.2.0". */
  static String version() {
    load();
    return SmdNative.smd_version_string();
  }
}
