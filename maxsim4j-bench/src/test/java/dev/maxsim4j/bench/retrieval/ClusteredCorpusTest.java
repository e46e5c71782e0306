package dev.maxsim4j.bench.retrieval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/** The synthetic corpus: deterministic, nested by size, unit tokens, and each query nearest its document. */
class ClusteredCorpusTest {
  @Test
  void deterministicNestedAndUnit() {
    for (int dim : new int[] {1, 3, 33}) {
      ClusteredCorpus a = new ClusteredCorpus(9, dim, 5, 3);
      ClusteredCorpus b = new ClusteredCorpus(9, dim, 5, 3);
      try (Arena arena = Arena.ofShared()) {
        Encoded small = a.documents(4, arena);
        Encoded large = b.documents(9, arena);
        for (int i = 0; i < 4; i++) {
          assertArrayEquals(small.row(i), large.row(i));
          for (float[] t : small.row(i)) {
            double norm = 0;
            for (float x : t) {
              norm += (double) x * x;
            }
            assertEquals(1, norm, 1e-5);
          }
        }
        assertArrayEquals(a.query(2, 3), b.query(2, 3));
      }
    }
    assertThrows(IllegalArgumentException.class, () -> new ClusteredCorpus(1, 0, 5, 3));
  }

  @Test
  void queriesFindTheirDocumentMostOftenByExactMaxSim() {
    ClusteredCorpus c = new ClusteredCorpus(42, 64, 16, 8);
    try (Arena arena = Arena.ofShared(); MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build()) {
      Encoded docs = c.documents(500, arena);
      int found = 0;
      for (int j = 0; j < 20; j++) {
        int target = j * 25;
        int best = maxSim.topK(TokenBatch.ofQuery(c.query(j, target)), docs.batch(), 1).indices()[0][0];
        found += best == target ? 1 : 0;
      }
      assertTrue(found >= 15, "found " + found + " of 20");
    }
  }
}
