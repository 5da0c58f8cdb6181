package ai.smd.examples;

import ai.smd.InvokeOptions;
import ai.smd.Mode;
import ai.smd.Rule;
import ai.smd.SmdException;
import ai.smd.Tensor;
import ai.smd.Trial;
import ai.smd.Value;
import java.util.List;
import java.util.Map;

/**
 * Analyze: opens a trial (e.g. written by TrainMlp), prints its steps and losses, and runs the
 * built-in VanishingGradient rule and a custom rule written in Java (the loss of a TRAIN step
 * above a threshold) over it in one pass.
 *
 * <pre>java -cp smd.jar ai.smd.examples.Analyze TRIAL_DIR [--loss-threshold X]</pre>
 */
public final class Analyze {
  private Analyze() {}

  public static void main(String[] args) throws SmdException {
    if (args.length < 1) {
      System.err.println("usage: Analyze TRIAL_DIR [--loss-threshold X]");
      System.exit(2);
    }
    double threshold = args.length >= 3 && args[1].equals("--loss-threshold") ? Double.parseDouble(args[2]) : 0.69;
    try (Trial trial = Trial.open(args[0])) {
      long[] steps = trial.steps();
      System.out.printf("%s: %d steps, workers %s, collections %s%n", trial.path(), steps.length, trial.workers(),
          trial.collectionNames());
      try (Tensor loss = trial.tensor("loss")) {
        long[] train = loss.steps(Mode.TRAIN);
        if (train.length > 0) {
          long first = train[0];
          long last = train[train.length - 1];
          try (Value v0 = loss.value(first, Mode.TRAIN); Value v1 = loss.value(last, Mode.TRAIN)) {
            System.out.printf("train loss: step %d %.4f, step %d %.4f%n", first, v0.getDouble(0), last, v1.getDouble(0));
          }
        }
      }
      try (Rule vanishing = Rule.builtin("VanishingGradient", trial, Map.of("threshold", "0.0000001"));
           Rule highLoss = Rule.custom("HighLoss", trial, (ctx, step) -> {
             Trial t = ctx.trial();
             if (t.mode(step) != Mode.TRAIN) return false;
             try (Tensor l = t.tensor("loss"); Value v = l.value(step)) {
               double x = v.buffer().getFloat(0);
               if (x > threshold) {
                 ctx.report("loss", String.format("loss %.4f > %s", x, threshold));
                 return true;
               }
               return false;
             }
           });
           InvokeOptions options = new InvokeOptions().onFinding((rule, f) -> {
             if (f.step() < 3) System.out.println(rule + ": step " + f.step() + ": " + f.message());
             return true;
           })) {
        Rule.invokeAll(List.of(vanishing, highLoss), 0, -1, false, options);
        for (Rule r : List.of(vanishing, highLoss)) {
          System.out.printf("%s: %d steps evaluated, condition met %d times, ended: %s%n", r.name(),
              r.stepsEvaluated(), r.conditionsMet(), r.endReason());
        }
      }
    }
  }
}
