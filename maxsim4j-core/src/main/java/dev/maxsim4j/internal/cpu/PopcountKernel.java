package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.HeapLimit;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * MaxSim of one-bit queries against one-bit documents without expanding either: the dot product of two
 * {@code +-1} vectors of d dimensions is {@code d - 2 popcount(q xor t)}, times both tokens' scales.
 *
 * <p>Tokens are staged as 32-bit words (the bytes as stored, the padding bits of the last byte and the
 * padding bytes of the last word zero on both sides, so they never differ). As in {@link VectorKernel}, lanes
 * run over query tokens (each query laid out once as words {@code [W][P]}) and a document word is broadcast
 * against them; the running max per lane needs no reduction until the final sum. A pair's value is
 * {@code dot x (queryScale x docScale)}: scaling the integer dot product first would overflow to infinity for a
 * huge scale that the other token's small scale brings back into range. Scales are finite, so the only NaN
 * would be an infinite scale product times a zero dot product, whose exact value is 0: a query and document
 * whose scales can multiply past fp32's range take a plain loop that keeps it 0. The strict {@code >} of the
 * argmax keeps the lowest slot on a tie.
 */
final class PopcountKernel {
  private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;
  private static final VectorSpecies<Float> F = VectorSpecies.of(float.class, I.vectorShape());
  private static final int V = I.length();

  private PopcountKernel() {}

  /** {@link PairKernel#workingMemory}: each query's words padded to whole vectors, a worker's document words. */
  static PairKernel.WorkingMemory workingMemory(Tokens queries, Tokens documents) {
    long words = words(queries);
    long staged = 0;
    for (int i = 0; i < queries.rows; i++) {
      long pad = PairKernel.padded(queries.validCount[i], V);
      staged += (words + 1) * pad * Integer.BYTES + (long) queries.validCount[i] * Integer.BYTES
          + 3 * HeapLimit.ARRAY_OVERHEAD + PairKernel.ROW_VALUES;
    }
    long lanes = Math.max(V, PairKernel.padded(queries.maxValidCount, V));
    return new PairKernel.WorkingMemory(staged,
        PairKernel.workerBytes(documents, words * Integer.BYTES + 2 * Integer.BYTES, lanes));
  }

  static PairKernel.Bound bind(Tokens queries, Tokens documents) {
    int words = words(queries);
    int rows = queries.rows;
    int[][] qw = new int[rows][];
    float[][] qScale = new float[rows][];
    float[] qMaxScale = new float[rows];
    float[] qMinScale = new float[rows];
    int[][] qSlots = new int[rows][];
    int[] token = new int[words];
    MemorySegment tokenWords = MemorySegment.ofArray(token);
    int maxPad = V;
    for (int i = 0; i < rows; i++) {
      int[] slots = validSlots(queries, i);
      int pad = (slots.length + V - 1) / V * V;
      int[] t = new int[words * pad];
      float[] s = new float[pad];
      for (int j = 0; j < slots.length; j++) {
        int stored = queries.rowStart[i] + slots[j];
        stage(queries, stored, tokenWords, 0, words);
        for (int w = 0; w < words; w++) {
          t[w * pad + j] = token[w];
        }
        s[j] = queries.scale(stored);
        qMaxScale[i] = Math.max(qMaxScale[i], Math.abs(s[j]));
      }
      qMinScale[i] = ScaleRange.smallestNonzero(s, slots.length);
      qw[i] = t;
      qScale[i] = s;
      qSlots[i] = slots;
      maxPad = Math.max(maxPad, pad);
    }
    int runLength = maxPad;
    return () -> new Worker(documents, words, qw, qScale, qMaxScale, qMinScale, qSlots, runLength);
  }

  /** 32-bit words per token. */
  private static int words(Tokens t) {
    return (int) ((t.tokenBytes + 3) / 4);
  }

  /** The slots of row {@code i}'s valid tokens, in order. */
  private static int[] validSlots(Tokens t, int i) {
    int[] slots = new int[t.validCount[i]];
    int n = 0;
    for (int s = 0; s < t.rowLength[i] && n < slots.length; s++) {
      if (t.mask == null || t.mask[t.rowStart[i] + s]) {
        slots[n++] = s;
      }
    }
    return slots;
  }

  /** Copies stored token {@code token}'s bytes into {@code words} words at byte {@code at} of {@code dst}. */
  private static void stage(Tokens t, int token, MemorySegment dst, long at, int words) {
    int bytes = (int) t.tokenBytes;
    MemorySegment src = t.s8 != null ? MemorySegment.ofArray(t.s8) : t.segment;
    dst.set(ValueLayout.JAVA_INT_UNALIGNED, at + 4L * (words - 1), 0);
    MemorySegment.copy(src, token * t.tokenBytes, dst, at, bytes);
    int used = t.dim & 7;
    if (used != 0) {
      byte last = dst.get(ValueLayout.JAVA_BYTE, at + bytes - 1);
      dst.set(ValueLayout.JAVA_BYTE, at + bytes - 1, (byte) (last & (0xff00 >>> used)));
    }
  }

  private static final class Worker implements PairKernel.Worker {
    private final Tokens documents;
    private final int words;
    private final int[][] qw;
    private final float[][] qScale;
    private final float[] qMaxScale;
    /** Per query, its lanes' smallest nonzero |scale| (infinity where none). */
    private final float[] qMinScale;
    private final int[][] qSlots;
    private final int[] docWords;
    private final MemorySegment docSegment;
    private final float[] docScale;
    private final int[] docSlots;
    private final float[] runMax;
    private final float[] runArg;
    private final boolean wholeWords;
    private int docTokens;
    /** The loaded document's largest and smallest nonzero |scale|. */
    private float docMaxScale;
    private float docMinScale;

    Worker(Tokens documents, int words, int[][] qw, float[][] qScale, float[] qMaxScale, float[] qMinScale,
        int[][] qSlots, int runLength) {
      this.documents = documents;
      this.words = words;
      this.qw = qw;
      this.qScale = qScale;
      this.qMaxScale = qMaxScale;
      this.qMinScale = qMinScale;
      this.qSlots = qSlots;
      this.docWords = new int[documents.maxValidCount * words];
      this.docSegment = MemorySegment.ofArray(docWords);
      this.docScale = new float[documents.maxValidCount];
      this.docSlots = new int[documents.maxValidCount];
      this.runMax = new float[runLength];
      this.runArg = new float[runLength];
      this.wholeWords = documents.dim % 32 == 0;
    }

    @Override
    public void load(int j) {
      Tokens d = documents;
      docTokens = d.forEachValidRun(j, docSlots, (token, count, n) -> {
        if (wholeWords) {
          // d % 32 == 0: the stored bytes are already whole words with no padding bits, one copy per run
          MemorySegment src = d.s8 != null ? MemorySegment.ofArray(d.s8) : d.segment;
          MemorySegment.copy(src, token * d.tokenBytes, docSegment, 4L * n * words, count * d.tokenBytes);
        }
        for (int i = 0; i < count; i++) {
          if (!wholeWords) {
            stage(d, token + i, docSegment, 4L * (n + i) * words, words);
          }
          docScale[n + i] = d.scale(token + i);
        }
      });
      float maxScale = 0;
      for (int t = 0; t < docTokens; t++) {
        maxScale = Math.max(maxScale, Math.abs(docScale[t]));
      }
      docMaxScale = maxScale;
      docMinScale = ScaleRange.smallestNonzero(docScale, docTokens);
    }

    @Override
    public float score(int query, int[] argmax, int offset) {
      int[] slots = qSlots[query];
      int valid = slots.length;
      if (valid == 0) {
        return 0f; // every query token masked: an empty sum
      }
      int[] q = qw[query];
      float[] qs = qScale[query];
      int pad = qs.length;
      boolean track = argmax != null;
      LaneMaxima.reset(runMax, runArg, pad, track);
      if (ScaleRange.outOfRange(qMaxScale[query], qMinScale[query], docMaxScale, docMinScale)) {
        scoreScalesOutOfRange(q, qs, pad, valid);
      } else {
        int block = 0;
        for (; block + 2 * V <= pad; block += 2 * V) {
          if (words == 4) {
            twoVectorBlockOfFourWords(q, qs, pad, block, track);
          } else {
            twoVectorBlock(q, qs, pad, block, track);
          }
        }
        if (block < pad) {
          oneVectorBlock(q, qs, pad, block, track);
        }
      }
      return LaneMaxima.finish(runMax, runArg, valid, slots, docSlots, argmax, offset);
    }

    /** Query lanes [block, block + 2V) against every document token: one broadcast word feeds two vectors. */
    private void twoVectorBlock(int[] q, float[] qs, int pad, int block, boolean track) {
      int[] dw = docWords;
      int words = this.words;
      IntVector dim = IntVector.broadcast(I, documents.dim);
      FloatVector s0 = FloatVector.fromArray(F, qs, block);
      FloatVector s1 = FloatVector.fromArray(F, qs, block + V);
      FloatVector m0 = FloatVector.fromArray(F, runMax, block);
      FloatVector m1 = FloatVector.fromArray(F, runMax, block + V);
      FloatVector i0 = track ? FloatVector.fromArray(F, runArg, block) : null;
      FloatVector i1 = track ? FloatVector.fromArray(F, runArg, block + V) : null;
      for (int t = 0, o = 0; t < docTokens; t++, o += words) {
        IntVector c0 = IntVector.zero(I);
        IntVector c1 = IntVector.zero(I);
        for (int w = 0, qo = block; w < words; w++, qo += pad) {
          IntVector b = IntVector.broadcast(I, dw[o + w]);
          c0 = c0.add(IntVector.fromArray(I, q, qo).lanewise(VectorOperators.XOR, b)
              .lanewise(VectorOperators.BIT_COUNT));
          c1 = c1.add(IntVector.fromArray(I, q, qo + V).lanewise(VectorOperators.XOR, b)
              .lanewise(VectorOperators.BIT_COUNT));
        }
        float ds = docScale[t];
        FloatVector x0 = value(dim, c0, ds, s0);
        FloatVector x1 = value(dim, c1, ds, s1);
        if (track) {
          FloatVector tv = FloatVector.broadcast(F, t);
          i0 = i0.blend(tv, x0.compare(VectorOperators.GT, m0));
          i1 = i1.blend(tv, x1.compare(VectorOperators.GT, m1));
        }
        m0 = m0.max(x0);
        m1 = m1.max(x1);
      }
      m0.intoArray(runMax, block);
      m1.intoArray(runMax, block + V);
      if (track) {
        i0.intoArray(runArg, block);
        i1.intoArray(runArg, block + V);
      }
    }

    /**
     * {@link #twoVectorBlock} for tokens of four words (d of 97 to 128, the width of the ColBERT family): the
     * block's eight query vectors stay in registers across the document instead of being loaded again for each
     * document token, which the general loop cannot do with a word count known only at run time.
     */
    private void twoVectorBlockOfFourWords(int[] q, float[] qs, int pad, int block, boolean track) {
      int[] dw = docWords;
      IntVector dim = IntVector.broadcast(I, documents.dim);
      FloatVector s0 = FloatVector.fromArray(F, qs, block);
      FloatVector s1 = FloatVector.fromArray(F, qs, block + V);
      FloatVector m0 = FloatVector.fromArray(F, runMax, block);
      FloatVector m1 = FloatVector.fromArray(F, runMax, block + V);
      FloatVector i0 = track ? FloatVector.fromArray(F, runArg, block) : null;
      FloatVector i1 = track ? FloatVector.fromArray(F, runArg, block + V) : null;
      IntVector a0 = IntVector.fromArray(I, q, block);
      IntVector b0 = IntVector.fromArray(I, q, block + V);
      IntVector a1 = IntVector.fromArray(I, q, block + pad);
      IntVector b1 = IntVector.fromArray(I, q, block + pad + V);
      IntVector a2 = IntVector.fromArray(I, q, block + 2 * pad);
      IntVector b2 = IntVector.fromArray(I, q, block + 2 * pad + V);
      IntVector a3 = IntVector.fromArray(I, q, block + 3 * pad);
      IntVector b3 = IntVector.fromArray(I, q, block + 3 * pad + V);
      for (int t = 0, o = 0; t < docTokens; t++, o += 4) {
        int w0 = dw[o];
        int w1 = dw[o + 1];
        int w2 = dw[o + 2];
        int w3 = dw[o + 3];
        // summed as (w0 + w1) + (w2 + w3): two adds that do not wait on each other
        IntVector c0 = a0.lanewise(VectorOperators.XOR, w0).lanewise(VectorOperators.BIT_COUNT)
            .add(a1.lanewise(VectorOperators.XOR, w1).lanewise(VectorOperators.BIT_COUNT))
            .add(a2.lanewise(VectorOperators.XOR, w2).lanewise(VectorOperators.BIT_COUNT)
            .add(a3.lanewise(VectorOperators.XOR, w3).lanewise(VectorOperators.BIT_COUNT)));
        IntVector c1 = b0.lanewise(VectorOperators.XOR, w0).lanewise(VectorOperators.BIT_COUNT)
            .add(b1.lanewise(VectorOperators.XOR, w1).lanewise(VectorOperators.BIT_COUNT))
            .add(b2.lanewise(VectorOperators.XOR, w2).lanewise(VectorOperators.BIT_COUNT)
            .add(b3.lanewise(VectorOperators.XOR, w3).lanewise(VectorOperators.BIT_COUNT)));
        float ds = docScale[t];
        FloatVector x0 = value(dim, c0, ds, s0);
        FloatVector x1 = value(dim, c1, ds, s1);
        if (track) {
          FloatVector tv = FloatVector.broadcast(F, t);
          i0 = i0.blend(tv, x0.compare(VectorOperators.GT, m0));
          i1 = i1.blend(tv, x1.compare(VectorOperators.GT, m1));
        }
        m0 = m0.max(x0);
        m1 = m1.max(x1);
      }
      m0.intoArray(runMax, block);
      m1.intoArray(runMax, block + V);
      if (track) {
        i0.intoArray(runArg, block);
        i1.intoArray(runArg, block + V);
      }
    }

    /** As {@link #twoVectorBlock} for the last V query lanes. */
    private void oneVectorBlock(int[] q, float[] qs, int pad, int block, boolean track) {
      int[] dw = docWords;
      int words = this.words;
      IntVector dim = IntVector.broadcast(I, documents.dim);
      FloatVector s0 = FloatVector.fromArray(F, qs, block);
      FloatVector m0 = FloatVector.fromArray(F, runMax, block);
      FloatVector i0 = track ? FloatVector.fromArray(F, runArg, block) : null;
      for (int t = 0, o = 0; t < docTokens; t++, o += words) {
        IntVector c0 = IntVector.zero(I);
        for (int w = 0, qo = block; w < words; w++, qo += pad) {
          c0 = c0.add(IntVector.fromArray(I, q, qo).lanewise(VectorOperators.XOR, dw[o + w])
              .lanewise(VectorOperators.BIT_COUNT));
        }
        FloatVector x0 = value(dim, c0, docScale[t], s0);
        if (track) {
          i0 = i0.blend(FloatVector.broadcast(F, t), x0.compare(VectorOperators.GT, m0));
        }
        m0 = m0.max(x0);
      }
      m0.intoArray(runMax, block);
      if (track) {
        i0.intoArray(runArg, block);
      }
    }

    /** {@code (d - 2 popcount) x (queryScale x docScale)}: the dot product of the two dequantized tokens. */
    private static FloatVector value(IntVector dim, IntVector popcount, float docScale, FloatVector queryScale) {
      IntVector dot = dim.sub(popcount.lanewise(VectorOperators.LSHL, 1));
      return ((FloatVector) dot.convert(VectorOperators.I2F, 0)).mul(queryScale.mul(docScale));
    }

    /**
     * Every query lane's running max over the document one pair at a time, for a query and document whose fp32
     * scale product may overflow or not be normal ({@link ScaleRange}): such products are taken in float64, and a
     * zero dot product stays 0 instead of infinity x 0. Such scales are rare, so this plain loop (same max and argmax
     * rules as the blocks) keeps the blocks free of the test.
     */
    private void scoreScalesOutOfRange(int[] q, float[] qs, int pad, int valid) {
      int dim = documents.dim;
      for (int j = 0; j < valid; j++) {
        float max = Float.NEGATIVE_INFINITY;
        int arg = 0;
        for (int t = 0; t < docTokens; t++) {
          int popcount = 0;
          for (int w = 0; w < words; w++) {
            popcount += Integer.bitCount(q[w * pad + j] ^ docWords[t * words + w]);
          }
          int dot = dim - 2 * popcount;
          float x = dot == 0 ? 0f : ScaleRange.scaled(dot, qs[j], docScale[t]);
          if (x > max) {
            arg = t;
          }
          max = Math.max(max, x);
        }
        runMax[j] = max;
        runArg[j] = arg;
      }
    }
  }
}
