package ai.smd;

import java.util.ArrayList;
import java.util.List;

/** Which tensor names {@link Trial#tensorNames(TensorFilter)} lists. A plain value. */
public final class TensorFilter {
  Long step;
  Mode mode;
  String collection;
  final List<String> regexes = new ArrayList<>();

  /** Only tensors saved at this step (of the filter's mode). */
  public TensorFilter step(long step) {
    this.step = step;
    return this;
  }

  /** Only tensors saved in this mode (GLOBAL: any). */
  public TensorFilter mode(Mode mode) {
    this.mode = mode;
    return this;
  }

  /** Only names one of the regexes matches (Python re.search). */
  public TensorFilter regex(String regex) {
    if (regex == null) throw new NullPointerException("regex is null");
    regexes.add(regex);
    return this;
  }

  /** Only members of this collection (not together with regexes). */
  public TensorFilter collection(String collection) {
    this.collection = collection;
    return this;
  }
}
