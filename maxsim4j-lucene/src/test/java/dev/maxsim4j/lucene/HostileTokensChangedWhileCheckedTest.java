package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.junit.jupiter.api.Test;

/**
 * Token vectors {@code [L][d]} that another thread changes while a call checks them: the rescorer's constructor and
 * QuantizedLateInteractionField.encode checked the caller's array, then read it again to copy, to build the query
 * and to quantize it. A row swapped for one of another length in between was refused as a batch the caller never
 * made ("rows[0][..] has dimension ..") or kept in the rescorer's copy (its derived rescorers then refused their own
 * query); a NaN written after the finite check reached quantize ("stored token .. holds NaN"). Each call must read
 * the caller's rows once, and check and use what it read.
 */
class HostileTokensChangedWhileCheckedTest {
  private static final VarHandle ROWS = MethodHandles.arrayElementVarHandle(float[][].class);
  private static final VarHandle FLOATS = MethodHandles.arrayElementVarHandle(float[].class);
  private static final int TOKENS = 1 << 14;
  private static final int DIM = 2;

  /** Runs {@code flip} on another thread until {@code attempt} returns true (it saw a bad call) or gives up. */
  private static boolean raced(Runnable flip, BooleanSupplier attempt) throws Exception {
    AtomicBoolean running = new AtomicBoolean(true);
    Thread racer = new Thread(() -> {
      while (running.get()) {
        flip.run();
      }
    });
    racer.start();
    try {
      long end = System.nanoTime() + 1_500_000_000L;
      while (System.nanoTime() < end) {
        if (attempt.getAsBoolean()) {
          return true;
        }
      }
      return false;
    } finally {
      running.set(false);
      racer.join();
    }
  }

  private static float[][] tokens() {
    float[][] t = new float[TOKENS][];
    for (int i = 0; i < TOKENS; i++) {
      t[i] = new float[] {1, 0};
    }
    return t;
  }

  @Test
  void aRowSwappedWhileTheRescorerChecksItIsNeverHalfSeen() throws Exception {
    float[][] query = tokens();
    float[] fits = {0, 1};
    float[] wider = {0, 1, 0};
    int[] flips = {0};
    AtomicReference<String> seen = new AtomicReference<>();
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").threads(1).build()) {
      boolean bad = raced(() -> ROWS.setVolatile(query, TOKENS - 1, (flips[0]++ & 1) == 0 ? wider : fits), () -> {
        try {
          MaxSimRescorer r = MaxSimRescorer.create("f", query, VectorSimilarityFunction.DOT_PRODUCT,
              MaxSimRescorer.Scale.RAW, maxSim);
          r.withFallbackToFirstPassScore(); // rebuilt from the rescorer's own copy: refused if that is ragged
          return false;
        } catch (IllegalArgumentException e) {
          if (e.getMessage().startsWith("queryVectors[" + (TOKENS - 1) + "] has length 3")) {
            return false;
          }
          seen.set(e.getMessage());
          return true;
        }
      });
      assertEquals(false, bad, "a row swapped while checked: " + seen.get());
    }
  }

  @Test
  void aValueChangedWhileEncodeChecksItIsNeverHalfSeen() throws Exception {
    float[][] vectors = tokens();
    float[] last = vectors[TOKENS - 1];
    int[] flips = {0};
    AtomicReference<String> seen = new AtomicReference<>();
    boolean bad = raced(() -> FLOATS.setVolatile(last, 1, (flips[0]++ & 1) == 0 ? Float.NaN : 0f), () -> {
      try {
        QuantizedLateInteractionField.encode(vectors, DType.INT8);
        return false;
      } catch (IllegalArgumentException e) {
        if (e.getMessage().startsWith("vectors[" + (TOKENS - 1) + "][1] is NaN")) {
          return false;
        }
        seen.set(e.getMessage());
        return true;
      }
    });
    assertEquals(false, bad, "a value changed while checked: " + seen.get());
  }
}
