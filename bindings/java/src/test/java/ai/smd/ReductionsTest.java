package ai.smd;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reductions the caller computed are written byte for byte as the hook writes its own. */
class ReductionsTest {
  @TempDir Path tmp;

  private Path run(String name, boolean given) throws Exception {
    Path out = tmp.resolve(name);
    try (SaveConfig sc = SaveConfig.every(1);
         ReductionConfig rc = ReductionConfig.parse("min,max,sum,l1,abs_max");
         HookOptions o = new HookOptions().saveConfig(sc).reductionConfig(rc).saveAll(true).wallTimeBase(100);
         Hook hook = Hook.create(out.toString(), o)) {
      hook.beginStep();
      if (given) {
        Hook.DueReductions due = hook.dueReductions("g");
        assertEquals(List.of("min", "max", "sum", "l1", "abs_max"), due.reductions);
        assertFalse(due.valueNeeded);
        hook.saveReductions("g", DType.FLOAT32, new long[] {2, 2},
            new String[] {"l1", "max", "sum", "min", "max"}, new boolean[] {false, true, false, false, false},
            new double[] {10, 4, -2, -4, 3});
        SmdException e = assertThrows(SmdException.class, () -> hook.saveReductions("g2", DType.FLOAT32,
            new long[] {4}, new String[] {"min"}, new boolean[] {false}, new double[] {1}));
        assertTrue(e.getMessage().contains("max"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> hook.saveReductions("g3", DType.FLOAT32,
            new long[] {4}, new String[] {"min"}, new boolean[] {false, true}, new double[] {1}));
      } else {
        hook.saveTensor("g", new long[] {2, 2}, new float[] {1, -2, 3, -4});
      }
    }
    return out.resolve("events/000000000000/000000000000_worker_0.tfevents");
  }

  @Test
  void savedReductionsEqualTheHooksOwn() throws Exception {
    byte[] a = Files.readAllBytes(run("a", false));
    byte[] b = Files.readAllBytes(run("b", true));
    assertTrue(a.length > 16);
    assertArrayEquals(a, b);
  }
}
