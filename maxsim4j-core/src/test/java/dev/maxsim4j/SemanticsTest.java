package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The contract, case by case, on every CPU backend. */
class SemanticsTest {

  static Stream<String> backends() {
    return Stream.of("reference", "scalar", "vector");
  }

  private static MaxSim open(String backend) {
    return MaxSim.builder().backend(backend).threads(2).build();
  }

  @ParameterizedTest
  @MethodSource("backends")
  void handComputedScore(String backend) {
    // q tokens (1,0), (0,1); d tokens (2,1), (-1,3): maxes 2 and 3
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 0, 0, 1}, 1, 2, 2);
    TokenBatch d = TokenBatch.ofFloats(new float[] {2, 1, -1, 3}, 1, 2, 2);
    try (MaxSim m = open(backend)) {
      assertEquals(5f, m.scores(q, d)[0][0], 0f);
      assertEquals(5f, m.pairwise(q, d)[0], 0f);
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void maskedQueryTokenLeavesTheSum(String backend) {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 0, 0, 1}, 1, 2, 2).withMask(new boolean[] {true, false});
    TokenBatch d = TokenBatch.ofFloats(new float[] {2, 1, -1, 3}, 1, 2, 2);
    try (MaxSim m = open(backend)) {
      assertEquals(2f, m.scores(q, d)[0][0], 0f);
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void maskedDocumentTokenLeavesTheMaxEvenWhenItWouldWin(String backend) {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 1}, 1, 1, 2);
    // the masked token (100, 100) would win; the valid one has a negative dot product
    TokenBatch d = TokenBatch.ofFloats(new float[] {100, 100, -1, -2}, 1, 2, 2).withMask(new boolean[] {false, true});
    try (MaxSim m = open(backend)) {
      assertEquals(-3f, m.scores(q, d)[0][0], 0f);
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void documentWithoutValidTokenScoresMinusOneBillion(String backend) {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 1}, 1, 1, 2);
    TokenBatch masked = TokenBatch.ofFloats(new float[] {1, 2, 3, 4}, 1, 2, 2).withMask(new boolean[] {false, false});
    TokenBatch zeroLength = TokenBatch.ofFloats(new float[] {1, 2, 3, 4}, 1, 2, 2).withLengths(new int[] {0});
    TokenBatch packedEmpty = TokenBatch.packedFloats(new float[] {1, 2}, new int[] {0, 0, 1}, 2);
    try (MaxSim m = open(backend)) {
      assertEquals(-1e9f, m.scores(q, masked)[0][0], 0f);
      assertEquals(-1e9f, m.scores(q, zeroLength)[0][0], 0f);
      assertEquals(-1e9f, m.scores(q, packedEmpty)[0][0], 0f);
      assertEquals(3f, m.scores(q, packedEmpty)[0][1], 0f);
      // an all-masked query against an empty document is still the empty-document score
      TokenBatch noQuery = q.withMask(new boolean[] {false});
      assertEquals(-1e9f, m.scores(noQuery, masked)[0][0], 0f);
      assertEquals(0f, m.scores(noQuery, packedEmpty)[0][1], 0f);
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void nanInValidTokenPropagatesAndInMaskedTokenIsIgnored(String backend) {
    TokenBatch q = TokenBatch.ofFloats(new float[] {1, 1, 1, 0}, 1, 2, 2);
    float[] withNan = {1, 1, Float.NaN, 0, 5, 5};
    TokenBatch dValid = TokenBatch.ofFloats(withNan, 1, 3, 2);
    TokenBatch dMasked = TokenBatch.ofFloats(withNan, 1, 3, 2).withMask(new boolean[] {true, false, true});
    TokenBatch qNan = TokenBatch.ofFloats(new float[] {1, 1, Float.NaN, 0}, 1, 2, 2);
    TokenBatch qNanMasked = qNan.withMask(new boolean[] {true, false});
    TokenBatch dClean = TokenBatch.ofFloats(new float[] {1, 1, 5, 5}, 1, 2, 2);
    try (MaxSim m = open(backend)) {
      assertTrue(Float.isNaN(m.scores(q, dValid)[0][0]), "NaN in a valid document token");
      assertFalse(Float.isNaN(m.scores(q, dMasked)[0][0]), "NaN in a masked document token");
      assertEquals(15f, m.scores(q, dMasked)[0][0], 0f);
      assertTrue(Float.isNaN(m.scores(qNan, dClean)[0][0]), "NaN in a valid query token");
      assertEquals(10f, m.scores(qNanMasked, dClean)[0][0], 0f);
      // NaN placed after the max, at every position of a 4-token micro-kernel strip, and in a tail
      for (int pos = 0; pos < 7; pos++) {
        float[] d7 = new float[7 * 2];
        for (int t = 0; t < 7; t++) {
          d7[2 * t] = t;
          d7[2 * t + 1] = t;
        }
        d7[2 * pos] = Float.NaN;
        assertTrue(Float.isNaN(m.scores(q, TokenBatch.ofFloats(d7, 1, 7, 2))[0][0]), "NaN at slot " + pos);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void tiesGiveTheArgmaxToTheLowestSlot(String backend) {
    // documents whose tokens repeat: every slot of a value ties with its earlier copies
    int ld = 37;
    float[] d = new float[2 * ld * 3];
    RandomBatches r = new RandomBatches();
    float[] distinct = r.floats(3 * 5);
    for (int j = 0; j < 2; j++) {
      for (int t = 0; t < ld; t++) {
        System.arraycopy(distinct, (t % 5) * 3, d, (j * ld + t) * 3, 3);
      }
    }
    TokenBatch docs = TokenBatch.ofFloats(d, 2, ld, 3);
    TokenBatch q = r.padded(DType.FLOAT32, 2, 20, 3, 0);
    try (MaxSim m = open(backend)) {
      TrainingScores ts = m.scoresForTraining(q, docs);
      for (int p = 0; p < 4; p++) {
        for (int s = 0; s < 20; s++) {
          assertTrue(ts.argmax(p, s) < 5, r + " slot " + ts.argmax(p, s) + " is not the first of its ties");
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void asynchronousScoresEqualSynchronousOnes(String backend) throws Exception {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT32, 3, 9, 16, 1);
    TokenBatch d = r.padded(DType.BFLOAT16, 7, 20, 16, 2);
    try (MaxSim m = open(backend); ResidentBatch resident = m.upload(d)) {
      java.util.concurrent.CompletableFuture<float[][]> a = m.scoresAsync(q, resident);
      java.util.concurrent.CompletableFuture<float[][]> b = m.scoresAsync(q, d);
      org.junit.jupiter.api.Assertions.assertArrayEquals(m.scores(q, d), a.get());
      org.junit.jupiter.api.Assertions.assertArrayEquals(m.scores(q, d), b.get());
    }
  }

  @ParameterizedTest
  @MethodSource("backends")
  void emptyBatchesGiveEmptyResults(String backend) {
    TokenBatch none = TokenBatch.ofFloats(new float[0], 0, 3, 4);
    TokenBatch one = TokenBatch.ofFloats(new float[12], 1, 3, 4);
    try (MaxSim m = open(backend)) {
      assertEquals(0, m.scores(none, one).length);
      assertEquals(0, m.scores(one, none)[0].length);
      assertEquals(0, m.pairwise(none, none).length);
      assertEquals(0, m.candidates(none, none, 2).length);
      assertEquals(0, m.topK(one, none, 3).indices()[0].length);
      assertEquals(0, m.scoresForTraining(none, one).backward(new float[0]).queries().size());
    }
  }
}
