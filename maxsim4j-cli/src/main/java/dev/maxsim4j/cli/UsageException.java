package dev.maxsim4j.cli;

/** A mistake in the command line: reported as one line on stderr with exit code 2. */
public final class UsageException extends RuntimeException {
  public UsageException(String message) {
    super(message);
  }
}
