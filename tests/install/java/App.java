// The Java program of the README's "Use smd from your program" (the same as app.c): writes a
// trial with the hook, reads a value back, runs a built-in rule.
import ai.smd.*;
import java.util.Map;

public class App {
  public static void main(String[] args) throws Exception {
    String dir = args[0];
    try (SaveConfig everyStep = SaveConfig.every(1);
        HookOptions o = new HookOptions().saveConfig(everyStep).includeCollection("weights");
        Hook hook = Hook.create(dir, o)) {
      for (int step = 0; step < 3; step++) {
        hook.beginStep();
        hook.saveTensor("fc.weight", new long[] {4}, new float[] {0, step, 2 * step, 3 * step});
      }
    }
    try (Trial trial = Trial.open(dir);
        Tensor t = trial.tensor("fc.weight");
        Value v = t.value(2);
        Rule rule = Rule.builtin("AllZero", trial, Map.of("tensor_regex", "fc\\..*"))) {
      rule.invoke();
      System.out.printf("java: fc.weight at step 2: %s; AllZero conditions met: %d%n",
          fmtDouble(v.getDouble(1)), rule.conditionsMet());
    }
  }

  private static String fmtDouble(double x) {
    return x == Math.rint(x) ? Long.toString((long) x) : Double.toString(x);
  }
}
