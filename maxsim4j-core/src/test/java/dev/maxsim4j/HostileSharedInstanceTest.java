package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One MaxSim shared by many threads calling every scoring entry at once, on the same and on different batches
 * (every CPU kernel: fp32, bf16, int8 and 1-bit documents, masked and packed): each result equals, bit for bit,
 * the one the same call gave alone.
 */
class HostileSharedInstanceTest {

  private record Case(TokenBatch q, TokenBatch d, float[][] scores, TopK top, float[] pairs, float[][] async,
      float[] training) {}

  @Test
  void concurrentCallsEqualTheirSingleThreadedResults() throws Exception {
    RandomBatches r = new RandomBatches(11);
    TokenBatch q = r.padded(DType.FLOAT32, 6, 9, 40, 1);
    TokenBatch[] documents = {
        r.padded(DType.FLOAT32, 6, 13, 40, 1), r.packed(DType.BFLOAT16, 6, 1, 17, 40, true),
        r.padded(DType.INT8, 6, 11, 40, 1), r.padded(DType.BINARY, 6, 15, 40, 0)};
    for (MaxSim.Builder builder : new MaxSim.Builder[] {MaxSim.builder(), MaxSim.builder().backend("cpu").threads(2)}) {
      try (MaxSim m = builder.build()) {
        List<Case> cases = new ArrayList<>();
        for (TokenBatch d : documents) {
          boolean trainable = !d.dtype().isQuantized();
          cases.add(new Case(q, d, m.scores(q, d), m.topK(q, d, 4), m.pairwise(q, d), m.scoresAsync(q, d).join(),
              trainable ? m.scoresForTraining(q, d).scores() : null));
        }
        ResidentBatch resident = m.upload(documents[0]);
        ExecutorService pool = Executors.newFixedThreadPool(6);
        CountDownLatch start = new CountDownLatch(6);
        List<Future<?>> calls = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
          int thread = t;
          calls.add(pool.submit(() -> {
            start.countDown();
            start.await(10, TimeUnit.SECONDS);
            for (int i = 0; i < 30; i++) {
              // threads 0-3 each stay on one batch, 4-5 walk all of them: same and different batches at once
              Case c = cases.get(thread < 4 ? thread : (i + thread) % cases.size());
              String at = m.backendName() + " " + c.d() + " thread " + thread + " call " + i;
              switch (i % 5) {
                case 0 -> assertArrayEquals(c.scores(), m.scores(c.q(), c.d()), at);
                case 1 -> {
                  TopK top = m.topK(c.q(), c.d(), 4);
                  assertArrayEquals(c.top().scores(), top.scores(), at);
                  assertArrayEquals(c.top().indices(), top.indices(), at);
                }
                case 2 -> assertArrayEquals(c.pairs(), m.pairwise(c.q(), c.d()), at);
                case 3 -> assertArrayEquals(c.async(), (c.d() == documents[0]
                    ? m.scoresAsync(c.q(), resident) : m.scoresAsync(c.q(), c.d())).get(10, TimeUnit.SECONDS), at);
                default -> {
                  if (c.training() != null) {
                    assertArrayEquals(c.training(), m.scoresForTraining(c.q(), c.d()).scores(), at);
                  } else {
                    assertArrayEquals(c.scores(), m.scores(c.q(), c.d()), at);
                  }
                }
              }
            }
            return null;
          }));
        }
        for (Future<?> f : calls) {
          f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
      }
    }
  }
}
