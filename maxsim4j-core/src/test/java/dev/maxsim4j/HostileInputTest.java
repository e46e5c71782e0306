package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The public API as a hostile caller uses it: nulls, out-of-range numbers, unusable memory, closed handles.
 * Each is an IllegalArgumentException (or IllegalStateException for a closed object) with a message that
 * names what was wrong.
 */
class HostileInputTest {
  private final TokenBatch q = TokenBatch.ofFloats(new float[2 * 3 * 4], 2, 3, 4);
  private final TokenBatch d = TokenBatch.ofFloats(new float[6 * 5 * 4], 6, 5, 4);

  private static void rejects(Executable call, String... fragments) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage() != null, "a message");
    for (String f : fragments) {
      assertTrue(e.getMessage().contains(f), "message '" + e.getMessage() + "' should contain '" + f + "'");
    }
  }

  /** Documents with no token at all carry no d: the mismatch says so; built with the queries' d they score -1e9. */
  @org.junit.jupiter.api.Test
  void tokenlessDocumentsNameTheirPlaceholderDimension() {
    TokenBatch q = TokenBatch.of(new float[][][] {{{1f, 2f, 3f}}});
    try (MaxSim m = cpu()) {
      rejects(() -> m.scores(q, TokenBatch.of(new float[][][] {{}, {}})), "d mismatch",
          "documents hold no token, so their d is a placeholder");
      float[][] s = m.scores(q, TokenBatch.ofFloats(new float[0], 2, 0, 3));
      org.junit.jupiter.api.Assertions.assertArrayEquals(new float[] {-1e9f, -1e9f}, s[0]);
    }
  }

  private static MaxSim cpu() {
    return MaxSim.builder().backend("cpu").threads(1).build();
  }

  @Test
  void threadCountsOutOfRange() {
    rejects(() -> MaxSim.builder().threads(100_000), "threads = 100000", "1 <= threads <= 32767");
    rejects(() -> MaxSim.builder().threads(0), "threads = 0", "1 <= threads");
    rejects(() -> MaxSim.builder().threads(-4), "threads = -4");
    rejects(() -> MaxSim.builder().threads(Integer.MIN_VALUE), "threads = " + Integer.MIN_VALUE);
    try (MaxSim m = MaxSim.builder().backend("scalar").threads(MaxSim.MAX_THREADS).build()) {
      assertEquals(MaxSim.MAX_THREADS, m.threads());
    }
  }

  @Test
  void threadsPropertyOutOfRange() {
    String old = System.getProperty(MaxSim.THREADS_PROPERTY);
    try {
      for (String bad : new String[] {"100000", "0", "-1", "many", "+3", "03", "\u0663"}) {
        System.setProperty(MaxSim.THREADS_PROPERTY, bad);
        rejects(() -> MaxSim.builder().backend("scalar").build(), "maxsim4j.threads = '" + bad + "'", "32767");
      }
      System.setProperty(MaxSim.THREADS_PROPERTY, "3");
      try (MaxSim m = MaxSim.builder().backend("scalar").build()) {
        assertEquals(3, m.threads());
      }
    } finally {
      if (old == null) {
        System.clearProperty(MaxSim.THREADS_PROPERTY);
      } else {
        System.setProperty(MaxSim.THREADS_PROPERTY, old);
      }
    }
  }

  @Test
  void nullsAreNamed() {
    rejects(() -> MaxSim.builder().backend(null), "backend is null");
    try (MaxSim m = cpu()) {
      rejects(() -> m.scores(null, d), "queries is null");
      rejects(() -> m.scores(q, (TokenBatch) null), "documents is null");
      rejects(() -> m.scores(q, (ResidentBatch) null), "documents is null");
      rejects(() -> m.scoresAsync(q, (TokenBatch) null), "documents is null");
      rejects(() -> m.topK(null, d, 1), "queries is null");
      rejects(() -> m.pairwise(q, null), "documents is null");
      rejects(() -> m.candidates(null, d, 3), "queries is null");
      rejects(() -> m.upload(null), "documents is null");
      rejects(() -> m.scoresForTraining(q, null), "documents is null");
      rejects(() -> m.lossAllPairs(q, d, null), "loss is null");
      rejects(() -> m.lossAllPairs(q, d, Loss.contrastive(1f), null), "precision is null");
      rejects(() -> m.project(null, 1, 1, new float[1], 1), "x is null");
      TrainingScores ts = m.scoresForTraining(q, d);
      rejects(() -> ts.backward((float[]) null), "dScores is null");
      rejects(() -> ts.backward(new float[12], null), "precision is null");
    }
    rejects(() -> TokenBatch.ofFloats(null, 1, 1, 1), "data is null");
    rejects(() -> TokenBatch.ofHalfs(null, new short[1], 1, 1, 1), "dtype is null");
    rejects(() -> TokenBatch.ofHalfs(DType.FLOAT16, null, 1, 1, 1), "bits is null");
    rejects(() -> TokenBatch.packedFloats(new float[4], null, 4), "offsets is null");
    rejects(() -> TokenBatch.fromMemorySegment(null, DType.FLOAT32, 1, 1, 1), "memory is null");
    rejects(() -> TokenBatch.fromMemorySegment(MemorySegment.ofArray(new float[1]), null, 1, 1, 1), "dtype is null");
    rejects(() -> q.withMask((boolean[]) null), "mask is null");
    rejects(() -> q.withLengths(null), "lengths is null");
    rejects(() -> Loss.contrastive(null, 1f), "positives is null");
    rejects(() -> Loss.klDistillation(null, 1f), "teacherScores is null");
    rejects(() -> Loss.klDistillation(new float[][] {null}, 1f), "teacherScores[0] is null");
    rejects(() -> Loss.klDistillation(new float[][] {{1f, Float.NaN}}, 1f), "teacherScores[0][1] = NaN");
    rejects(() -> Loss.klDistillation(new float[][] {{Float.POSITIVE_INFINITY}}, 1f), "teacherScores[0][0] = Infinity");
    rejects(() -> Loss.klDistillation(new float[][] {{2f}, {Float.NEGATIVE_INFINITY}}, 1f),
        "teacherScores[1] is -Infinity everywhere");
    rejects(() -> new Loss.KlDistillation(null, 1f), "teacherScores is null");
    rejects(() -> Loss.marginMse(null), "teacherMargins is null");
    rejects(() -> new Loss.MarginMse(null), "teacherMargins is null");
    rejects(() -> Loss.contrastive(1f).evaluate(null), "scores is null");
    rejects(() -> Loss.contrastive(1f).evaluate(new float[][] {null}), "scores[0] is null");
  }

  @Test
  void numbersOutOfRange() {
    rejects(() -> Loss.contrastive(Float.NaN), "temperature = NaN");
    rejects(() -> Loss.contrastive(0f), "temperature = 0.0");
    rejects(() -> Loss.contrastive(Float.POSITIVE_INFINITY), "temperature = Infinity");
    rejects(() -> q.get(-1, 0, 0), "row = -1", "0 <= row < 2");
    rejects(() -> q.get(0, 3, 0), "t = 3", "< 3");
    rejects(() -> q.get(0, 0, 4), "k = 4", "< 4");
    rejects(() -> q.length(2), "row = 2");
    rejects(() -> q.validTokens(-1), "row = -1");
    rejects(() -> q.isValid(7, 0), "row = 7");
    try (MaxSim m = cpu()) {
      rejects(() -> m.topK(q, d, Integer.MIN_VALUE), "k = " + Integer.MIN_VALUE);
      TopK all = m.topK(q, d, Integer.MAX_VALUE); // k beyond Nd keeps every document
      assertEquals(6, all.indices()[0].length);
      rejects(() -> m.candidates(q, d, Integer.MAX_VALUE), "candidates K mismatch");
      rejects(() -> m.candidatesForTraining(q, d, -1), "candidatesPerQuery = -1");
      TrainingScores ts = m.scoresForTraining(q, d);
      rejects(() -> ts.argmax(-1, 0), "pair = -1");
      rejects(() -> ts.argmax(0, 3), "querySlot = 3");
    }
  }

  @Test
  void emptyScoresHaveNoLoss() {
    rejects(() -> Loss.contrastive(1f).evaluate(new float[0][]), "scores are [0][0]", "at least one row");
    rejects(() -> Loss.klDistillation(new float[][] {{}}, 1f).evaluate(new float[][] {{}}), "[1][0]");
    try (MaxSim m = cpu()) {
      TokenBatch none = TokenBatch.ofFloats(new float[0], 0, 3, 4);
      // named by the batches the caller passed, not by scores it never saw
      rejects(() -> m.lossAllPairs(none, d, Loss.contrastive(1f)), "queries have no row", "[0, 3, 4]");
      rejects(() -> m.lossCandidates(none, TokenBatch.ofFloats(new float[0], 0, 3, 4), 2, Loss.contrastive(1f)),
          "queries have no row");
      rejects(() -> m.lossAllPairs(d, TokenBatch.ofFloats(new float[0], 0, 3, 4), Loss.contrastive(1f)),
          "documents have no row");
    }
  }

  @Test
  void unusableMemory() {
    MemorySegment closed;
    try (Arena arena = Arena.ofShared()) {
      closed = arena.allocate(16);
    }
    rejects(() -> TokenBatch.fromMemorySegment(closed, DType.FLOAT32, 1, 1, 4), "memory is no longer alive");
    MemorySegment nine = Arena.ofAuto().allocate(9);
    rejects(() -> TokenBatch.fromMemorySegment(nine, DType.FLOAT32, 1, 2, 1), "9 bytes", "FLOAT32");
    rejects(() -> TokenBatch.packedFromMemorySegment(nine, DType.BFLOAT16, new int[] {0, 4}, 1), "9 bytes");
    MemorySegment small = Arena.ofAuto().allocate(8);
    rejects(() -> TokenBatch.fromMemorySegment(small, DType.FLOAT32, 1, 2, 4), "memory holds 2 elements",
        "expected 8");
  }

  @Test
  void closedOrForeignResidentBatches() {
    try (MaxSim m = cpu(); MaxSim other = cpu()) {
      ResidentBatch r = m.upload(d);
      IllegalStateException foreign = assertThrows(IllegalStateException.class, () -> other.scores(q, r));
      assertTrue(foreign.getMessage().contains("another MaxSim"), foreign.getMessage());
      r.close();
      r.close(); // idempotent
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> m.topK(q, r, 1));
      assertTrue(e.getMessage().contains("ResidentBatch is closed"), e.getMessage());
      assertThrows(IllegalStateException.class, () -> m.scoresAsync(q, r));
    }
  }
}
