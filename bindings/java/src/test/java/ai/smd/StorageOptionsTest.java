package ai.smd;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

class StorageOptionsTest {
  @TempDir Path tmp;

  private static void assertInvalid(Executable call, String mentions) {
    SmdException e = assertThrows(SmdException.class, call);
    assertEquals(SmdException.INVALID_ARGUMENT, e.code(), e.toString());
    assertTrue(e.getMessage().contains(mentions), e.getMessage());
  }

  @Test
  void badSettingsAreRejected() throws Exception {
    try (StorageOptions so = new StorageOptions()) {
      assertInvalid(() -> so.s3Endpoint("ftp://x"), "ftp://x");
      assertInvalid(() -> so.s3AddressingStyle("sideways"), "sideways");
      assertInvalid(() -> so.s3Credentials("AKIA-only-one", null, null), "S3 credentials");
      assertInvalid(() -> so.s3Credentials(null, "a-secret", null), "S3 credentials");
      assertInvalid(() -> so.s3Credentials("AK", "", null), "S3 credentials");
      assertInvalid(() -> so.s3Credentials(null, null, "a-token"), "session token");
      assertInvalid(() -> so.s3Retries(-1, 0, 0), ">= 0");
      assertInvalid(() -> so.s3Retries(0, -1, 0), ">= 0");
      assertInvalid(() -> so.s3Retries(0, 0, -1), ">= 0");
      SmdException e = assertThrows(SmdException.class, () -> so.s3Credentials("AKIA-only-one", null, null));
      assertFalse(e.getMessage().contains("AKIA-only-one"), "keys are never echoed");
      // good ones, and unsetting (null or "")
      assertSame(so, so.s3Endpoint("https://s3.example.com:8443").s3Endpoint("").s3Endpoint(null)
          .s3Region("eu-west-1").s3Profile("p").s3AddressingStyle("virtual").s3AddressingStyle("path")
          .s3CaBundle("/nonexistent.pem").s3Credentials("AK", "SK", "TOKEN").s3Credentials(null, null, null)
          .s3Retries(3, 10, 5000).s3Retries(0, 0, 0).s3Retries(Integer.MAX_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE));
    }
    StorageOptions closed = new StorageOptions();
    closed.close();
    closed.close(); // idempotent
    assertTrue(closed.isClosed());
    assertThrows(IllegalStateException.class, () -> closed.s3Region("x"));
    try (HookOptions ho = new HookOptions(); TrialOptions to = new TrialOptions()) {
      assertThrows(IllegalStateException.class, () -> ho.storage(closed));
      assertThrows(IllegalStateException.class, () -> to.storage(closed));
      assertThrows(IllegalStateException.class, () -> TensorBoardWriter.create(tmp.toString(), closed));
    }
    assertInvalid(() -> Smd.s3UploadsInProgress(tmp.toString(), null, false), "s3://");
    assertThrows(NullPointerException.class, () -> Smd.s3UploadsInProgress(null, null, false));
  }

  /** One StorageOptions serves a hook, a trial and a TensorBoard writer, which copy it. */
  @Test
  void oneStorageOptionsServesAHookATrialAndATensorBoardWriter() throws Exception {
    Path out = tmp.resolve("run");
    Path tb = tmp.resolve("tb");
    HookOptions ho;
    TrialOptions to;
    TensorBoardWriter w;
    try (StorageOptions so = new StorageOptions().s3Endpoint("http://127.0.0.1:9").s3Region("us-east-1")
        .s3Credentials("AK", "SK", null).s3Retries(2, 5, 1000)) {
      ho = new HookOptions().saveConfig(SaveConfig.every(1)).saveAll(true).storage(so).storage(null).storage(so);
      to = new TrialOptions().storage(so);
      w = TensorBoardWriter.create(tb.toString(), so);
    } // closed: each user has its copy (local paths ignore the S3 settings)
    try (ho; Hook h = Hook.create(out.toString(), ho)) {
      h.beginStep();
      h.saveTensor("w", new long[] {2}, new float[] {1, 2});
    }
    try (to; Trial t = Trial.open(out.toString(), to)) {
      assertEquals(List.of("w"), t.tensorNames());
    }
    try (w) {
      w.addScalar(0, Mode.TRAIN, 1000.0, "loss", 0.5);
    }
    try (Stream<Path> s = Files.walk(tb)) {
      assertEquals(1, s.filter(Files::isRegularFile).count());
    }
    try (TensorBoardWriter w2 = TensorBoardWriter.create(tmp.resolve("tb2").toString(), null)) {
      w2.addScalar(0, Mode.EVAL, 0, "acc", 1);
    }
  }

  /** The local S3 server of scripts/s3-server.sh (skipped without it, except under CI=true). */
  @Test
  void hookTrialTensorBoardAndUploadsOnS3() throws Exception {
    Path repo = Path.of("..", "..").toAbsolutePath().normalize();
    Path state = tmp.resolve("s3-server");
    Process p = new ProcessBuilder(repo.resolve("scripts/s3-server.sh").toString(), "start", state.toString())
        .redirectErrorStream(true).start();
    String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      if ("true".equals(System.getenv("CI"))) fail("cannot start the S3 server: " + log);
      Assumptions.abort("no S3 server (scripts/s3-server.sh start: " + log.strip() + ")");
    }
    try {
      Map<String, String> cfg = new HashMap<>();
      for (String line : Files.readAllLines(state.resolve("env"))) {
        String kv = line.replaceFirst("^export ", "");
        int eq = kv.indexOf('=');
        if (eq > 0) cfg.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
      String prefix = "java-" + UUID.randomUUID().toString().substring(0, 8);
      String uri = "s3://" + cfg.get("SMD_S3_BUCKET") + "/" + prefix + "/run";
      String tbUri = "s3://" + cfg.get("SMD_S3_BUCKET") + "/" + prefix + "/tb";
      try (StorageOptions so = new StorageOptions().s3Endpoint(cfg.get("SMD_S3_ENDPOINT"))
              .s3Region(cfg.get("SMD_S3_REGION"))
              .s3Credentials(cfg.get("SMD_S3_ACCESS_KEY"), cfg.get("SMD_S3_SECRET_KEY"), null)
              .s3Retries(3, 10, 20000);
           HookOptions ho = new HookOptions().saveConfig(SaveConfig.every(1)).saveAll(true).storage(so);
           TrialOptions to = new TrialOptions().storage(so)) {
        try (Hook h = Hook.create(uri, ho)) {
          for (int s = 0; s < 2; ++s) {
            h.beginStep();
            h.saveTensor("w", new long[] {2}, new float[] {s, s + 1});
          }
        }
        try (Trial t = Trial.open(uri, to)) {
          assertArrayEquals(new long[] {0, 1}, t.steps());
        }
        try (TensorBoardWriter w = TensorBoardWriter.create(tbUri, so)) {
          w.addScalar(0, Mode.TRAIN, 1000.0, "loss", 0.5);
        }
        // the server keeps objects as files: bucket/key
        Path tbDir = state.resolve("data/root").resolve(cfg.get("SMD_S3_BUCKET")).resolve(prefix).resolve("tb");
        try (Stream<Path> s = Files.walk(tbDir)) {
          List<Path> files = s.filter(Files::isRegularFile).collect(Collectors.toList());
          assertEquals(1, files.size(), files.toString());
          assertTrue(files.get(0).toString().contains("/TRAIN/"), files.toString());
        }
        assertEquals(List.of(), Smd.s3UploadsInProgress("s3://" + cfg.get("SMD_S3_BUCKET") + "/" + prefix, so, false));
        // without the settings (and with the server's credentials nowhere else) the trial is not reached
        try (StorageOptions wrong = new StorageOptions().s3Endpoint(cfg.get("SMD_S3_ENDPOINT"))
                .s3Region(cfg.get("SMD_S3_REGION")).s3Credentials(cfg.get("SMD_S3_ACCESS_KEY"), "not-the-secret", null)
                .s3Retries(1, 0, 0);
             TrialOptions bad = new TrialOptions().storage(wrong)) {
          assertThrows(SmdException.class, () -> Trial.open(uri, bad));
        }
      }
    } finally {
      new ProcessBuilder(repo.resolve("scripts/s3-server.sh").toString(), "stop", state.toString())
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
    }
  }
}
