package dev.maxsim4j.spark;

/**
 * One line for a failed Spark job: the message of the error that caused it (an executor's
 * {@code IllegalArgumentException} naming the row, a missing path), not Spark's wrapper with its stage dump.
 */
final class JobFailure {
  private JobFailure() {}

  static String describe(Throwable failure) {
    Throwable cause = failure;
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof IllegalArgumentException || t instanceof IllegalStateException
          || t instanceof java.io.IOException || t instanceof OutOfMemoryError) {
        cause = t;
        break;
      }
    }
    String message = cause.getMessage() == null ? cause.toString() : cause.getMessage();
    int end = message.indexOf('\n');
    String first = end < 0 ? message : message.substring(0, end);
    return "error: " + first;
  }
}
