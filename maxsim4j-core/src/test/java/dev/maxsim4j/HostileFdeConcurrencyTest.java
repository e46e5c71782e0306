package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HostileFdeConcurrencyTest {

  @Test
  void hostileEncoderParameters() {
    assertThrows(IllegalArgumentException.class, () -> FixedDimensionalEncoder.builder(0));
    assertThrows(IllegalArgumentException.class, () -> FixedDimensionalEncoder.builder(-5));
    assertThrows(IllegalArgumentException.class,
        () -> FixedDimensionalEncoder.builder(Integer.MAX_VALUE).build());
    assertThrows(IllegalArgumentException.class,
        () -> FixedDimensionalEncoder.builder(4).repetitions(Integer.MAX_VALUE).simHashBits(10).build());
    assertThrows(IllegalArgumentException.class,
        () -> FixedDimensionalEncoder.builder(1 << 30).projectionDim(1 << 30).repetitions(1 << 30).simHashBits(10)
            .build());
    assertThrows(IllegalArgumentException.class, () -> FixedDimensionalEncoder.builder(4).finalDim(Integer.MAX_VALUE)
        .build());
    assertThrows(IllegalArgumentException.class, () -> FixedDimensionalEncoder.builder(4).simHashBits(11));
    assertThrows(IllegalArgumentException.class, () -> FixedDimensionalEncoder.builder(4).simHashBits(-1));
    assertThrows(IllegalArgumentException.class, () -> FixedDimensionalEncoder.builder(4).projectionDim(5));
    assertThrows(IllegalArgumentException.class, () -> FixedDimensionalEncoder.builder(4).repetitions(0));
    for (long seed : new long[] {Long.MIN_VALUE, -1, 0, Long.MAX_VALUE}) {
      FixedDimensionalEncoder e = FixedDimensionalEncoder.builder(3).simHashBits(0).repetitions(1).projectionDim(1)
          .finalDim(1).seed(seed).build();
      float[][] out = e.encodeDocuments(TokenBatch.ofFloats(new float[] {1, 2, 3, Float.NaN, 0, 0}, 2, 1, 3)
          .withMask(new boolean[] {true, false}));
      assertEquals(1, out[0].length);
      assertArrayEquals(new float[] {0f}, out[1]);
      FixedDimensionalEncoder big = FixedDimensionalEncoder.builder(1).simHashBits(10).repetitions(64).seed(seed)
          .build();
      assertEquals(65536, big.dimension());
      assertEquals(0, big.encodeQueries(TokenBatch.ofFloats(new float[0], 0, 5, 1)).length);
      float[][] q = big.encodeQueries(TokenBatch.ofFloats(new float[] {Float.POSITIVE_INFINITY, 1}, 1, 2, 1));
      assertEquals(65536, q[0].length);
    }
    FixedDimensionalEncoder e = FixedDimensionalEncoder.builder(4).build();
    assertThrows(IllegalArgumentException.class, () -> e.encodeQueries(TokenBatch.ofFloats(new float[3], 1, 1, 3)));
    assertThrows(IllegalArgumentException.class, () -> e.encodeQueries(null));
  }

  @Test
  void manyThreadsTrainScoreAndCloseAtOnce() throws Exception {
    RandomBatches r = new RandomBatches(7);
    TokenBatch q = r.padded(DType.FLOAT32, 4, 9, 33, 1);
    TokenBatch d = r.padded(DType.BFLOAT16, 6, 17, 33, 1);
    for (int round = 0; round < 20; round++) {
      MaxSim m = MaxSim.builder().backend(round % 2 == 0 ? "vector" : "scalar").threads(2).build();
      TrainingStep expected = m.lossAllPairs(q, d, Loss.contrastive(0.05f));
      ResidentBatch rb = m.upload(d);
      ExecutorService pool = Executors.newFixedThreadPool(6);
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        int kind = t;
        fs.add(pool.submit(() -> {
          for (int i = 0; i < 50; i++) {
            try {
              switch (kind % 3) {
                case 0 -> {
                  TrainingStep s = m.lossAllPairs(q, d, Loss.contrastive(0.05f));
                  assertEquals(expected.loss(), s.loss());
                  assertArrayEquals(expected.gradients().documents().toFloatArray(),
                      s.gradients().documents().toFloatArray());
                }
                case 1 -> m.topK(q, rb, 3);
                default -> {
                  rb.close();
                  m.scoresAsync(q, d).join();
                }
              }
            } catch (IllegalStateException closed) {
              assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
            }
          }
          return null;
        }));
      }
      Thread.sleep(round);
      m.close();
      for (Future<?> f : fs) {
        f.get(60, TimeUnit.SECONDS);
      }
      pool.shutdown();
      m.close();
      rb.close();
    }
  }
}
