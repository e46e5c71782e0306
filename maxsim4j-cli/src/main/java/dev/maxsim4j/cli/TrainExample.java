package dev.maxsim4j.cli;

import dev.maxsim4j.Gradients;
import dev.maxsim4j.Loss;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TrainingStep;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code train-example}: trains a linear projection W (384 -> 128) on top of fixed token features with the
 * in-batch contrastive loss, MaxSim scores through the library ({@link MaxSim#lossAllPairs}: on the GPU
 * when present, else the CPU). The projection's products (X W and X^T dY) run through the library too
 * ({@link MaxSim#project}, {@link MaxSim#projectionGradient}: a device kernel on the GPU). With
 * {@code --naive} the same steps go through the naive path instead: the similarity grid
 * [B, B, Lq, Ld] materialised, max and argmax over it, the loss and its backward in float64. Same seed,
 * same loss curve within floating-point tolerance ({@code TrainExampleTest}).
 *
 * <p>Data: B (query, document) pairs of random 384-d token features; a document holds a noisy copy of its
 * query's tokens among random ones, alike only in the first {@value #SIGNAL_FEATURES} features: the others, larger,
 * are noise that a random projection mixes in (the loss starts near chance, ln B), so the projection has to learn
 * to keep what matches.
 */
final class TrainExample {
  static final int FEATURES = 384;
  static final int PROJECTED = 128;
  static final int QUERY_TOKENS = 16;
  static final int DOCUMENT_TOKENS = 64;
  /** The largest batch whose document features fit one Java array (their size is an int). */
  static final int MAX_BATCH = Integer.MAX_VALUE / (DOCUMENT_TOKENS * FEATURES);
  /** The largest batch whose naive [B, B, Lq, Ld] grid fits one Java array. */
  static final int MAX_NAIVE_BATCH = (int) Math.sqrt((Integer.MAX_VALUE - 8.0) / (QUERY_TOKENS * DOCUMENT_TOKENS));
  static final float FEATURE_SCALE = 0.015f;
  /** The features a document's copy of its query's tokens shares with them. */
  static final int SIGNAL_FEATURES = 32;
  /** How much larger the other features are. */
  static final float NUISANCE = 2f;
  /** The noise on a copied feature, relative to its size. */
  static final float NOISE = 0.5f;
  static final float DEFAULT_LR = 0.05f;
  static final String USAGE = """
      train-example [--steps 20] [--batch 32] [--seed 42] [--lr 0.05] [--naive] [--backend NAME] [--verbose]
        Trains a projection W (384 -> 128) of random token features with the in-batch contrastive loss
        (T = 0.05), MaxSim through the library (on the GPU where there is one), and prints the loss of
        each step. --naive: the same steps through the naive path (the [B, B, Lq, Ld] similarity grid
        materialised), for comparison: the same loss curve. A loss that turns NaN (too large an --lr) ends
        the run with status 1, naming the step.""";

  private TrainExample() {}

  static int run(String[] argv, PrintStream out) {
    Args a = new Args("train-example", argv, 1, Set.of("--steps", "--batch", "--seed", "--lr", "--backend"),
        Set.of("--naive", "--verbose"));
    int steps = a.intValue("--steps", 20, 1);
    int batch = a.intValue("--batch", 32, 2, MAX_BATCH);
    long seed = a.intValue("--seed", 42, 0);
    float lr = a.positiveFloat("--lr", DEFAULT_LR);
    boolean naive = a.has("--naive");
    if (naive && batch > MAX_NAIVE_BATCH) { // refused before any step, not part way through the first
      throw new UsageException("train-example: --batch " + batch + " with --naive needs a [" + batch + ", " + batch
          + ", " + QUERY_TOKENS + ", " + DOCUMENT_TOKENS + "] grid, more than a Java array holds; expected --batch <= "
          + MAX_NAIVE_BATCH + " with --naive (the fused path has no grid)");
    }
    try (MaxSim maxSim = Engine.open(a)) {
      out.println("training W (" + FEATURES + " -> " + PROJECTED + "), batch " + batch + ", in-batch contrastive (T = "
          + "0.05), " + (naive ? "naive grid path" : "maxsim4j on " + maxSim.backendName()));
      // each step printed as it ends; the first loss that is not finite ends the run
      train(maxSim, naive, steps, batch, seed, lr, (step, loss) -> {
        out.printf(Locale.ROOT, "step %3d  loss %.6f%n", step, loss);
        if (!Double.isFinite(loss)) {
          // a curve of NaN is no result: the run says why and fails, as a script checking its status expects
          throw new IllegalStateException(String.format(Locale.ROOT, "train-example: the loss is %s from step %d:"
              + " training diverged at --lr %s; expected a smaller --lr (default %s)", loss, step, lr,
              DEFAULT_LR));
        }
      });
    }
    return 0;
  }

  /** Takes the loss of each step (from 1); an exception it throws ends the training. */
  @FunctionalInterface
  interface StepLoss {
    void take(int step, double loss);
  }

  /** {@code steps} steps of SGD, each one's loss (before its update) given to {@code each}. */
  static void train(MaxSim maxSim, boolean naive, int steps, int batch, long seed, float lr, StepLoss each) {
    SplittableRandom rnd = new SplittableRandom(seed);
    // small features keep the scores' spread near T = 0.05, which sharpens a lot
    float[] xq = features(rnd, batch * QUERY_TOKENS);
    float[] xd = features(rnd, batch * DOCUMENT_TOKENS);
    for (int b = 0; b < batch; b++) { // document b's tokens 0, 2, .., 2 (Lq - 1): its query's, noisy, in the signal
      for (int t = 0; t < QUERY_TOKENS; t++) {
        for (int k = 0; k < SIGNAL_FEATURES; k++) {
          int dst = ((b * DOCUMENT_TOKENS + 2 * t) * FEATURES) + k;
          xd[dst] = xq[(b * QUERY_TOKENS + t) * FEATURES + k] + NOISE * xd[dst];
        }
      }
    }
    float[] w = gaussian(rnd, FEATURES * PROJECTED, (float) (1 / Math.sqrt(FEATURES)));
    Loss loss = Loss.contrastive(0.05f);
    for (int s = 0; s < steps; s++) {
      float[] q = maxSim.project(xq, batch * QUERY_TOKENS, FEATURES, w, PROJECTED);
      float[] d = maxSim.project(xd, batch * DOCUMENT_TOKENS, FEATURES, w, PROJECTED);
      float[] dq;
      float[] dd;
      if (naive) {
        NaiveStep n = naiveStep(q, d, batch, loss);
        each.take(s + 1, n.loss);
        dq = n.dq;
        dd = n.dd;
      } else {
        TrainingStep step = maxSim.lossAllPairs(TokenBatch.ofFloats(q, batch, QUERY_TOKENS, PROJECTED),
            TokenBatch.ofFloats(d, batch, DOCUMENT_TOKENS, PROJECTED), loss);
        each.take(s + 1, step.loss());
        Gradients g = step.gradients();
        dq = g.queries().toFloatArray();
        dd = g.documents().toFloatArray();
      }
      float[] dw = maxSim.projectionGradient(xq, batch * QUERY_TOKENS, FEATURES, dq, PROJECTED);
      float[] dwDocs = maxSim.projectionGradient(xd, batch * DOCUMENT_TOKENS, FEATURES, dd, PROJECTED);
      for (int e = 0; e < w.length; e++) {
        w[e] -= lr * (dw[e] + dwDocs[e]);
      }
    }
  }

  private record NaiveStep(double loss, float[] dq, float[] dd) {}

  /** The naive path: the whole [B, B, Lq, Ld] grid, then max, argmax, the loss and the backward from them. */
  private static NaiveStep naiveStep(float[] q, float[] d, int batch, Loss loss) {
    long cells = (long) batch * batch * QUERY_TOKENS * DOCUMENT_TOKENS;
    if (cells > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException(String.format(Locale.ROOT, "the naive path needs a [%d, %d, %d, %d] grid: "
          + "%.1f GiB of floats, more than a Java array holds; the fused path needs none", batch, batch, QUERY_TOKENS,
          DOCUMENT_TOKENS, cells * 4.0 / (1L << 30)));
    }
    float[] grid = new float[(int) cells];
    for (int i = 0; i < batch; i++) {
      for (int j = 0; j < batch; j++) {
        for (int s = 0; s < QUERY_TOKENS; s++) {
          for (int t = 0; t < DOCUMENT_TOKENS; t++) {
            float dot = 0;
            for (int k = 0; k < PROJECTED; k++) {
              dot += q[(i * QUERY_TOKENS + s) * PROJECTED + k] * d[(j * DOCUMENT_TOKENS + t) * PROJECTED + k];
            }
            grid[((i * batch + j) * QUERY_TOKENS + s) * DOCUMENT_TOKENS + t] = dot;
          }
        }
      }
    }
    float[][] scores = new float[batch][batch];
    int[] argmax = new int[batch * batch * QUERY_TOKENS];
    for (int p = 0; p < batch * batch; p++) {
      double sum = 0;
      for (int s = 0; s < QUERY_TOKENS; s++) {
        int best = 0;
        for (int t = 1; t < DOCUMENT_TOKENS; t++) {
          int row = (p * QUERY_TOKENS + s) * DOCUMENT_TOKENS;
          if (grid[row + t] > grid[row + best]) {
            best = t;
          }
        }
        argmax[p * QUERY_TOKENS + s] = best;
        sum += grid[(p * QUERY_TOKENS + s) * DOCUMENT_TOKENS + best];
      }
      scores[p / batch][p % batch] = (float) sum;
    }
    Loss.Value v = loss.evaluate(scores);
    float[] dq = new float[q.length];
    float[] dd = new float[d.length];
    for (int p = 0; p < batch * batch; p++) {
      int i = p / batch;
      int j = p % batch;
      float g = v.dScores()[p];
      for (int s = 0; s < QUERY_TOKENS; s++) {
        int t = argmax[p * QUERY_TOKENS + s];
        for (int k = 0; k < PROJECTED; k++) {
          dq[(i * QUERY_TOKENS + s) * PROJECTED + k] += g * d[(j * DOCUMENT_TOKENS + t) * PROJECTED + k];
          dd[(j * DOCUMENT_TOKENS + t) * PROJECTED + k] += g * q[(i * QUERY_TOKENS + s) * PROJECTED + k];
        }
      }
    }
    return new NaiveStep(v.loss(), dq, dd);
  }

  /** {@code tokens} random feature vectors: the signal features of size 1, the others {@link #NUISANCE}, scaled. */
  private static float[] features(SplittableRandom rnd, int tokens) {
    float[] a = new float[tokens * FEATURES];
    for (int i = 0; i < a.length; i++) {
      a[i] = (float) rnd.nextGaussian() * FEATURE_SCALE * (i % FEATURES < SIGNAL_FEATURES ? 1 : NUISANCE);
    }
    return a;
  }

  private static float[] gaussian(SplittableRandom rnd, int n, float scale) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (float) rnd.nextGaussian() * scale;
    }
    return a;
  }
}
