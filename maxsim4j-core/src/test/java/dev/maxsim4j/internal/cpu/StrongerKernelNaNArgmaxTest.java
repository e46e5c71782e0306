package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Each fast kernel alone gives a query token whose max is NaN the argmax of its first NaN document token, as the
 * reference does. Through the public API the driver re-scores any pair whose tracked score is not finite with the
 * reference (CpuBackend.finiteOrReference), which hides a kernel that gets this wrong; its comment says the kernels
 * keep the NaN and tie rules themselves "so that each is right alone and tested so". Documents read in place (one
 * run of fp32 tokens) and staged (a masked token first), queries of one and of two vector blocks, NaN before and
 * after the finite max and in the last token of a micro-kernel step.
 */
class StrongerKernelNaNArgmaxTest {
  private static final int D = 8;
  private static final int L = 13;

  @Test
  void aNaNMaxPointsAtTheFirstNaNTokenOnEveryKernel() {
    SplittableRandom r = new SplittableRandom(3);
    for (int lq : new int[] {5, 20}) {
      Tokens q = floats(r, 1, lq, null);
      for (int nanAt : new int[] {1, 5, 6, 11, 12}) {
        for (boolean masked : new boolean[] {false, true}) {
          boolean[] mask = null;
          if (masked) {
            mask = new boolean[L];
            Arrays.fill(mask, true);
            mask[0] = false; // staged, not read in place
          }
          Tokens docs = floats(r, 1, L, mask);
          Arrays.fill(docs.f32, nanAt * D, nanAt * D + D, 1f);
          docs.f32[nanAt * D + 2] = Float.NaN; // every query token's dot product with it is NaN
          docs.f32[(nanAt + 1 < L ? nanAt + 1 : 1) * D + 4] = Float.NaN; // a second, later NaN token (or earlier)
          int[] want = new int[lq];
          ReferenceKernel.maxSim(q, 0, docs, 0, want, 0);
          for (PairKernel kernel : new PairKernel[] {new VectorKernel(), new ScalarKernel()}) {
            PairKernel.Worker w = kernel.bind(q, docs).newWorker();
            w.load(0);
            int[] got = new int[lq];
            Arrays.fill(got, -1);
            float score = w.score(0, got, 0);
            String where = kernel.name() + " Lq=" + lq + " NaN at " + nanAt + (masked ? " staged" : " in place");
            assertTrue(Float.isNaN(score), where + ": score " + score);
            assertArrayEquals(want, got, where + ": the argmax of a NaN max is the first NaN token");
          }
        }
      }
    }
  }

  private static Tokens floats(SplittableRandom r, int n, int l, boolean[] mask) {
    float[] f = new float[n * l * D];
    for (int k = 0; k < f.length; k++) {
      f[k] = (float) (r.nextGaussian() * 0.5);
    }
    int[] starts = new int[n];
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) {
      starts[i] = i * l;
      lengths[i] = l;
    }
    return new Tokens(DType.FLOAT32, D, l, starts, lengths, n * l, mask, f, null, null);
  }
}
