package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.HeapLimit;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * MaxSim of float queries against one-bit documents without expanding the documents. A document token is
 * {@code s x b} with {@code b} in {@code +-1}, so its dot product with a query token {@code q} is
 * {@code s x (2 S - Q)}, where {@code Q} is the sum of {@code q} and {@code S} the sum of {@code q} over the
 * token's set bits; {@code S} is read eight dimensions at a time from a table of the partial sums of every byte
 * value, built once per query (the lookup tables of product-quantization "fast scan", here on the vector lanes).
 * Per document token and query lane that is {@code ceil(d / 8)} table reads and adds where the expanding path
 * spends {@code d} multiply-adds, and the document is never widened.
 *
 * <p>As in {@link VectorKernel}, lanes run over query tokens: a query's table is laid out
 * {@code [ceil(d/8)][256][P]}
 * (P its valid tokens rounded up to whole vectors), so one stored byte selects a row of lanes, and the running
 * max per lane needs no reduction until the final sum ({@link LaneMaxima}). The strict {@code >} of the argmax
 * keeps the lowest slot on a tie.
 *
 * <p><b>Where it applies</b> ({@link #applies}): fp32, bf16 and fp16 queries whose valid values are finite
 * with {@code sum |q| <= MAX_VALUE / 4} per token (so no partial sum, {@code 2 S} or {@code Q} overflows where
 * the dot product does not, and no infinity meets another), and tables that fit one core's L2 cache together
 * ({@value #TABLE_BYTES} bytes: one query of 64 tokens at d = 128, or two of 32): the drivers score every query
 * against a loaded document, so several queries' tables would each be read back from further out, and their
 * build would not pay for itself. Elsewhere (many queries, long ones, wide tokens) the expanding path serves.
 * The choice is per call, so a query's scores depend in their last bits on the other queries of its call; it does
 * not depend on the machine: the tables are counted as AVX-512's lanes ({@value #COUNTED_LANES} floats) would
 * pad them, so a call takes the same path, and gives the same bits, on any machine of up to 512-bit vectors.
 *
 * <p>The error is within that of an fp32 dot product: each table entry and {@code Q} are rounded once from
 * float64, {@code S} adds {@code ceil(d / 8)} of them in fp32 (with the doubling, the subtraction and the scale
 * about {@code 2 ceil(d/8) + 5} roundings of {@code sum |q| |s|}), where the expanding path's multiply-add chain
 * has about d.
 */
final class BitTableKernel {
  private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
  private static final int V = F.length();
  /** Every query's tables together: an L2 cache. */
  static final long TABLE_BYTES = 1L << 20;
  /** The lanes {@link #applies} pads each query's tokens to as it counts the tables: AVX-512's, 16 floats. */
  static final int COUNTED_LANES = 16;

  private BitTableKernel() {}

  /**
   * Whether the tables serve these queries (see the class comment): fp32, bf16 or fp16 queries against 1-bit
   * documents, tables within {@value #TABLE_BYTES} bytes together, every valid value finite and each token's
   * {@code sum |q|} within {@code MAX_VALUE / 4}. The scan reads few values: tables that fit take 128 bytes a value.
   */
  static boolean applies(Tokens queries, Tokens documents) {
    if (documents.dtype != DType.BINARY || queries.dtype.isQuantized()
        || tableBytes(queries, documents, Math.max(V, COUNTED_LANES)) < 0) {
      return false;
    }
    int dim = queries.dim;
    float[] values = new float[queries.maxValidCount * dim];
    for (int i = 0; i < queries.rows; i++) {
      int valid = queries.gatherValid(i, values, null);
      for (int j = 0; j < valid; j++) {
        double absolute = 0;
        for (int k = 0; k < dim; k++) {
          float v = values[j * dim + k];
          if (!Float.isFinite(v)) {
            return false;
          }
          absolute += Math.abs(v);
        }
        if (absolute > Float.MAX_VALUE / 4) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Every query's tables together in bytes with each query's tokens padded to {@code lanes}, or -1 past {@value
   * #TABLE_BYTES}: {@link #applies} counts {@link #COUNTED_LANES}, the memory estimate what this machine allocates.
   */
  private static long tableBytes(Tokens queries, Tokens documents, int lanes) {
    long total = 0;
    for (int i = 0; i < queries.rows; i++) {
      // none for a wholly masked row
      total += documents.tokenBytes * 256 * PairKernel.padded(queries.validCount[i], lanes) * Float.BYTES;
      if (total > TABLE_BYTES) {
        return -1;
      }
    }
    return total;
  }

  /**
   * {@link PairKernel#workingMemory} where the tables {@link #applies apply}: the tables, each row's sums and slots
   * and the scratch they are built from; a worker's document bytes, slots and scales.
   */
  static PairKernel.WorkingMemory workingMemory(Tokens queries, Tokens documents) {
    long bytes = tableBytes(queries, documents, V) + (long) queries.maxValidCount * queries.dim * Float.BYTES
        + 256 * Double.BYTES;
    for (int i = 0; i < queries.rows; i++) {
      bytes += (long) pad(queries.validCount[i]) * Float.BYTES + (long) queries.validCount[i] * Integer.BYTES
          + 3 * HeapLimit.ARRAY_OVERHEAD;
    }
    return new PairKernel.WorkingMemory(bytes, PairKernel.workerBytes(documents,
        documents.tokenBytes + 2 * Integer.BYTES, Math.max(V, pad(queries.maxValidCount))));
  }

  /** The queries bound to tables, where they {@link #applies apply}. */
  static PairKernel.Bound bind(Tokens queries, Tokens documents) {
    int dim = queries.dim;
    int bytes = (int) documents.tokenBytes;
    int rows = queries.rows;
    float[][] tables = new float[rows][];
    float[][] sums = new float[rows][];
    int[][] slots = new int[rows][];
    float[] values = new float[queries.maxValidCount * dim];
    double[] partial = new double[256];
    for (int i = 0; i < rows; i++) {
      int valid = queries.validCount[i];
      int pad = pad(valid);
      slots[i] = new int[valid];
      queries.gatherValid(i, values, slots[i]);
      float[] table = new float[bytes * 256 * pad];
      float[] sum = new float[pad];
      for (int j = 0; j < valid; j++) {
        double all = 0;
        for (int k = 0; k < dim; k++) {
          all += values[j * dim + k];
        }
        sum[j] = (float) all;
        for (int p = 0; p < bytes; p++) {
          // entry b: the sum over b's set bits, most significant first (bit 7 is dimension 8p); dimensions past
          // d add nothing, so a stored token's padding bits never count
          partial[0] = 0;
          for (int b = 1; b < 256; b++) {
            int k = 8 * p + 7 - Integer.numberOfTrailingZeros(b);
            partial[b] = partial[b & (b - 1)] + (k < dim ? values[j * dim + k] : 0f);
            table[((p << 8) | b) * pad + j] = (float) partial[b];
          }
        }
      }
      tables[i] = table;
      sums[i] = sum;
    }
    int runLength = Math.max(V, pad(queries.maxValidCount));
    return () -> new Worker(documents, bytes, tables, sums, slots, runLength);
  }

  private static int pad(int valid) {
    return (int) PairKernel.padded(valid, V);
  }

  private static final class Worker implements PairKernel.Worker {
    private final Tokens documents;
    private final int bytes;
    private final float[][] tables;
    private final float[][] sums;
    private final int[][] qSlots;
    private final byte[] docBytes;
    private final MemorySegment docSegment;
    private final float[] docScale;
    private final int[] docSlots;
    private final float[] runMax;
    private final float[] runArg;
    /** The documents' stored bytes as a segment, whether a heap array or mapped. */
    private final MemorySegment source;
    private int docTokens;

    Worker(Tokens documents, int bytes, float[][] tables, float[][] sums, int[][] qSlots, int runLength) {
      this.documents = documents;
      this.bytes = bytes;
      this.tables = tables;
      this.sums = sums;
      this.qSlots = qSlots;
      this.docBytes = new byte[documents.maxValidCount * bytes];
      this.docSegment = MemorySegment.ofArray(docBytes);
      this.docScale = new float[documents.maxValidCount];
      this.docSlots = new int[documents.maxValidCount];
      this.runMax = new float[runLength];
      this.runArg = new float[runLength];
      this.source = documents.s8 != null ? MemorySegment.ofArray(documents.s8) : documents.segment;
    }

    /** Stages the document's valid tokens' bytes (one copy per run of valid tokens), scales and slots. */
    @Override
    public void load(int j) {
      Tokens d = documents;
      docTokens = d.forEachValidRun(j, docSlots, (token, count, n) -> {
        MemorySegment.copy(source, token * d.tokenBytes, docSegment, (long) n * bytes, count * d.tokenBytes);
        for (int i = 0; i < count; i++) {
          docScale[n + i] = d.scale(token + i);
        }
      });
    }

    @Override
    public float score(int query, int[] argmax, int offset) {
      int[] slots = qSlots[query];
      int valid = slots.length;
      if (valid == 0) {
        return 0f; // every query token masked: an empty sum
      }
      float[] table = tables[query];
      float[] sum = sums[query];
      int pad = sum.length;
      boolean track = argmax != null;
      LaneMaxima.reset(runMax, runArg, pad, track);
      int block = 0;
      for (; block + 2 * V <= pad; block += 2 * V) {
        twoVectorBlock(table, sum, pad, block, track);
      }
      if (block < pad) {
        oneVectorBlock(table, sum, pad, block, track);
      }
      return LaneMaxima.finish(runMax, runArg, valid, slots, docSlots, argmax, offset);
    }

    /** Query lanes [block, block + 2V) against every document token: each stored byte selects two vectors. */
    private void twoVectorBlock(float[] table, float[] sum, int pad, int block, boolean track) {
      byte[] db = docBytes;
      int bytes = this.bytes;
      FloatVector two = FloatVector.broadcast(F, 2f);
      FloatVector q0 = FloatVector.fromArray(F, sum, block).neg();
      FloatVector q1 = FloatVector.fromArray(F, sum, block + V).neg();
      FloatVector m0 = FloatVector.fromArray(F, runMax, block);
      FloatVector m1 = FloatVector.fromArray(F, runMax, block + V);
      FloatVector i0 = track ? FloatVector.fromArray(F, runArg, block) : null;
      FloatVector i1 = track ? FloatVector.fromArray(F, runArg, block + V) : null;
      for (int t = 0, o = 0; t < docTokens; t++, o += bytes) {
        int at = (db[o] & 0xff) * pad + block;
        FloatVector s0 = FloatVector.fromArray(F, table, at);
        FloatVector s1 = FloatVector.fromArray(F, table, at + V);
        for (int p = 1; p < bytes; p++) {
          at = (((p << 8) | (db[o + p] & 0xff)) * pad) + block;
          s0 = s0.add(FloatVector.fromArray(F, table, at));
          s1 = s1.add(FloatVector.fromArray(F, table, at + V));
        }
        float ds = docScale[t];
        FloatVector x0 = s0.fma(two, q0).mul(ds);
        FloatVector x1 = s1.fma(two, q1).mul(ds);
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
    private void oneVectorBlock(float[] table, float[] sum, int pad, int block, boolean track) {
      byte[] db = docBytes;
      int bytes = this.bytes;
      FloatVector two = FloatVector.broadcast(F, 2f);
      FloatVector q0 = FloatVector.fromArray(F, sum, block).neg();
      FloatVector m0 = FloatVector.fromArray(F, runMax, block);
      FloatVector i0 = track ? FloatVector.fromArray(F, runArg, block) : null;
      for (int t = 0, o = 0; t < docTokens; t++, o += bytes) {
        FloatVector s0 = FloatVector.fromArray(F, table, (db[o] & 0xff) * pad + block);
        for (int p = 1; p < bytes; p++) {
          s0 = s0.add(FloatVector.fromArray(F, table, (((p << 8) | (db[o + p] & 0xff)) * pad) + block));
        }
        FloatVector x0 = s0.fma(two, q0).mul(docScale[t]);
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
  }
}
