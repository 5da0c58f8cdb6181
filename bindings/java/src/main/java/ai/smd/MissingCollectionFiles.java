package ai.smd;

/** smdebug's MissingCollectionFiles: the trial has no collections file (yet). */
public class MissingCollectionFiles extends SmdException {
  public MissingCollectionFiles(String message) {
    super(SmdException.MISSING_COLLECTION_FILES, message);
  }
}
