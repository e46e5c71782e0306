package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import java.util.ArrayList;
import java.util.List;

/** One FDE parameter set as the command line gives it: {@code bits:repetitions:projection[:final]}. */
record FdeParams(int simHashBits, int repetitions, int projectionDim, int finalDim) {
  /**
   * The sets of {@code option}'s {@code value}, each checked against the encoder for tokens of {@code dim} here:
   * found later, a refused set ended a run after its exact search had taken minutes.
   */
  static List<FdeParams> parseList(String option, String value, int dim) {
    List<FdeParams> all = new ArrayList<>();
    // -1: an empty entry, even a last one, is an error rather than dropped
    for (String s : value.split(",", -1)) {
      String[] f = s.strip().split(":", -1);
      if (f.length < 3 || f.length > 4) {
        throw new UsageException(option + " '" + value + "': '" + s + "'; expected bits:repetitions:projection[:final],"
            + " e.g. 4:8:8");
      }
      int[] v = new int[4];
      for (int i = 0; i < f.length; i++) {
        try {
          v[i] = Args.parseInt(f[i]);
        } catch (NumberFormatException e) {
          throw new UsageException(option + " '" + value + "': '" + f[i] + "' in '" + s + "' is not an integer");
        }
      }
      FdeParams p = new FdeParams(v[0], v[1], v[2], v[3]);
      p.encoder(option, dim);
      all.add(p);
    }
    return all;
  }

  /** The encoder for tokens of dimension {@code dim}; a CLI error for parameters the encoder refuses. */
  FixedDimensionalEncoder encoder(int dim) {
    return encoder("--fde", dim);
  }

  private FixedDimensionalEncoder encoder(String option, int dim) {
    try {
      return FixedDimensionalEncoder.builder(dim).simHashBits(simHashBits).repetitions(repetitions)
          .projectionDim(projectionDim).finalDim(finalDim).build();
    } catch (IllegalArgumentException e) {
      throw new UsageException(option + " " + this + ": " + e.getMessage());
    }
  }

  int rawDimension() {
    return repetitions * (1 << simHashBits) * projectionDim;
  }

  @Override
  public String toString() {
    return simHashBits + ":" + repetitions + ":" + projectionDim + (finalDim > 0 ? ":" + finalDim : "");
  }
}
