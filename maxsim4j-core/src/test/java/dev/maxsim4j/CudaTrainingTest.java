package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.cuda.CudaBackend;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The GPU backward and losses: gradients against the float64 definition given the kernel's own argmax
 * (tolerance 1e-5 of the largest gradient element: fp32 sums of the same terms in another order), over
 * the CUDA shape matrix; masked tokens exactly zero; the deterministic backward bitwise stable, the atomic
 * one close to it; each loss on the device against {@link Loss#evaluate} (float64) of the same scores
 * (loss within 1e-5 relative; gradients within 1e-4 of the largest element, the device loss being fp32).
 */
@GpuTest
class CudaTrainingTest {
  private static MaxSim cuda;
  private static MaxSim atomic;

  @BeforeAll
  static void open() {
    cuda = MaxSim.builder().backend("cuda").build();
    atomic = MaxSim.builder().backend("cuda").deterministic(false).build();
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
      atomic.close();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.maxsim4j.CudaParityTest#cases")
  void backwardMatchesTheDefinition(String label, TokenBatch q, TokenBatch d, TokenBatch pd) {
    RandomBatches r = new RandomBatches();
    String where = "cuda backward / " + label + " (" + r + ")";
    int nq = q.size();
    int nd = d.size();
    float[] dS = r.floats(nq * nd);
    int[][] pairs = new int[nq * nd][];
    for (int p = 0; p < pairs.length; p++) {
      pairs[p] = new int[] {p / nd, p % nd};
    }
    TrainingScores all = cuda.scoresForTraining(q, d);
    GradientTest.check(q, d, all, dS, pairs, where + " all-pairs");
    TrainingScores allAtomic = atomic.scoresForTraining(q, d);
    GradientTest.check(q, d, allAtomic, dS, pairs, where + " all-pairs, atomic dD");

    if (nq == 0) {
      return; // all pairs covered the empty batch; candidates need K = Nd / Nq
    }
    int k = nd / nq;
    float[] dC = r.floats(nq * k);
    int[][] cPairs = new int[nq * k][];
    for (int p = 0; p < cPairs.length; p++) {
      cPairs[p] = new int[] {p / k, p};
    }
    GradientTest.check(q, d, cuda.candidatesForTraining(q, d, k), dC, cPairs, where + " candidates");

    float[] dP = r.floats(nq);
    int[][] pPairs = new int[nq][];
    for (int p = 0; p < nq; p++) {
      pPairs[p] = new int[] {p, p};
    }
    GradientTest.check(q, pd, cuda.pairwiseForTraining(q, pd), dP, pPairs, where + " pairwise");
  }

  /**
   * Past d = 3072 the owned document-gradient kernel needs more than the default 48 KB of shared memory (it
   * opts in); past the GPU's per-block limit a deterministic call is refused naming d, and the atomic one runs.
   */
  @Test
  void wideDTrainsDeterministicallyUpToTheSharedMemoryLimit() {
    RandomBatches r = new RandomBatches();
    for (int dim : new int[] {3072, 3073, 4096}) { // 4096: 64 KB, within every supported GPU's limit
      TokenBatch q = r.padded(DType.FLOAT32, 3, 5, dim, 1);
      TokenBatch d = r.padded(DType.FLOAT32, 4, 7, dim, 1);
      int[][] pairs = new int[12][];
      for (int p = 0; p < pairs.length; p++) {
        pairs[p] = new int[] {p / 4, p % 4};
      }
      GradientTest.check(q, d, cuda.scoresForTraining(q, d), r.floats(12), pairs, "cuda backward d = " + dim);
    }
    int tooWide = 16384; // 256 KB, past every GPU's per-block limit
    TokenBatch q = r.padded(DType.FLOAT32, 1, 2, tooWide, 0);
    TokenBatch d = r.padded(DType.FLOAT32, 2, 3, tooWide, 0);
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> cuda.scoresForTraining(q, d).backward(new float[][] {{1, 1}}));
    assertTrue(e.getMessage().startsWith("d = 16384: the deterministic GPU backward"), e.getMessage());
    GradientTest.check(q, d, atomic.scoresForTraining(q, d), new float[] {1, -1}, new int[][] {{0, 0}, {0, 1}},
        "cuda atomic backward d = " + tooWide);
  }

  @Test
  void deterministicBackwardIsBitwiseStableAndAtomicIsClose() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.BFLOAT16, 16, 32, 128, 1);
    TokenBatch d = r.padded(DType.BFLOAT16, 64, 300, 128, 2);
    float[] dS = r.floats(16 * 64);
    TrainingScores ts = cuda.scoresForTraining(q, d);
    Gradients first = ts.backward(dS);
    for (int run = 0; run < 3; run++) {
      Gradients again = cuda.scoresForTraining(q, d).backward(dS);
      assertArrayEquals(first.queries().toFloatArray(), again.queries().toFloatArray(), r + " dQ bitwise");
      assertArrayEquals(first.documents().toFloatArray(), again.documents().toFloatArray(), r + " dD bitwise");
    }
    Gradients viaAtomics = atomic.scoresForTraining(q, d).backward(dS);
    float[] want = first.documents().toFloatArray();
    double[] expected = new double[want.length];
    for (int i = 0; i < want.length; i++) {
      expected[i] = want[i];
    }
    GradientTest.assertGradClose(expected, viaAtomics.documents().toFloatArray(), r + " atomic dD");
  }

  /**
   * A NaN in a valid document token: the score is NaN and every query token's argmax (so the max's gradient) is
   * the document's first NaN slot, as on the CPU backends; the NaN token comes after finite winners and before
   * others, in the first tile and past several, in fp32 and bf16.
   */
  @Test
  void aNanWinsAtItsFirstSlot() {
    for (DType type : new DType[] {DType.FLOAT32, DType.BFLOAT16}) {
      for (int dim : new int[] {1, 64, 128}) {
        for (int[] shape : new int[][] {{2, 4, 1}, {32, 300, 7}, {32, 300, 201}}) {
          int lq = shape[0], ld = shape[1], nanAt = shape[2];
          float[] qv = new float[lq * dim];
          java.util.Arrays.fill(qv, 1f);
          float[] dv = new float[ld * dim];
          for (int t = 0; t < ld; t++) {
            java.util.Arrays.fill(dv, t * dim, (t + 1) * dim, t == nanAt || t == ld - 1 ? Float.NaN : t % 5);
          }
          TokenBatch q = batch(type, qv, lq, dim);
          TokenBatch d = batch(type, dv, ld, dim);
          String where = type + " d=" + dim + " Lq=" + lq + " Ld=" + ld + " NaN at " + nanAt;
          TrainingScores ts = cuda.scoresForTraining(q, d);
          assertTrue(Float.isNaN(ts.scores()[0]), where);
          for (int s = 0; s < lq; s++) {
            assertEquals(nanAt, ts.argmax(0, s), where + ", query token " + s);
          }
        }
      }
    }
  }

  /**
   * A pair whose dScore is 0 still multiplies its tokens, as on the CPU backends: its winning infinite or NaN token
   * makes the query token's gradient NaN (0 x inf), finite ones add 0; deterministic and atomic dD alike.
   */
  @Test
  void aZeroDScoreStillMultipliesItsTokens() {
    for (MaxSim m : new MaxSim[] {cuda, atomic}) {
      for (float special : new float[] {Float.POSITIVE_INFINITY, Float.NaN}) {
        TokenBatch q = TokenBatch.of(new float[][][] {{{1f, 1f}}});
        TokenBatch d = TokenBatch.of(new float[][][] {{{special, 0f}}, {{1f, 0f}}});
        Gradients g = m.scoresForTraining(q, d).backward(new float[] {0f, 1f});
        String where = "a zero dScore on a token holding " + special;
        float[] dq = g.queries().toFloatArray();
        assertTrue(Float.isNaN(dq[0]), where + ": dQ[0] = " + dq[0]);
        assertEquals(0f, dq[1], where);
        assertArrayEquals(new float[] {0f, 0f, 1f, 1f}, g.documents().toFloatArray(), where);
      }
    }
  }

  /** One row of {@code values} in fp32, or in bf16 (the values here are exact in it). */
  private static TokenBatch batch(DType type, float[] values, int length, int dim) {
    if (type == DType.FLOAT32) {
      return TokenBatch.ofFloats(values, 1, length, dim);
    }
    short[] bits = new short[values.length];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = (short) (Float.floatToRawIntBits(values[i]) >>> 16);
    }
    return TokenBatch.ofHalfs(DType.BFLOAT16, bits, 1, length, dim);
  }

  @Test
  void inferenceAllocatesNoArgmax() {
    RandomBatches r = new RandomBatches();
    try (MaxSim fresh = MaxSim.builder().backend("cuda").build()) {
      CudaBackend backend = GpuDevices.first(fresh);
      TokenBatch q = r.padded(DType.BFLOAT16, 4, 32, 64, 0);
      TokenBatch d = r.padded(DType.BFLOAT16, 50, 100, 64, 0);
      fresh.scores(q, d);
      fresh.topK(q, d, 3);
      fresh.pairwise(q, r.padded(DType.BFLOAT16, 4, 100, 64, 0));
      assertEquals(0, backend.argmaxBytes(), "inference must not allocate an argmax buffer");
      fresh.scoresForTraining(q, d);
      assertTrue(backend.argmaxBytes() > 0);
    }
  }

  /**
   * Queries against a batch of no documents have no pairs: both document-gradient kernels (whose grids would have
   * no blocks) give zero gradients of the inputs' shapes, as the CPU does.
   */
  @Test
  void queriesWithoutDocumentsHaveZeroGradients() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.BFLOAT16, 3, 32, 64, 1);
    TokenBatch none = r.padded(DType.BFLOAT16, 0, 40, 64, 0);
    for (MaxSim m : new MaxSim[] {cuda, atomic}) {
      String where = (m == cuda ? "owned" : "atomic") + " dD, no documents (" + r + ")";
      TrainingScores ts = m.scoresForTraining(q, none);
      assertEquals(0, ts.scores().length, where);
      Gradients g = ts.backward(new float[0]);
      assertArrayEquals(new float[q.toFloatArray().length], g.queries().toFloatArray(), where + " dQ");
      assertEquals(0, g.documents().size(), where + " dD rows");
    }
  }

  /** Each loss on the device equals its float64 definition on the device's scores, gradients included. */
  @Test
  void lossesOnTheDeviceMatchTheirDefinition() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT32}) {
      TokenBatch q = r.padded(type, 12, 32, 64, 1);
      TokenBatch d = r.packed(type, 24, 0, 80, 64, true);
      int[] positives = new int[12];
      float[][] teacher = new float[12][2];
      float[] margins = new float[12];
      for (int i = 0; i < 12; i++) {
        positives[i] = r.rnd.nextInt(2);
        teacher[i][0] = (float) r.rnd.nextGaussian() * 4;
        teacher[i][1] = (float) r.rnd.nextGaussian() * 4;
        margins[i] = (float) r.rnd.nextGaussian() * 3;
      }
      List<Loss> allPairs = List.of(Loss.contrastive(0.5f), Loss.contrastive(positivesOf(r, 12, 24), 2f));
      for (Loss loss : allPairs) {
        check(cuda.lossAllPairs(q, d, loss), cuda.scoresForTraining(q, d), loss, r + " " + type + " " + loss);
      }
      List<Loss> candidates = List.of(Loss.contrastive(positives, 0.7f), Loss.klDistillation(teacher, 1.5f),
          Loss.marginMse(margins));
      for (Loss loss : candidates) {
        check(cuda.lossCandidates(q, d, 2, loss), cuda.candidatesForTraining(q, d, 2), loss, r + " " + type + " " + loss);
      }
    }
  }

  /**
   * A row whose score is infinite (tokens near 1e20 meet) gives a NaN loss and NaN gradients from that row on the
   * device, as on the CPU ({@link Loss}); the other row's gradients stay finite and match the CPU's.
   */
  @Test
  void aRowWithAnInfiniteScoreGivesNaNOnTheDeviceAsOnTheCpu() {
    try (MaxSim cpu = MaxSim.builder().backend("reference").build()) {
      for (float sign : new float[] {1f, -1f}) {
        TokenBatch q = TokenBatch.ofFloats(new float[] {1e20f, 1f}, 2, 1, 1);
        TokenBatch d = TokenBatch.ofFloats(new float[] {sign * 1e20f, 1f, 0.5f, 0.25f}, 4, 1, 1);
        for (Loss loss : List.of(Loss.contrastive(new int[] {0, 1}, 1f), Loss.contrastive(new int[] {1, 0}, 0.5f),
            Loss.klDistillation(new float[][] {{1f, 2f}, {0.5f, -1f}}, 1f),
            Loss.marginMse(new float[] {1f, 0.25f}))) {
          String where = "sign " + sign + " " + loss;
          TrainingStep expected = cpu.lossCandidates(q, d, 2, loss);
          TrainingStep got = cuda.lossCandidates(q, d, 2, loss);
          assertArrayEquals(expected.scores(), got.scores(), where + " scores");
          assertTrue(Double.isNaN(got.loss()), where + ": loss " + got.loss());
          float[] eq = expected.gradients().queries().toFloatArray();
          float[] gq = got.gradients().queries().toFloatArray();
          assertTrue(Float.isNaN(gq[0]), where + ": dQ of the infinite row " + gq[0]);
          assertEquals(eq[1], gq[1], 1e-4 * Math.max(1e-6, Math.abs(eq[1])), where + ": dQ of the finite row");
          float[] ed = expected.gradients().documents().toFloatArray();
          float[] gd = got.gradients().documents().toFloatArray();
          for (int t = 0; t < ed.length; t++) {
            assertEquals(Float.isNaN(ed[t]), Float.isNaN(gd[t]), where + ": dD[" + t + "] " + ed[t] + " / " + gd[t]);
          }
        }
      }
    }
  }

  /**
   * A valid query token whose product with every valid document token is -inf (a component near 1e20 against one
   * near -1e20) keeps the document's first valid token as its argmax, the lowest index among equal maxima, on every
   * kernel family that saves an argmax, as on the CPU: the start of the running max (no token yet) once reached the
   * backward, which read past the document (an illegal address) or, narrowed to int16, lost the gradient. Documents
   * whose first tokens are masked, and documents long enough for split passes.
   */
  @Test
  void aTokenWhoseEveryProductIsMinusInfinityKeepsTheFirstValidToken() {
    RandomBatches r = new RandomBatches();
    int dim = 64;
    for (int[] shape : new int[][] {{3, 32, 9, 300}, {2, 128, 3, 1500}, {24, 32, 400, 60}}) {
      int nq = shape[0], lq = shape[1], nd = shape[2], ld = shape[3];
      float[] q = r.floats(nq * lq * dim);
      float[] d = r.floats(nd * ld * dim);
      for (int i = 0; i < nq * lq; i++) {
        q[i * dim] = i % 5 == 0 ? 1e20f : 0f; // every fifth query token meets -1e20 in every document token
      }
      for (int t = 0; t < nd * ld; t++) {
        d[t * dim] = -1e20f;
      }
      boolean[] mask = new boolean[nd * ld];
      for (int j = 0; j < nd; j++) {
        for (int t = 0; t < ld; t++) {
          mask[j * ld + t] = j % 2 == 0 || t >= 3 + j % 8; // odd documents: their first 3 to 10 tokens masked
        }
      }
      for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT32}) {
        TokenBatch qb = type == DType.FLOAT32 ? TokenBatch.ofFloats(q, nq, lq, dim)
            : TokenBatch.ofHalfs(type, type.narrow(q), nq, lq, dim);
        TokenBatch db = (type == DType.FLOAT32 ? TokenBatch.ofFloats(d, nd, ld, dim)
            : TokenBatch.ofHalfs(type, type.narrow(d), nd, ld, dim)).withMask(mask);
        for (String variant : new String[] {"default", "stream", "wgmma", "wgroups", "wgmma_ws", "wgmma_ws_merge",
            "pair", "groups"}) {
          String where = type + " " + nq + "x" + nd + "x" + lq + "x" + ld + " " + variant + " (" + r + ")";
          try (MaxSim m = CudaParityTest.withVariant(variant)) {
            TrainingScores got = m.scoresForTraining(qb, db);
            for (int p = 0; p < nq * nd; p++) {
              int j = p % nd;
              int firstValid = j % 2 == 0 ? 0 : 3 + j % 8;
              for (int s = 0; s < lq; s++) {
                int a = got.argmax(p, s);
                if (((p / nd) * lq + s) % 5 == 0) {
                  assertEquals(firstValid, a, where + ": pair " + p + " slot " + s + ", every product -inf");
                } else {
                  assertTrue(a >= firstValid && a < ld && mask[j * ld + a], where + ": pair " + p + " slot " + s
                      + " argmax " + a);
                }
              }
            }
            // the backward reads each argmax's token: it runs, and each query token's gradient is finite
            Gradients g = got.backward(r.floats(nq * nd));
            for (float x : g.queries().toFloatArray()) {
              assertTrue(Float.isFinite(x), where + ": dQ " + x);
            }
          }
        }
      }
    }
  }

  /**
   * Steps that run the streaming forward keep the argmax in int16: half the buffer, and the same step bit
   * for bit as with int32 ("wide"), all pairs and candidates, bf16 and fp16, ragged and empty documents.
   */
  @Test
  void narrowArgmaxStepsEqualWideOnesBitwise() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
      TokenBatch q = r.padded(type, 24, 32, 64, 1);
      TokenBatch d = r.packed(type, 960, 0, 70, 64, true); // 24 x 960 pairs: the streaming kernel
      float[][] teacher = new float[24][40];
      for (float[] row : teacher) {
        for (int c = 0; c < row.length; c++) {
          row[c] = (float) r.rnd.nextGaussian() * 3;
        }
      }
      String where = r + " " + type;
      MaxSim wide = CudaParityTest.withVariant("wide");
      try (wide; MaxSim narrow = MaxSim.builder().backend("cuda").build()) {
        Loss contrastive = Loss.contrastive(positivesOf(r, 24, 960), 0.5f);
        TrainingStep n = narrow.lossAllPairs(q, d, contrastive);
        long stride = 32;
        assertEquals(2L * 24 * 960 * stride, GpuDevices.first(narrow).argmaxBytes(),
            where + ": int16 argmax");
        TrainingStep w = wide.lossAllPairs(q, d, contrastive);
        assertEquals(4L * 24 * 960 * stride, ((CudaBackend) wide.backend()).argmaxBytes(), where + ": int32");
        assertSameStep(w, n, where + " all pairs");
        check(n, narrow.scoresForTraining(q, d), contrastive, where + " all pairs vs definition");
        Loss kl = Loss.klDistillation(teacher, 2f);
        assertSameStep(wide.lossCandidates(q, d, 40, kl), narrow.lossCandidates(q, d, 40, kl), where + " candidates");
      }
    }
  }

  /**
   * wgmma query groups (forced) keep the argmax in int16 too; their steps match the definition, all pairs
   * (groups) and candidates (the per-pair kernels), ragged and empty documents, a query count not a
   * multiple of 4.
   */
  @Test
  void wgmmaQueryGroupStepsMatchTheDefinition() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16}) {
      // a fresh backend per type: scratch buffers only grow, and the int32 forward below would hide the check
      MaxSim groups = CudaParityTest.withVariant("wgroups");
      try (groups) {
        TokenBatch q = r.padded(type, 23, 32, 128, 1);
        TokenBatch d = r.packed(type, 230, 0, 300, 128, true);
        String where = r + " " + type + " wgmma groups";
        Loss contrastive = Loss.contrastive(positivesOf(r, 23, 230), 0.5f);
        TrainingStep step = groups.lossAllPairs(q, d, contrastive);
        boolean sm90 = ((CudaBackend) groups.backend()).computeCapabilityMajor() == 9;
        assertEquals((sm90 ? 2L : 4L) * 23 * 230 * 32, ((CudaBackend) groups.backend()).argmaxBytes(),
            where + ": int16 argmax on sm_90");
        check(step, groups.scoresForTraining(q, d), contrastive, where + " all pairs vs definition");
        Loss kl = Loss.klDistillation(new float[23][10], 2f);
        check(groups.lossCandidates(q, d, 10, kl), groups.candidatesForTraining(q, d, 10), kl,
            where + " candidates vs definition");
      }
    }
  }

  private static void assertSameStep(TrainingStep expected, TrainingStep got, String where) {
    assertEquals(expected.loss(), got.loss(), 0.0, where + " loss");
    assertArrayEquals(expected.scores(), got.scores(), where + " scores");
    assertArrayEquals(expected.gradients().queries().toFloatArray(), got.gradients().queries().toFloatArray(),
        where + " dQ");
    assertArrayEquals(expected.gradients().documents().toFloatArray(), got.gradients().documents().toFloatArray(),
        where + " dD");
  }

  private static int[] positivesOf(RandomBatches r, int rows, int columns) {
    int[] p = new int[rows];
    for (int i = 0; i < rows; i++) {
      p[i] = r.rnd.nextInt(columns);
    }
    return p;
  }

  private static void check(TrainingStep step, TrainingScores forward, Loss loss, String where) {
    float[][] scores = forward.scoreMatrix();
    assertArrayEquals(scores, step.scores(), where + " scores");
    Loss.Value v = loss.evaluate(scores);
    assertEquals(v.loss(), step.loss(), 1e-5 * Math.max(1, Math.abs(v.loss())), where + " loss");
    Gradients expected = forward.backward(v.dScores());
    float[] eq = expected.queries().toFloatArray();
    float[] ed = expected.documents().toFloatArray();
    // dL/dscores comes from the device's fp32 loss (expf, logf), the expectation from float64: the gradients
    // (sums of dScores-weighted rows that partly cancel) agree to 1e-4 of their largest element
    assertGradClose(eq, step.gradients().queries().toFloatArray(), where + " dQ");
    assertGradClose(ed, step.gradients().documents().toFloatArray(), where + " dD");
  }

  private static void assertGradClose(float[] expected, float[] got, String where) {
    assertEquals(expected.length, got.length, where);
    double scale = 1e-6;
    for (float e : expected) {
      scale = Math.max(scale, Math.abs(e));
    }
    for (int i = 0; i < expected.length; i++) {
      assertEquals(expected[i], got[i], 1e-4 * scale, where + " element " + i);
    }
  }
}
