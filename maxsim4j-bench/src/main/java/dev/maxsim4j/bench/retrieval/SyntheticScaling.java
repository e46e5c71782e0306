package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.cli.Args;
import java.io.PrintStream;

final class SyntheticScaling {
  private SyntheticScaling() {}

  static int run(Args a, PrintStream out) {
    return 0;
  }
}
