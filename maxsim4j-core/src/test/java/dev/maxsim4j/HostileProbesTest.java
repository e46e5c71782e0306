package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HostileProbesTest {
  static final String[] BACKENDS = {"reference", "scalar", "vector"};

  static float special(SplittableRandom r) {
    int k = r.nextInt(40);
    return switch (k) {
      case 0 -> Float.NaN;
      case 1 -> Float.POSITIVE_INFINITY;
      case 2 -> Float.NEGATIVE_INFINITY;
      case 3, 4 -> -0.0f;
      default -> r.nextInt(5) - 2;
    };
  }

  @Test
  void specialsAndLongShapesAgreeAcrossBackendsBitForBit() {
    for (long seed = 1; seed <= 40; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      int d = new int[] {1, 3, 17, 33}[r.nextInt(4)];
      int nq = 1 + r.nextInt(3);
      int nd = 1 + r.nextInt(3);
      int lq = 1 + r.nextInt(40);
      int ld = 1 + r.nextInt(300);
      boolean specials = r.nextBoolean();
      float[] qd = new float[nq * lq * d];
      float[] dd = new float[nd * ld * d];
      for (int i = 0; i < qd.length; i++) {
        qd[i] = specials ? special(r) : r.nextInt(3) - 1;
      }
      for (int i = 0; i < dd.length; i++) {
        dd[i] = specials ? special(r) : r.nextInt(3) - 1;
      }
      boolean[] qm = new boolean[nq * lq];
      boolean[] dm = new boolean[nd * ld];
      for (int i = 0; i < qm.length; i++) {
        qm[i] = r.nextInt(4) != 0;
      }
      for (int i = 0; i < dm.length; i++) {
        dm[i] = r.nextInt(4) != 0;
      }
      TokenBatch q = TokenBatch.ofFloats(qd, nq, lq, d).withMask(qm);
      TokenBatch dt = TokenBatch.ofFloats(dd, nd, ld, d).withMask(dm);
      float[] refScores = null;
      int[] refArg = null;
      float[] refGq = null;
      float[] refGd = null;
      float[] dS = new float[nq * nd];
      for (int i = 0; i < dS.length; i++) {
        dS[i] = r.nextInt(5) - 2;
      }
      for (String backend : BACKENDS) {
        String where = "seed " + seed + " " + backend + " d=" + d + " " + nq + "x" + lq + " vs " + nd + "x" + ld;
        try (MaxSim m = MaxSim.builder().backend(backend).threads(2).build()) {
          TrainingScores ts = m.scoresForTraining(q, dt);
          float[] s = ts.scores();
          int[] arg = new int[s.length * lq];
          for (int p = 0; p < s.length; p++) {
            for (int t = 0; t < lq; t++) {
              arg[p * lq + t] = ts.argmax(p, t);
            }
          }
          float[][] plain = m.scores(q, dt);
          for (int i = 0; i < nq; i++) {
            for (int j = 0; j < nd; j++) {
              assertEquals(s[i * nd + j], plain[i][j], where + " plain vs training score " + i + "," + j);
            }
          }
          Gradients g = ts.backward(dS);
          if (refScores == null) {
            refScores = s;
            refArg = arg;
            refGq = g.queries().toFloatArray();
            refGd = g.documents().toFloatArray();
            continue;
          }
          for (int p = 0; p < s.length; p++) {
            assertEquals(refScores[p], s[p], where + " score " + p);
          }
          for (int a = 0; a < arg.length; a++) {
            assertEquals(refArg[a], arg[a], where + " argmax " + a);
          }
          float[] gq = g.queries().toFloatArray();
          float[] gd = g.documents().toFloatArray();
          for (int a = 0; a < gq.length; a++) {
            assertEquals(refGq[a], gq[a], where + " dQ " + a);
          }
          for (int a = 0; a < gd.length; a++) {
            assertEquals(refGd[a], gd[a], where + " dD " + a);
          }
        }
      }
    }
  }

  static void rejects(Class<? extends Throwable> type, org.junit.jupiter.api.function.Executable e, String... parts) {
    Throwable t = assertThrows(Throwable.class, e);
    if (!type.isInstance(t)) {
      fail("expected " + type.getSimpleName() + " but got " + t, t);
    }
    for (String p : parts) {
      assertTrue(String.valueOf(t.getMessage()).contains(p), "message '" + t.getMessage() + "' lacks '" + p + "'");
    }
  }

  @Test
  void labelsAndShapes() {
    try (MaxSim m = MaxSim.builder().backend("vector").threads(2).build()) {
      TokenBatch q = TokenBatch.ofFloats(new float[2 * 3 * 4], 2, 3, 4);
      TokenBatch d = TokenBatch.ofFloats(new float[4 * 3 * 4], 4, 3, 4);
      TokenBatch d3 = TokenBatch.ofFloats(new float[3 * 3 * 4], 3, 3, 4);
      rejects(IllegalArgumentException.class, () -> m.lossAllPairs(q, d, Loss.contrastive(new int[] {0, 4}, 1f)),
          "positives[1]", "4");
      rejects(IllegalArgumentException.class, () -> m.lossAllPairs(q, d, Loss.contrastive(new int[] {-1, 0}, 1f)),
          "positives[0]");
      rejects(IllegalArgumentException.class, () -> m.lossAllPairs(q, d, Loss.contrastive(new int[] {0}, 1f)),
          "positives");
      rejects(IllegalArgumentException.class, () -> m.lossCandidates(q, d3, 2, Loss.contrastive(1f)), "candidates");
      rejects(IllegalArgumentException.class, () -> m.lossCandidates(q, d, 2, Loss.marginMse(new float[] {1f})),
          "teacherMargins");
      rejects(IllegalArgumentException.class, () -> m.lossCandidates(q, d, 2,
          Loss.klDistillation(new float[][] {{1, 2}, {1}}, 1f)), "teacherScores[1]");
      rejects(IllegalArgumentException.class, () -> m.lossCandidates(q, d, Integer.MAX_VALUE, Loss.contrastive(1f)),
          "candidates");
      rejects(IllegalArgumentException.class, () -> m.lossCandidates(q, d, -1, Loss.contrastive(1f)),
          "candidatesPerQuery");
      rejects(IllegalArgumentException.class, () -> m.pairwiseForTraining(q, d), "pairwise");
      TokenBatch q0 = TokenBatch.ofFloats(new float[0], 0, 3, 4);
      TokenBatch d0 = TokenBatch.ofFloats(new float[0], 0, 3, 4);
      rejects(IllegalArgumentException.class, () -> m.lossAllPairs(q0, d, Loss.contrastive(1f)), "queries have no row");
      rejects(IllegalArgumentException.class, () -> m.lossAllPairs(q, d0, Loss.contrastive(1f)),
          "documents have no row");
      TrainingScores empty = m.scoresForTraining(q0, d0);
      assertEquals(0, empty.scores().length);
      Gradients g0 = empty.backward(new float[0]);
      assertEquals(0, g0.queries().toFloatArray().length);
      TrainingScores ts = m.scoresForTraining(q, d);
      rejects(IllegalArgumentException.class, () -> ts.backward(new float[7]), "dScores");
      rejects(IllegalArgumentException.class, () -> ts.backward(new float[][] {{1, 2, 3, 4}, null}), "dScores[1]");
      rejects(IllegalArgumentException.class, () -> ts.backward((float[]) null), "dScores");
      rejects(IllegalArgumentException.class, () -> ts.backward(new float[8], null), "precision");
      rejects(IllegalArgumentException.class, () -> ts.argmax(8, 0), "pair");
      rejects(IllegalArgumentException.class, () -> ts.argmax(0, 3), "querySlot");
      rejects(IllegalArgumentException.class, () -> ts.argmax(-1, 0), "pair");
      rejects(IllegalArgumentException.class, () -> m.topK(q, d, 0), "k");
      rejects(IllegalArgumentException.class, () -> m.topK(q, d, Integer.MIN_VALUE), "k");
      TopK all = m.topK(q, d, Integer.MAX_VALUE);
      assertEquals(4, all.indices()[0].length);
      TopK none = m.topK(q, d0, 3);
      assertEquals(2, none.indices().length);
      assertEquals(0, none.indices()[0].length);
      TopK noneQ = m.topK(q0, d, 3);
      assertEquals(0, noneQ.indices().length);
      rejects(IllegalArgumentException.class, () -> Loss.contrastive(Float.NaN), "temperature");
      rejects(IllegalArgumentException.class, () -> Loss.contrastive(0f), "temperature");
      rejects(IllegalArgumentException.class, () -> Loss.contrastive(-1f), "temperature");
      rejects(IllegalArgumentException.class, () -> Loss.contrastive(Float.POSITIVE_INFINITY), "temperature");
      rejects(IllegalArgumentException.class, () -> Loss.contrastive(1f).evaluateFlat(new float[3], 2, 2), "scores");
      rejects(IllegalArgumentException.class, () -> Loss.contrastive(1f).evaluateFlat(new float[4], -2, -2));
      rejects(IllegalArgumentException.class,
          () -> Loss.contrastive(1f).evaluateFlat(new float[0], 65536, 65536), "scores");
      rejects(IllegalArgumentException.class, () -> Loss.klDistillation(new float[][] {{Float.NEGATIVE_INFINITY}}, 1f),
          "teacherScores[0]");
    }
  }

  @Test
  void lifecycle() throws Exception {
    MaxSim m = MaxSim.builder().backend("vector").threads(2).build();
    TokenBatch q = TokenBatch.ofFloats(new float[2 * 3 * 4], 2, 3, 4);
    TokenBatch d = TokenBatch.ofFloats(new float[4 * 3 * 4], 4, 3, 4);
    ResidentBatch rb = m.upload(d);
    TrainingScores ts = m.scoresForTraining(q, d);
    rb.close();
    rb.close();
    rejects(IllegalStateException.class, () -> m.scores(q, rb), "closed");
    rejects(IllegalStateException.class, () -> m.topK(q, rb, 1), "closed");
    ResidentBatch rb2 = m.upload(d);
    m.close();
    m.close();
    rejects(IllegalStateException.class, () -> m.scores(q, d), "closed");
    rejects(IllegalStateException.class, () -> m.scores(q, rb2), "closed");
    rejects(IllegalStateException.class, () -> ts.backward(new float[8]), "closed");
    rejects(IllegalStateException.class, () -> m.upload(d), "closed");
    rejects(IllegalStateException.class, () -> m.scoresAsync(q, d), "closed");
    rejects(IllegalStateException.class, () -> m.lossAllPairs(q, d, Loss.contrastive(1f)), "closed");
    rejects(IllegalStateException.class, () -> m.encodeQueries(FixedDimensionalEncoder.builder(4).build(), q),
        "closed");
    rb2.close();
    rb2.close();
    // a foreign resident batch
    try (MaxSim a = MaxSim.builder().backend("scalar").threads(1).build();
        MaxSim b = MaxSim.builder().backend("scalar").threads(1).build()) {
      ResidentBatch ra = a.upload(d);
      rejects(IllegalStateException.class, () -> b.scores(q, ra), "another");
    }
  }

  @Test
  void memorySegments() {
    Arena arena = Arena.ofShared();
    MemorySegment seg = arena.allocate(4L * 2 * 3 * 4 + 1);
    MemorySegment mis = seg.asSlice(1, 4L * 2 * 3 * 4);
    TokenBatch q = TokenBatch.fromMemorySegment(mis, DType.FLOAT32, 2, 3, 4);
    TokenBatch ro = TokenBatch.fromMemorySegment(mis.asReadOnly(), DType.FLOAT32, 2, 3, 4);
    try (MaxSim m = MaxSim.builder().backend("vector").threads(2).build()) {
      m.scores(q, ro);
      TrainingScores ts = m.scoresForTraining(q, ro);
      TrainingStep st = m.lossAllPairs(q, ro, Loss.contrastive(1f));
      arena.close();
      rejects(IllegalStateException.class, () -> ts.backward(new float[4]), "MemorySegment");
      rejects(IllegalStateException.class, () -> m.scores(q, ro), "MemorySegment");
      rejects(IllegalStateException.class, () -> m.lossAllPairs(q, ro, Loss.contrastive(1f)), "MemorySegment");
      rejects(IllegalStateException.class, () -> m.upload(ro), "MemorySegment");
      rejects(IllegalArgumentException.class, () -> TokenBatch.fromMemorySegment(mis, DType.FLOAT32, 2, 3, 4),
          "memory");
      // gradients do not read the segment
      st.gradients().queries().toFloatArray();
      rejects(IllegalStateException.class, () -> q.toFloatArray(), "MemorySegment");
      rejects(IllegalStateException.class, () -> q.get(0, 0, 0), "MemorySegment");
      rejects(IllegalStateException.class, () -> q.l2Normalized(), "MemorySegment");
      rejects(IllegalStateException.class, () -> q.quantize(DType.INT8), "MemorySegment");
      rejects(IllegalStateException.class, () -> FixedDimensionalEncoder.builder(4).build().encodeQueries(q),
          "MemorySegment");
      rejects(IllegalStateException.class, () -> m.encodeDocuments(FixedDimensionalEncoder.builder(4).build(), q),
          "MemorySegment");
    }
    Arena a2 = Arena.ofShared();
    MemorySegment s2 = a2.allocate(4 * 4);
    rejects(IllegalArgumentException.class, () -> TokenBatch.fromMemorySegment(s2, DType.FLOAT32, 2, 3, 4), "memory");
    rejects(IllegalArgumentException.class,
        () -> TokenBatch.packedFromMemorySegment(s2, DType.FLOAT32, new int[] {0, 5}, 1), "offsets");
    rejects(IllegalArgumentException.class,
        () -> TokenBatch.fromMemorySegment(s2.asSlice(0, 3), DType.FLOAT32, 0, 0, 1), "memory");
    a2.close();
    try (Arena c = Arena.ofConfined()) {
      MemorySegment s3 = c.allocate(16);
      rejects(IllegalArgumentException.class, () -> TokenBatch.fromMemorySegment(s3, DType.FLOAT32, 1, 1, 4),
          "confined");
    }
  }
}
