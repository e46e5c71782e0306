package dev.maxsim4j.bench;

import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import java.util.ArrayList;
import java.util.List;

/** Benchmark shapes written {@code Nq,Nd,Lq,Ld,d}: queries, documents, query tokens, document tokens, dim. */
public final class Shapes {
  /** The synthetic batches are single Java arrays: a few header words below 2^31-1 elements each. */
  static final long MAX_ELEMENTS = Integer.MAX_VALUE - 8;

  private Shapes() {}

  /** A command line with its repeatable {@code --shape} options taken out: the shapes, and the rest. */
  public record Split(List<String> shapes, String[] rest) {}

  /** Takes every {@code --shape VALUE} out of {@code argv} (the command name stays first in the rest). */
  public static Split take(String[] argv) {
    List<String> shapes = new ArrayList<>();
    List<String> rest = new ArrayList<>();
    rest.add(argv[0]);
    for (int i = 1; i < argv.length; i++) {
      if (argv[i].equals("--shape")) {
        // left in the rest, a bare --shape read as an unknown option; taken, an option read as a shape
        if (i + 1 >= argv.length) {
          throw new UsageException(argv[0] + ": --shape needs a value");
        }
        if (argv[i + 1].startsWith("--")) {
          throw new UsageException(argv[0] + ": --shape needs a value, not the option " + argv[i + 1]);
        }
        shapes.add(argv[++i]);
      } else {
        rest.add(argv[i]);
      }
    }
    return new Split(shapes, rest.toArray(String[]::new));
  }

  /** Parses {@code s} for {@code command}; a bad shape is a {@link UsageException} naming it. */
  public static int[] parse(String command, String s) {
    String[] parts = s.split(",", -1); // -1: a trailing empty entry is an error, not dropped
    if (parts.length != 5) {
      throw new UsageException(command + ": --shape '" + s + "'; expected Nq,Nd,Lq,Ld,d");
    }
    int[] sh = new int[5];
    for (int i = 0; i < 5; i++) {
      try {
        sh[i] = Args.parseInt(parts[i].trim());
      } catch (NumberFormatException e) {
        throw new UsageException(command + ": --shape '" + s + "'; '" + parts[i] + "' is not an integer from 1 to "
            + Integer.MAX_VALUE + " (plain digits)");
      }
      if (sh[i] < 1) {
        throw new UsageException(command + ": --shape '" + s + "'; every entry must be >= 1");
      }
    }
    if ((long) sh[0] * sh[2] * sh[4] > MAX_ELEMENTS || (long) sh[1] * sh[3] * sh[4] > MAX_ELEMENTS) {
      throw new UsageException(command + ": --shape '" + s + "'; Nq x Lq x d and Nd x Ld x d must each be at most "
          + MAX_ELEMENTS);
    }
    // the all-pairs scores are one array too: found here, not after the inputs are made and earlier shapes timed
    if ((long) sh[0] * sh[1] > MAX_ELEMENTS) {
      throw new UsageException(command + ": --shape '" + s + "'; Nq x Nd = " + (long) sh[0] * sh[1]
          + " scores; expected at most " + MAX_ELEMENTS);
    }
    return sh;
  }

  /**
   * Refuses {@code s} where its fp32 inputs and scores alone, which every run of it holds at once, are more than
   * the heap: else they are made, maybe for minutes, before an OutOfMemoryError.
   */
  public static void checkHeap(String command, String s, int[] sh) {
    checkHeap(command, s, sh, 0, "");
  }

  /**
   * As {@link #checkHeap(String, String, int[])} for the CPU kernels, which also copy each query with its tokens
   * padded to 16 lanes (up to 16 times a query's bytes where it has one token), beside {@code typedBytes} of the
   * inputs' copies in the benchmarked types.
   */
  public static void checkCpuHeap(String command, String s, int[] sh, long typedBytes) {
    long padded = Float.BYTES * (long) sh[0] * ((sh[2] + 15L) / 16 * 16) * sh[4];
    checkHeap(command, s, sh, padded + typedBytes, ", the kernel's copy of the queries padded to 16 tokens"
        + (typedBytes > 0 ? " and the inputs' copies in the benchmarked types" : ""));
  }

  /** As above, beside {@code extra} bytes that {@code extraWhat} (", and ...") names. */
  public static void checkHeap(String command, String s, int[] sh, long extra, String extraWhat) {
    long bytes = Float.BYTES * ((long) sh[0] * sh[2] * sh[4] + (long) sh[1] * sh[3] * sh[4] + (long) sh[0] * sh[1])
        + extra;
    long heap = Runtime.getRuntime().maxMemory();
    if (bytes > heap) {
      throw new UsageException(command + ": --shape '" + s + "' needs at least " + (bytes >> 20) + " MiB of heap for"
          + " its fp32 inputs and scores" + extraWhat + "; the heap is " + (heap >> 20) + " MiB (raise -Xmx through"
          + " JAVA_OPTS)");
    }
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
