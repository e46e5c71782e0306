package dev.maxsim4j.cli.io;

/**
 * An array whose element type no command reads (a float64 .npy, an F64 tensor): its source and dtype kept apart, so
 * that the command that asked for the array can say which argument it was and what that argument takes.
 */
public final class UnsupportedDtypeException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String source;
  private final String dtype;

  UnsupportedDtypeException(String source, String dtype, String accepted) {
    super(source + " has dtype " + dtype + "; expected " + accepted);
    this.source = source;
    this.dtype = dtype;
  }

  /** The same refusal naming {@code argument} (e.g. {@code --queries}) and what it takes ({@code expected}). */
  public IllegalArgumentException as(String argument, String expected) {
    return new IllegalArgumentException(argument + " " + source + " has dtype " + dtype + "; expected " + expected);
  }
}
