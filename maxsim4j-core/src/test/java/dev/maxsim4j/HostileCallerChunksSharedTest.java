package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One MaxSim of 4 threads shared by several callers and a parallel stream (callers that are ForkJoinPool workers),
 * with enough documents that each call has many chunks and its workers move from chunk to chunk (and tile to tile:
 * other query ranges): every result equals, bit for bit, a 1-thread instance's (one worker through every document
 * in order). Documents mix ordinary values with huge ones (the exact path) and masks, so a reused worker alternates
 * between paths.
 */
class HostileCallerChunksSharedTest {

  private record Case(String name, TokenBatch q, TokenBatch d) {}

  private static TokenBatch withHugeRows(float[] data, int n, int l, int dim) {
    for (int j = 0; j < n; j += 7) {
      for (int e = j * l * dim; e < (j + 1) * l * dim; e++) {
        data[e] *= 3e37f;
      }
    }
    return TokenBatch.ofFloats(data, n, l, dim);
  }

  @Test
  @Timeout(120)
  void sharedCallsEqualOneThreadBitForBit() throws Exception {
    RandomBatches r = new RandomBatches(2026);
    int dim = 40;
    TokenBatch q = r.padded(DType.FLOAT32, 10, 9, dim, 1);
    TokenBatch qLong = r.padded(DType.FLOAT32, 20, 30, dim, 2);
    List<Case> cases = new ArrayList<>();
    cases.add(new Case("fp32 masked", qLong, r.padded(DType.FLOAT32, 400, 20, dim, 1)));
    cases.add(new Case("few documents, query tiles", qLong, withHugeRows(r.floats(3 * 12 * dim), 3, 12, dim)));
    cases.add(new Case("fp32 huge rows", q, withHugeRows(r.floats(300 * 12 * dim), 300, 12, dim)));
    cases.add(new Case("bf16 packed", q, r.packed(DType.BFLOAT16, 300, 1, 25, dim, true)));
    cases.add(new Case("int8 docs", qLong, r.padded(DType.INT8, 300, 16, dim, 2)));
    cases.add(new Case("int8 queries, fp32 docs", q.quantize(DType.INT8),
        withHugeRows(r.floats(300 * 12 * dim), 300, 12, dim)));
    cases.add(new Case("binary both", q.quantize(DType.BINARY), r.padded(DType.BINARY, 300, 14, dim, 1)));
    cases.add(new Case("fp32 vs binary (tables)", q, r.padded(DType.BINARY, 300, 14, dim, 2)));
    Arena arena = Arena.ofShared();
    {
      // bf16 from a segment: the staged-copy path of a mapped corpus
      short[] bits = new short[300 * 10 * dim];
      MemorySegment seg = arena.allocate(2L * bits.length, 2);
      java.util.Random rnd = new java.util.Random(5);
      for (int i = 0; i < bits.length; i++) {
        seg.setAtIndex(ValueLayout.JAVA_SHORT, i, (short) (Float.floatToIntBits(rnd.nextFloat() - 0.5f) >>> 16));
      }
      cases.add(new Case("bf16 segment", q, TokenBatch.fromMemorySegment(seg, DType.BFLOAT16, 300, 10, dim)
          .withLengths(IntStream.range(0, 300).map(i -> 1 + i % 10).toArray())));
    }
    try {
      for (String backend : new String[] {"vector", "scalar", "reference"}) {
        List<Object[]> expected = new ArrayList<>();
        try (MaxSim one = MaxSim.builder().backend(backend).threads(1).build()) {
          for (Case c : cases) {
            TopK top = one.topK(c.q(), c.d(), 7);
            expected.add(new Object[] {one.scores(c.q(), c.d()), top.scores(), top.indices(),
                candidates(one, c)});
          }
        }
        try (MaxSim m = MaxSim.builder().backend(backend).threads(4).build()) {
          ExecutorService callers = Executors.newFixedThreadPool(3);
          CountDownLatch go = new CountDownLatch(3);
          List<Future<?>> fs = new ArrayList<>();
          for (int t = 0; t < 3; t++) {
            int thread = t;
            fs.add(callers.submit(() -> {
              go.countDown();
              go.await();
              for (int i = 0; i < 6; i++) {
                int k = (i + thread) % cases.size();
                check(m, backend, cases.get(k), expected.get(k));
              }
              return null;
            }));
          }
          IntStream.range(0, cases.size() * 2).parallel()
              .forEach(i -> check(m, backend, cases.get(i % cases.size()), expected.get(i % cases.size())));
          for (Future<?> f : fs) {
            f.get(100, TimeUnit.SECONDS);
          }
          callers.shutdown();
        }
      }
    } finally {
      arena.close();
    }
  }

  private static float[][] candidates(MaxSim m, Case c) {
    int k = c.d().size() / c.q().size();
    return k == 0 ? null : m.candidates(c.q(), c.d(), k);
  }

  private static void check(MaxSim m, String backend, Case c, Object[] e) {
    String at = backend + " " + c.name();
    assertArrayEquals((float[][]) e[0], m.scores(c.q(), c.d()), at + " scores");
    TopK top = m.topK(c.q(), c.d(), 7);
    assertArrayEquals((float[][]) e[1], top.scores(), at + " topK scores");
    assertArrayEquals((int[][]) e[2], top.indices(), at + " topK indices");
    assertArrayEquals((float[][]) e[3], candidates(m, c), at + " candidates");
  }
}
