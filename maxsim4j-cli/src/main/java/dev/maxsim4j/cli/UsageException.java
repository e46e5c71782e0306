package dev.maxsim4j.cli;

/** A mistake in the command line: reported as one line on stderr with exit code 2. */
public final class UsageException extends RuntimeException {
  public UsageException(String message) {
    super(message);
  }

  /** As above, restating {@code cause} (a refusal of the same line, worded for the command). */
  public UsageException(String message, Throwable cause) {
    super(message, cause);
  }
}
