package dev.maxsim4j;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.BackendSelector;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;

/** A one-thread CPU backend behind a class of the test's own, which overrides what the test observes or delays. */
class ForwardingBackend implements Backend {
  final Backend cpu = BackendSelector.create("cpu", 1);

  @Override
  public String name() {
    return cpu.name();
  }

  @Override
  public float[] score(Problem problem, int[] argmax) {
    return cpu.score(problem, argmax);
  }

  @Override
  public TopKResult topK(Tokens queries, Tokens documents, int k) {
    return cpu.topK(queries, documents, k);
  }

  @Override
  public Gradients backward(Problem problem, int[] argmax, float[] dScores, boolean deterministic) {
    return cpu.backward(problem, argmax, dScores, deterministic);
  }

  @Override
  public int threads() {
    return 1;
  }

  @Override
  public void close() {
    cpu.close();
  }
}
