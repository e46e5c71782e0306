package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A top-k over a few dozen documents is split across threads like a large one: each thread keeps its chunks' best
 * and the merge orders them totally (higher score, then lower index, NaN first), so the result equals a 1-thread
 * instance's bit for bit, ties and NaN included.
 */
class TopKAcrossThreadsTest {
  @Test
  void aSmallCorpusSplitAcrossThreadsKeepsTheOneThreadRanking() {
    SplittableRandom r = new SplittableRandom(7);
    int dim = 33;
    int length = 5;
    float[] q = new float[3 * 4 * dim];
    for (int i = 0; i < q.length; i++) {
      q[i] = (float) r.nextGaussian();
    }
    for (int nd : new int[] {2, 9, 40, 255, 257}) {
      float[] d = new float[nd * length * dim];
      for (int i = 0; i < d.length; i++) {
        d[i] = (float) r.nextGaussian();
      }
      // equal documents in every chunk (ties decided by the lower index), and one NaN document
      float[] twin = Arrays.copyOfRange(d, 0, length * dim);
      for (int j = 3; j < nd; j += 3) {
        System.arraycopy(twin, 0, d, j * length * dim, twin.length);
      }
      d[(nd - 1) * length * dim] = Float.NaN;
      TokenBatch queries = TokenBatch.ofFloats(q, 3, 4, dim);
      TokenBatch documents = TokenBatch.ofFloats(d, nd, length, dim);
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
}
