package dev.maxsim4j.cli;

/** A mistake in the command line: reported as one line on stderr with exit code 2. */
final class UsageException extends RuntimeException {
  UsageException(String message) {
    super(message);
  }
}
