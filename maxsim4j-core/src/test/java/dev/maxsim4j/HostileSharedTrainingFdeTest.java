package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One TrainingScores' backward run again and from several threads at once, and one FixedDimensionalEncoder shared
 * by several threads (alone and through MaxSim): every result equals the first, bit for bit.
 */
class HostileSharedTrainingFdeTest {

  @Test
  void repeatedAndConcurrentBackwardAndEncodingsAreBitwiseStable() throws Exception {
    RandomBatches r = new RandomBatches(5);
    TokenBatch q = r.padded(DType.FLOAT32, 5, 7, 24, 1);
    TokenBatch d = r.packed(DType.BFLOAT16, 8, 1, 12, 24, true);
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(24).build();
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(2).build()) {
      TrainingScores ts = m.scoresForTraining(q, d);
      float[] dScores = r.floats(5 * 8);
      Gradients first = ts.backward(dScores);
      float[] dq = first.queries().toFloatArray();
      float[] dd = first.documents().toFloatArray();
      float[][] fq = encoder.encodeQueries(q);
      float[][] fd = encoder.encodeDocuments(d);
      ExecutorService pool = Executors.newFixedThreadPool(4);
      CountDownLatch start = new CountDownLatch(4);
      List<Future<?>> calls = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        calls.add(pool.submit(() -> {
          start.countDown();
          start.await(10, TimeUnit.SECONDS);
          for (int i = 0; i < 20; i++) {
            if (thread % 2 == 0) {
              Gradients g = ts.backward(dScores);
              assertArrayEquals(dq, g.queries().toFloatArray());
              assertArrayEquals(dd, g.documents().toFloatArray());
            } else {
              assertArrayEquals(fq, i % 2 == 0 ? encoder.encodeQueries(q) : m.encodeQueries(encoder, q));
              assertArrayEquals(fd, i % 2 == 0 ? encoder.encodeDocuments(d) : m.encodeDocuments(encoder, d));
            }
          }
          return null;
        }));
      }
      for (Future<?> f : calls) {
        f.get(60, TimeUnit.SECONDS);
      }
      pool.shutdown();
    }
  }
}
