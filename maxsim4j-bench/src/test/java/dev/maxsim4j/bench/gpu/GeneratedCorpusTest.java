package dev.maxsim4j.bench.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class GeneratedCorpusTest {

  /** The fill hashes {@code seed * M + i}: a shard's seed must continue the whole corpus's sequence. */
  @Test
  void aShardsSeedContinuesTheWholeCorpus() {
    long m = 0x9e3779b97f4a7c15L;
    assertEquals(1L, m * GeneratedCorpus.inverse(m));
    for (long seed : new long[] {0, 1, 42, -7, Long.MAX_VALUE}) {
      for (long first : new long[] {0, 1, 38_400, 1_000_000L * 300 * 128, Long.MAX_VALUE / 3}) {
        assertEquals(seed * m + first, GeneratedCorpus.seedFrom(seed, first) * m, seed + " from " + first);
      }
    }
  }
}
