package dev.maxsim4j.spark;

/**
 * One line for a failed Spark job: the message of the error that caused it (an executor's
 * {@code IllegalArgumentException} naming the row, a missing path), not Spark's wrapper with its stage dump.
 */
final class JobFailure {
  private static final int MAX_CAUSES = 64;

  private JobFailure() {}

  static String describe(Throwable failure) {
    Throwable cause = null;
    Throwable root = failure;
    // a bounded walk: causes can be made to form a loop
    for (int depth = 0; depth < MAX_CAUSES && cause == null; depth++) {
      if (root instanceof IllegalArgumentException || root instanceof IllegalStateException
          || root instanceof java.io.IOException || root instanceof OutOfMemoryError) {
        cause = root;
      } else if (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
    }
    if (cause != null) {
      return "error: " + firstLine(cause);
    }
    // a failure of Spark's own (a file it could not read) may name what went wrong only in its cause: e.g. Parquet
    // files of one table whose column types disagree
    String line = firstLine(failure);
    String rootLine = root.getMessage() == null ? "" : firstLine(root);
    if (root == failure || line.contains(root.getClass().getSimpleName()) && line.contains(rootLine)) {
      return "error: " + line; // the line names its cause already
    }
    return "error: " + line + " (" + root.getClass().getSimpleName() + (rootLine.isEmpty() ? "" : ": " + rootLine)
        + ")";
  }

  private static String firstLine(Throwable t) {
    String message = t.getMessage() == null ? t.toString() : t.getMessage();
    int end = message.indexOf('\n');
    return end < 0 ? message : message.substring(0, end);
  }
}
