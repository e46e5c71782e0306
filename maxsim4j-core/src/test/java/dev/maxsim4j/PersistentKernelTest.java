package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link MaxSim.Builder#persistentKernel}: one query against resident documents answered by a kernel that
 * stays on the GPU. Its scores must be a launched kernel's, bit for bit, and the float64 reference's within
 * the fp32-accumulation bound, on every call with a fresh query (a stale stage would repeat the last one),
 * host or resident, masked or not, with empty and NaN documents, across dtypes and d = 8..128.
 */
@GpuTest
class PersistentKernelTest {
  private static MaxSim launched;
  private static MaxSim looped;

  @BeforeAll
  static void open() {
    launched = MaxSim.builder().backend("cuda").build();
    looped = MaxSim.builder().backend("cuda").persistentKernel(Duration.ofMillis(200)).build();
  }

  @AfterAll
  static void close() {
    launched.close();
    looped.close();
  }

  @Test
  void loopScoresAreALaunchsBitsAndMatchTheReference() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
      for (int d : new int[] {8, 40, 64, 96, 128}) {
        TokenBatch docs = documents(r, type, 700, d);
        try (ResidentBatch onLoop = looped.upload(docs); ResidentBatch onLaunch = launched.upload(docs)) {
          for (int call = 0; call < 6; call++) {
            int lq = new int[] {1, 7, 32, 32, 19, 32}[call];
            TokenBatch q = r.padded(type, 1, lq, d, call % 3 == 1 ? 1 : 0);
            String where = type + " d=" + d + " Lq=" + lq + " call " + call + " " + r;
            float[] got = looped.scores(q, onLoop)[0];
            assertBitsEqual(launched.scores(q, onLaunch)[0], got, where);
            assertMatchesReference(q, docs, got, where);
          }
          // a resident query: the loop copies it from device memory
          TokenBatch q = r.padded(type, 1, 32, d, 1);
          try (ResidentBatch rq = looped.upload(q)) {
            assertBitsEqual(launched.scores(q, onLaunch)[0], looped.scores(q, onLoop)[0], type + " d=" + d + " resident query");
          }
        }
      }
    }
  }

  @Test
  void otherOperationsBetweenLoopCallsEndAndRestartItWithoutChangingScores() throws Exception {
    RandomBatches r = new RandomBatches();
    TokenBatch docs = r.packed(DType.BFLOAT16, 1200, 20, 300, 128, false);
    TokenBatch other = r.packed(DType.BFLOAT16, 900, 1, 200, 64, true);
    try (ResidentBatch onLoop = looped.upload(docs); ResidentBatch onLaunch = launched.upload(docs);
        ResidentBatch otherOnLoop = looped.upload(other); ResidentBatch otherOnLaunch = launched.upload(other)) {
      for (int call = 0; call < 12; call++) {
        TokenBatch q = r.padded(DType.BFLOAT16, 1, 32, 128, 0);
        String where = "call " + call + " " + r;
        assertBitsEqual(launched.scores(q, onLaunch)[0], looped.scores(q, onLoop)[0], where);
        switch (call % 4) {
          case 0 -> { // two queries: a launch, which ends the loop first
            TokenBatch two = r.padded(DType.BFLOAT16, 2, 32, 128, 0);
            float[][] a = launched.scores(two, onLaunch);
            float[][] b = looped.scores(two, onLoop);
            assertBitsEqual(a[1], b[1], where + " (two queries)");
          }
          case 1 -> { // top-k on the same documents
            TopK a = launched.topK(q, onLaunch, 5);
            TopK b = looped.topK(q, onLoop, 5);
            assertEquals(a.indices()[0][0], b.indices()[0][0], where + " (top-k)");
          }
          case 2 -> { // other documents of another d: the loop binds to them
            TokenBatch q64 = r.padded(DType.BFLOAT16, 1, 32, 64, 0);
            assertBitsEqual(launched.scores(q64, otherOnLaunch)[0], looped.scores(q64, otherOnLoop)[0],
                where + " (other documents)");
          }
          default -> Thread.sleep(call == 3 ? 300 : 0); // past the idle time: the grid ends itself
        }
      }
      // closing the documents the loop is bound to, then scoring others
      onLoop.close();
      TokenBatch q64 = r.padded(DType.BFLOAT16, 1, 9, 64, 0);
      assertBitsEqual(launched.scores(q64, otherOnLaunch)[0], looped.scores(q64, otherOnLoop)[0], "after a close");
      assertThrows(IllegalStateException.class, () -> looped.scores(q64, onLoop));
    }
  }

  @Test
  void aLoopThatEndsBetweenEveryCallStillAnswersEveryCall() {
    // an idle time shorter than the gap between calls: the grid ends while the host may be posting; every
    // call must still be answered, by a new grid where the old one left first
    RandomBatches r = new RandomBatches();
    TokenBatch docs = r.packed(DType.BFLOAT16, 600, 1, 100, 32, false);
    try (MaxSim brief = MaxSim.builder().backend("cuda").persistentKernel(Duration.ofNanos(2000)).build();
        ResidentBatch onBrief = brief.upload(docs); ResidentBatch onLaunch = launched.upload(docs)) {
      for (int call = 0; call < 200; call++) {
        TokenBatch q = r.padded(DType.BFLOAT16, 1, 32, 32, 0);
        assertBitsEqual(launched.scores(q, onLaunch)[0], brief.scores(q, onBrief)[0], "call " + call + " " + r);
        if (call % 7 == 0) {
          Thread.onSpinWait();
        }
      }
    }
  }

  private static void assertBitsEqual(float[] expected, float[] actual, String where) {
    assertEquals(expected.length, actual.length, where);
    for (int j = 0; j < expected.length; j++) {
      if (Float.floatToRawIntBits(expected[j]) != Float.floatToRawIntBits(actual[j])) {
        throw new AssertionError(where + ": document " + j + " scored " + actual[j] + " in the loop, " + expected[j]
            + " by a launch");
      }
    }
  }

  private static void assertMatchesReference(TokenBatch q, TokenBatch docs, float[] got, String where) {
    for (int j = 0; j < docs.size(); j++) {
      double expected = 0;
      boolean any = false;
      boolean nan = false;
      for (int t = 0; t < docs.length(j); t++) {
        if (docs.isValid(j, t)) {
          any = true;
        }
      }
      for (int s = 0; s < q.length(0); s++) {
        if (!q.isValid(0, s)) {
          continue;
        }
        double best = Double.NEGATIVE_INFINITY;
        for (int t = 0; t < docs.length(j); t++) {
          if (docs.isValid(j, t)) {
            double v = Oracle.dot(q, 0, s, docs, j, t);
            nan |= Double.isNaN(v);
            best = Math.max(best, v);
          }
        }
        expected += best;
      }
      if (!any) {
        assertEquals(-1e9f, got[j], where + ": document " + j + " has no valid token");
      } else if (nan) {
        assertTrue(Float.isNaN(got[j]), where + ": document " + j + " holds a NaN");
      } else {
        assertEquals(expected, got[j], Oracle.tolerance(q, 0, docs, j), where + ": document " + j);
      }
    }
  }

  /**
   * {@code n} ragged packed documents of 1..300 tokens (700: more pairs than the streaming kernel's minimum
   * of 4 per SM on an H200), randomly masked, the first three fully masked, a NaN in document 5's first token.
   */
  private static TokenBatch documents(RandomBatches r, DType type, int n, int d) {
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + 1 + r.rnd.nextInt(300);
    }
    short[] bits = r.halfs(type, offsets[n] * d);
    bits[offsets[5] * d] = type == DType.BFLOAT16 ? (short) 0x7fc0 : (short) 0x7e00;
    boolean[] mask = new boolean[offsets[n]];
    for (int t = 0; t < mask.length; t++) {
      mask[t] = t >= offsets[3] && (t == offsets[5] || r.rnd.nextInt(5) != 0);
    }
    return TokenBatch.packedHalfs(type, bits, offsets, d).withMask(mask);
  }
}
