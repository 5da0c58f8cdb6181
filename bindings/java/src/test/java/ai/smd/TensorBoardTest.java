package ai.smd;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TensorBoardTest {
  @TempDir Path tmp;

  private static List<Path> files(Path dir) throws Exception {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).sorted().collect(Collectors.toList());
    }
  }

  @Test
  void writesScalarsAndHistogramsPerModeAndStep() throws Exception {
    Path dir = tmp.resolve("tb");
    try (TensorBoardWriter w = TensorBoardWriter.create(dir.toString())) {
      w.addScalar(0, Mode.TRAIN, 1000.0, "loss", 0.5);
      assertTrue(w.addHistogram(0, Mode.TRAIN, 1000.0, "fc1/weight", new float[] {1, 2, 3}));
      assertTrue(w.addHistogram(1, Mode.TRAIN, 0, "fc1/weight", new double[] {-1, 0.5}));
      ByteBuffer b = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN).putFloat(1).putFloat(2).flip();
      assertTrue(w.addHistogram(0, Mode.EVAL, 0, "direct", DType.FLOAT32, b));
      assertFalse(w.addHistogram(0, Mode.EVAL, 0, "nan", new float[] {Float.NaN}), "no value in a bucket");
      w.flush();
      assertThrows(SmdException.class, () -> w.addScalar(0, Mode.ALL, 0, "x", 1));
      assertThrows(SmdException.class, () -> w.addScalar(0, Mode.TRAIN, 0, "///", 1));
      assertThrows(SmdException.class, () -> w.addHistogram(0, Mode.TRAIN, 0, "empty", new float[0]));
      assertThrows(IllegalArgumentException.class,
          () -> w.addHistogram(0, Mode.TRAIN, 0, "heap", DType.FLOAT32, ByteBuffer.allocate(4)));
    }
    List<Path> fs = files(dir);
    assertEquals(3, fs.size(), fs.toString());
    assertTrue(fs.get(0).toString().contains("/EVAL/000000000000_"), fs.toString());
    assertTrue(fs.get(1).toString().contains("/TRAIN/000000000000_"), fs.toString());
    assertTrue(fs.get(2).toString().contains("/TRAIN/000000000001_"), fs.toString());
    String train0 = new String(Files.readAllBytes(fs.get(1)), java.nio.charset.StandardCharsets.ISO_8859_1);
    assertTrue(train0.contains("brain.Event:2") && train0.contains("loss") && train0.contains("fc1/weight"));
    TensorBoardWriter w = TensorBoardWriter.create(dir.toString());
    w.close();
    assertThrows(IllegalStateException.class, () -> w.addScalar(0, Mode.TRAIN, 0, "x", 1));
    assertThrows(SmdException.class, () -> TensorBoardWriter.create(""));
  }

  @Test
  void aHookExportsTensorboardWhenAsked() throws Exception {
    Path out = tmp.resolve("run");
    Path tb = tmp.resolve("tb2");
    try (HookOptions o = new HookOptions().saveConfig(SaveConfig.every(1)).saveAll(true).exportTensorboard(true)
        .tensorboardDir(tb.toString());
         Hook h = Hook.create(out.toString(), o)) {
      h.beginStep();
      h.saveScalar("loss", 0.25);
      h.saveTensor("w", new long[] {2}, new float[] {1, 2});
    }
    assertFalse(files(tb).isEmpty());
  }
}
