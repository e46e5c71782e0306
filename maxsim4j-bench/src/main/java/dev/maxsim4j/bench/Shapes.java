package dev.maxsim4j.bench;

import dev.maxsim4j.cli.UsageException;

/** Benchmark shapes written {@code Nq,Nd,Lq,Ld,d}: queries, documents, query tokens, document tokens, dim. */
public final class Shapes {
  /** The synthetic batches are single Java arrays: a few header words below 2^31-1 elements each. */
  static final long MAX_ELEMENTS = Integer.MAX_VALUE - 8;

  private Shapes() {}

  /** Parses {@code s} for {@code command}; a bad shape is a {@link UsageException} naming it. */
  public static int[] parse(String command, String s) {
    String[] parts = s.split(",");
    if (parts.length != 5) {
      throw new UsageException(command + ": --shape '" + s + "'; expected Nq,Nd,Lq,Ld,d");
    }
    int[] sh = new int[5];
    for (int i = 0; i < 5; i++) {
      try {
        sh[i] = Integer.parseInt(parts[i].trim());
      } catch (NumberFormatException e) {
        throw new UsageException(command + ": --shape '" + s + "'; '" + parts[i] + "' is not an integer");
      }
      if (sh[i] < 1) {
        throw new UsageException(command + ": --shape '" + s + "'; every entry must be >= 1");
      }
    }
    if ((long) sh[0] * sh[2] * sh[4] > MAX_ELEMENTS || (long) sh[1] * sh[3] * sh[4] > MAX_ELEMENTS) {
      throw new UsageException(command + ": --shape '" + s + "'; Nq x Lq x d and Nd x Ld x d must each be at most "
          + MAX_ELEMENTS);
    }
    return sh;
  }

  /** Multiply-adds of all pairs, counted as two operations each. */
  public static double flops(int[] sh) {
    return 2.0 * sh[0] * sh[1] * sh[2] * sh[3] * sh[4];
  }

  /** Bytes of both inputs read once, at {@code bytesPerValue}. */
  public static double inputBytes(int[] sh, int bytesPerValue) {
    return (double) bytesPerValue * ((double) sh[0] * sh[2] + (double) sh[1] * sh[3]) * sh[4];
  }
}
