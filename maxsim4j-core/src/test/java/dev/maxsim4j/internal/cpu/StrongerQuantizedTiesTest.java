package dev.maxsim4j.internal.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Exact ties on the scaled paths: documents of int8 and e4m3 tokens that repeat (same bytes, same scale), so every
 * copy's dot product equals its first copy's bit for bit, against quantized and float queries of one and of two
 * vector blocks. Each kernel's argmax must be the first of its ties, as the reference's strict {@code >} gives it
 * (the class comments of {@link VectorKernel} and {@link ReferenceKernel}). {@link QuantizedKernelTest} accepts any
 * argmax whose dot product is within the fp32 bound of the max, which a tie to the highest slot also is.
 */
class StrongerQuantizedTiesTest {
  /** Distinct document tokens; slot t holds a copy of token t % DISTINCT. */
  private static final int DISTINCT = 3;
  private static final int DOCUMENT_LENGTH = 23;

  @Test
  void tiedQuantizedTokensGiveTheArgmaxToTheFirstCopy() {
    SplittableRandom r = new SplittableRandom(5);
    for (DType docType : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      for (int d : new int[] {5, 32, 33}) {
        Tokens docs = repeating(r, docType, d);
        for (DType queryType : new DType[] {docType, DType.FLOAT32}) {
          for (int lq : new int[] {5, 20}) { // one vector block, and two (with a one-vector tail on 8 lanes)
            Tokens q = queryType == DType.FLOAT32 ? floats(r, lq, d) : bytes(r, queryType, 1, lq, d);
            String where = queryType + " x " + docType + " d=" + d + " Lq=" + lq;
            for (PairKernel kernel : new PairKernel[] {new VectorKernel(), new ScalarKernel()}) {
              assertFirstOfTies(kernel, q, docs, where + " " + kernel.name());
            }
          }
        }
      }
    }
  }

  private static void assertFirstOfTies(PairKernel kernel, Tokens q, Tokens docs, String where) {
    PairKernel.Worker w = kernel.bind(q, docs).newWorker();
    int[] want = new int[q.maxRowLength];
    int[] got = new int[q.maxRowLength];
    w.load(0);
    Arrays.fill(got, -1);
    double ref = ReferenceKernel.maxSim(q, 0, docs, 0, want, 0);
    float score = w.score(0, got, 0);
    assertEquals(ref, score, 1e-4 * Math.max(1, Math.abs(ref)), where + " score");
    for (int s = 0; s < q.rowLength[0]; s++) {
      assertTrue(got[s] >= 0 && got[s] < DISTINCT,
          where + " slot " + s + ": argmax " + got[s] + " is not the first copy of its token (reference " + want[s]
              + ")");
    }
  }

  /** One document of DOCUMENT_LENGTH tokens cycling through DISTINCT random ones, each copy with its scale. */
  private static Tokens repeating(SplittableRandom r, DType type, int d) {
    Tokens distinct = bytes(r, type, 1, DISTINCT, d);
    int tokenBytes = (int) type.bytesPerToken(d);
    byte[] b = new byte[DOCUMENT_LENGTH * tokenBytes];
    float[] scales = new float[DOCUMENT_LENGTH];
    for (int t = 0; t < DOCUMENT_LENGTH; t++) {
      System.arraycopy(distinct.s8, (t % DISTINCT) * tokenBytes, b, t * tokenBytes, tokenBytes);
      scales[t] = distinct.scale(t % DISTINCT);
    }
    return new Tokens(type, d, DOCUMENT_LENGTH, new int[] {0}, new int[] {DOCUMENT_LENGTH}, DOCUMENT_LENGTH, null,
        null, null, b, null, scales);
  }

  /** Random quantized tokens (never an e4m3 NaN code) with scales other than 1. */
  private static Tokens bytes(SplittableRandom r, DType type, int n, int l, int d) {
    byte[] b = new byte[(int) (n * l * type.bytesPerToken(d))];
    for (int k = 0; k < b.length; k++) {
      int v = r.nextInt(256);
      b[k] = (byte) (type == DType.FLOAT8_E4M3 && (v & 0x7f) == 0x7f ? v ^ 1 : v);
    }
    float[] scales = new float[n * l];
    for (int t = 0; t < scales.length; t++) {
      scales[t] = (float) ((0.25 + r.nextDouble()) / (type == DType.INT8 ? 64 : 4));
    }
    int[] starts = new int[n];
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) {
      starts[i] = i * l;
      lengths[i] = l;
    }
    return new Tokens(type, d, l, starts, lengths, n * l, null, null, null, b, null, scales);
  }

  private static Tokens floats(SplittableRandom r, int l, int d) {
    float[] f = new float[l * d];
    for (int k = 0; k < f.length; k++) {
      f[k] = (float) (r.nextGaussian() * 0.5);
    }
    return new Tokens(DType.FLOAT32, d, l, new int[] {0}, new int[] {l}, l, null, f, null, null);
  }
}
