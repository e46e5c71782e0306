package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Small calls are split across threads like large ones: a top-k over a few dozen documents by chunks of documents,
 * one query's candidates (a reranker's call) and pairwise calls by chunks of pairs. Each pair is computed the same
 * way whatever thread holds it, and the top-k merge orders totally (higher score, then lower index, NaN first), so
 * every result equals a 1-thread instance's bit for bit, ties, NaN and argmax included.
 */
class SplitAcrossThreadsTest {
  private static final int DIM = 33;
  private static final int LENGTH = 5;
  private final SplittableRandom r = new SplittableRandom(7);

  private float[] gaussian(int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) r.nextGaussian();
    }
    return v;
  }

  /** nd documents: every third equal to the first (ties), the last one NaN. */
  private TokenBatch documents(int nd) {
    float[] d = gaussian(nd * LENGTH * DIM);
    for (int j = 3; j < nd; j += 3) {
      System.arraycopy(d, 0, d, j * LENGTH * DIM, LENGTH * DIM);
    }
    d[(nd - 1) * LENGTH * DIM] = Float.NaN;
    return TokenBatch.ofFloats(d, nd, LENGTH, DIM);
  }

  @Test
  void aSmallCorpusSplitAcrossThreadsKeepsTheOneThreadRanking() {
    TokenBatch queries = TokenBatch.ofFloats(gaussian(3 * 4 * DIM), 3, 4, DIM);
    for (int nd : new int[] {2, 9, 40, 255, 257}) {
      TokenBatch documents = documents(nd);
      for (String backend : new String[] {"vector", "scalar"}) {
        TopK one;
        try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
          one = m.topK(queries, documents, 7);
        }
        for (int threads : new int[] {2, 3, 8}) {
          try (MaxSim m = MaxSim.builder().backend(backend).threads(threads).build()) {
            assertEquals(one, m.topK(queries, documents, 7), backend + ", " + nd + " documents, " + threads
                + " threads");
          }
        }
      }
    }
  }

  @Test
  void oneQuerysCandidatesAndPairwiseCallsSplitAcrossThreadsScoreAsOnOne() {
    for (int k : new int[] {1, 2, 9, 40}) {
      TokenBatch query = TokenBatch.ofFloats(gaussian(4 * DIM), 1, 4, DIM);
      TokenBatch candidates = documents(k);
      TokenBatch pairs = TokenBatch.ofFloats(gaussian(k * 4 * DIM), k, 4, DIM);
      for (String backend : new String[] {"vector", "scalar"}) {
        float[][] one;
        float[] onePairwise;
        int[] oneArgmax = new int[k * 4];
        try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
          one = m.candidates(query, candidates, k);
          onePairwise = m.pairwise(pairs, candidates);
          TrainingScores t = m.candidatesForTraining(query, candidates, k);
          for (int p = 0; p < k; p++) {
            for (int s = 0; s < 4; s++) {
              oneArgmax[p * 4 + s] = t.argmax(p, s);
            }
          }
        }
        for (int threads : new int[] {2, 3, 8}) {
          String what = backend + ", " + k + " candidates, " + threads + " threads";
          try (MaxSim m = MaxSim.builder().backend(backend).threads(threads).build()) {
            assertArrayEquals(one, m.candidates(query, candidates, k), what);
            assertArrayEquals(onePairwise, m.pairwise(pairs, candidates), what);
            TrainingScores t = m.candidatesForTraining(query, candidates, k);
            int[] argmax = new int[k * 4];
            for (int p = 0; p < k; p++) {
              for (int s = 0; s < 4; s++) {
                argmax[p * 4 + s] = t.argmax(p, s);
              }
            }
            assertEquals(Arrays.toString(oneArgmax), Arrays.toString(argmax), what);
          }
        }
      }
    }
  }
}
