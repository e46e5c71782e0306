package dev.maxsim4j.internal.cuda.plan;

import dev.maxsim4j.internal.Problem;

/**
 * How a forward launch's pairs are laid out, as the kernels' {@code mode} parameter reads it (the code of
 * maxsim_common.cuh's PairMode of the same name, which KernelCodesTest compares): every query against
 * {@code perQuery} documents from {@code docOffset}, or pair {@code p} = (query {@code p / perQuery}, document
 * {@code p}) as listed (pairwise and candidate launches).
 */
public enum PairLayout {
  ALL_PAIRS(0),
  LISTED_PAIRS(1);

  private final int mode;

  PairLayout(int mode) {
    this.mode = mode;
  }

  /** The layout of a problem's pairs. */
  public static PairLayout of(Problem.Kind kind) {
    return kind == Problem.Kind.ALL_PAIRS ? ALL_PAIRS : LISTED_PAIRS;
  }

  /** The kernels' {@code mode} argument. */
  public int mode() {
    return mode;
  }
}
