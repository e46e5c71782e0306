package dev.maxsim4j.bench.baseline;

import dev.maxsim4j.TokenBatch;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The naive path, kept as a benchmark baseline: what {@code einsum('ild,jtd->ijlt').amax(-1).sum(-1)} does.
 * It widens both inputs to fp32 copies, materialises the full similarity grid (layout
 * {@code [Nq, Nd, Ld, Lq']}, {@code Lq'} = Lq rounded up to the lane count), then reads the grid back for
 * the max and the sum. The grid pass is a fair GEMM: register-blocked (one vector of query tokens x four
 * document tokens), lanes over query tokens, FMA over d, so the gap to the fused kernel is what
 * materialising costs, not a weak dot product. Padded batches only; masks are applied in the reduction
 * pass. Needs {@code --add-modules jdk.incubator.vector}.
 */
public final class NaiveMaxSim {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
  private static final int V = S.length();

  private NaiveMaxSim() {}

  /** Bytes the grid of this problem needs. */
  public static long gridBytes(TokenBatch q, TokenBatch d) {
    long lanes = (q.maxLength() + V - 1) / V * (long) V;
    return 4L * q.size() * d.size() * lanes * d.maxLength();
  }

  /** All-pairs scores {@code [Nq][Nd]} through the materialised grid, parallel over documents. */
  public static float[][] scores(TokenBatch q, TokenBatch d, int threads) {
    if (q.isPacked() || d.isPacked()) {
      throw new IllegalArgumentException("the naive baseline takes padded batches only");
    }
    int nq = q.size();
    int nd = d.size();
    int lq = q.maxLength();
    int ld = d.maxLength();
    int dim = q.dim();
    int lanes = (lq + V - 1) / V * V;
    long cells = gridBytes(q, d) / 4;
    if (cells > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("the naive grid [" + nq + ", " + nd + ", " + ld + ", " + lanes + "] needs "
          + (cells * 4 >> 20) + " MiB, more than one Java array holds");
    }
    float[] qf = q.toFloatArray();
    float[] df = d.toFloatArray();
    float[] qt = new float[nq * dim * lanes]; // Q^T per query: [dim][lanes]
    for (int i = 0; i < nq; i++) {
      for (int s = 0; s < lq; s++) {
        for (int k = 0; k < dim; k++) {
          qt[(i * dim + k) * lanes + s] = qf[(i * lq + s) * dim + k];
        }
      }
    }
    float[] grid = new float[(int) cells];
    int chunk = Math.max(1, nd / (threads * 4));
    // pass 1: the similarity grid, grid[i][j][t][s] = <q_is, d_jt>
    runParallel(threads, nd, chunk, j -> {
      for (int i = 0; i < nq; i++) {
        int base = (i * nd + j) * ld * lanes;
        int qBase = i * dim * lanes;
        for (int t = 0; t < ld; t += 4) {
          int t1 = Math.min(t + 1, ld - 1);
          int t2 = Math.min(t + 2, ld - 1);
          int t3 = Math.min(t + 3, ld - 1);
          for (int lane = 0; lane < lanes; lane += V) {
            FloatVector a0 = FloatVector.zero(S);
            FloatVector a1 = FloatVector.zero(S);
            FloatVector a2 = FloatVector.zero(S);
            FloatVector a3 = FloatVector.zero(S);
            int o0 = (j * ld + t) * dim;
            int o1 = (j * ld + t1) * dim;
            int o2 = (j * ld + t2) * dim;
            int o3 = (j * ld + t3) * dim;
            for (int k = 0; k < dim; k++) {
              FloatVector qv = FloatVector.fromArray(S, qt, qBase + k * lanes + lane);
              a0 = qv.fma(FloatVector.broadcast(S, df[o0 + k]), a0);
              a1 = qv.fma(FloatVector.broadcast(S, df[o1 + k]), a1);
              a2 = qv.fma(FloatVector.broadcast(S, df[o2 + k]), a2);
              a3 = qv.fma(FloatVector.broadcast(S, df[o3 + k]), a3);
            }
            a0.intoArray(grid, base + t * lanes + lane);
            a1.intoArray(grid, base + t1 * lanes + lane);
            a2.intoArray(grid, base + t2 * lanes + lane);
            a3.intoArray(grid, base + t3 * lanes + lane);
          }
        }
      }
    });
    // pass 2: max over document tokens, sum over query tokens, read back from the grid
    float[][] out = new float[nq][nd];
    runParallel(threads, nd, chunk, j -> {
      for (int i = 0; i < nq; i++) {
        int base = (i * nd + j) * ld * lanes;
        double sum = 0;
        for (int s = 0; s < lq; s++) {
          if (!q.isValid(i, s)) {
            continue;
          }
          float best = Float.NEGATIVE_INFINITY;
          for (int t = 0; t < ld; t++) {
            if (d.isValid(j, t)) {
              best = Math.max(best, grid[base + t * lanes + s]);
            }
          }
          sum += best;
        }
        out[i][j] = d.validTokens(j) == 0 ? -1e9f : (float) sum;
      }
    });
    return out;
  }

  /** Whether any of {@code threads} (null: never started) still runs; allocates nothing, as the heap may be full. */
  private static boolean anyAlive(Thread[] threads) {
    for (Thread t : threads) {
      if (t != null && t.isAlive()) {
        return true;
      }
    }
    return false;
  }

  interface IntBody {
    void run(int j);
  }

  /**
   * Runs {@code body} for {@code [0, n)} in chunks on up to {@code threads} threads (this one among them). A thread
   * that fails, as with an OutOfMemoryError when the inputs leave the heap nearly full, still counts itself done and
   * its failure is rethrown here, so that no failure leaves the caller waiting (as a fork-join worker's can).
   */
  static void runParallel(int threads, int n, int chunk, IntBody body) {
    int chunks = (n + chunk - 1) / chunk;
    int workers = Math.max(1, Math.min(threads, chunks));
    AtomicInteger next = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(workers);
    Runnable work = () -> {
      try {
        for (int c = next.getAndIncrement(); c < chunks && failure.get() == null; c = next.getAndIncrement()) {
          for (int j = c * chunk; j < Math.min(n, (c + 1) * chunk); j++) {
            body.run(j);
          }
        }
      } catch (Throwable t) {
        failure.compareAndSet(null, t);
      }
    };
    Thread[] helpers = new Thread[workers - 1];
    for (int w = 1; w < workers; w++) {
      // a helper counts itself done once, also where it dies outside the work (its start-up, out of heap too)
      AtomicBoolean counted = new AtomicBoolean();
      Runnable countDown = () -> {
        if (counted.compareAndSet(false, true)) {
          done.countDown();
        }
      };
      try {
        helpers[w - 1] = Thread.ofPlatform().daemon().uncaughtExceptionHandler((thread, e) -> {
          failure.compareAndSet(null, e);
          countDown.run();
        }).start(() -> {
          try {
            work.run();
          } finally {
            countDown.run();
          }
        });
      } catch (OutOfMemoryError | RuntimeException noThread) {
        countDown.run(); // the threads that did start (and this one) take its chunks
      }
    }
    work.run();
    done.countDown();
    boolean interrupted = false;
    boolean finished = false;
    // a helper that died where even its handler ran out of heap never counts itself done: its end is seen instead
    while (!finished && anyAlive(helpers)) {
      try {
        finished = done.await(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        interrupted = true; // the threads read the inputs: return only once they have stopped
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (done.getCount() > 0) {
      failure.compareAndSet(null, new IllegalStateException("a thread of the naive baseline ended before its chunks"
          + " did (out of heap); expected a smaller shape, or a larger -Xmx through JAVA_OPTS"));
    }
    Throwable t = failure.get();
    if (t instanceof RuntimeException e) {
      throw e;
    }
    if (t instanceof Error e) {
      throw e;
    }
  }
}
