package dev.maxsim4j.internal.cpu;

import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import dev.maxsim4j.DType;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The fused MaxSim kernel on the Vector API.
 *
 * <p><b>Layout.</b> Lanes run over <em>query tokens</em>: each query is packed once as Q<sup>T</sup>
 * {@code [d][P]} (valid tokens only, P rounded up to the lane count, pad lanes zero). A document token is
 * then a stream of scalars broadcast against Q<sup>T</sup> rows: {@code acc[lanes] += QT[k][lanes] * D[t][k]}
 * gives the dot products of one document token with a whole block of query tokens. The max over document
 * tokens is therefore a plain lane-wise max across loop iterations, no horizontal reduction until the
 * final sum over query tokens, and the corpus is read as stored, never transposed.
 *
 * <p><b>Micro-kernel.</b> 2 vectors of query tokens x 6 document tokens = 12 independent FMA chains (more
 * than FMA latency x two pipes needs), 8 loads per 12 FMAs, where 2 x 4 takes 6 loads per 8.
 * With 8 lanes or fewer, 4 vectors first, each tile then read once per 32 query tokens: x 3 tokens (7 loads per 12
 * FMAs, 17 live vectors) where the JIT compiles for 32 vector registers, x 2 (6 loads per 8 FMAs, 13 live) for
 * AVX2's 16. The last V query lanes use 1 vector x 4 tokens. A tail shorter than a step repeats the last token: a
 * duplicate never changes a max, and the strict {@code >} of the argmax keeps the earlier slot.
 *
 * <p><b>Tiles.</b> Each document is first staged (valid tokens only, widened to fp32; quantized tokens expanded
 * by {@link Dequantizer}, once for all the queries that meet it) in a per-thread buffer, unless its valid tokens
 * are one run of fp32 on the heap, which is read where it lies; then walked in tiles
 * of {@value #TILE} tokens (64 KiB at d = 128: L2-resident);
 * when a query has more than one block of lanes, each block revisits the tile from L2 and keeps its
 * running max (and argmax) in a small array between tiles.
 *
 * <p><b>Scales.</b> Quantized tokens (either side) are staged as their stored values {@code q}, exact in fp32,
 * and each dot product is multiplied by {@code queryScale x documentScale} before the max, as the GPU kernel
 * does: expanded first, a huge scale would overflow single elements to infinity, and an infinity times a zero
 * query value, or infinities of both signs, would give NaN where the exact score is finite or infinite. Where the
 * scale product itself overflows, a zero dot product keeps its exact value 0. A float token whose products with
 * stored values could pass fp32's range is divided by a power of two first ({@link Headroom}).
 *
 * <p>One-bit queries against one-bit documents take {@link PopcountKernel} instead, and float queries against
 * one-bit documents {@link BitTableKernel} where its tables apply.
 *
 * <p><b>Epilogue.</b> Sum the running max over the valid query lanes in float64, round once to fp32
 * ({@link LaneMaxima}). Lane max uses {@link Math#max} semantics, so NaN propagates into the score.
 */
final class VectorKernel implements PairKernel {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
  private static final int V = S.length();
  private static final VectorSpecies<Integer> INTS = VectorSpecies.of(int.class, S.vectorShape());
  /**
   * V shorts; null where no vector shape of V shorts exists (64-bit float lanes), and bf16 is widened by the scalar
   * loop.
   */
  private static final VectorSpecies<Short> SHORTS = shortsOfLaneCount();
  static final int TILE = 128;
  /** Positions the fp32 lanes of the argmax hold exactly: longer documents, tracked, take a plain loop. */
  static final int EXACT_POSITIONS = 1 << 24;
  /**
   * Whether the four-vector blocks take three document tokens a step (17 vectors in the loop, for 32 registers) or
   * two (13, for the 16 of AVX2): with 16, three leave an accumulator on the stack, stored and reloaded on every
   * step (docs/benchmarks.md).
   */
  private static final boolean THREE_TOKENS = VectorRegisters.count(S.vectorBitSize()) >= 32;

  private static VectorSpecies<Short> shortsOfLaneCount() {
    try {
      return VectorSpecies.of(short.class, VectorShape.forBitSize(V * 16));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  @Override
  public String name() {
    return "vector";
  }

  @Override
  public String description() {
    return "Vector API, " + S.vectorBitSize() + "-bit float lanes";
  }

  /** Which arithmetic serves a call: bits against bits, tables of partial sums, or the tokens widened to fp32. */
  private enum Path { POPCOUNT, TABLES, WIDENED }

  /** The arithmetic of every call where fixed for groups of one call's queries ({@link #fixedFor}); else null. */
  private final Path fixed;

  VectorKernel() {
    this(null);
  }

  private VectorKernel(Path fixed) {
    this.fixed = fixed;
  }

  @Override
  public PairKernel fixedFor(Tokens queries, Tokens documents) {
    return fixed != null ? this : new VectorKernel(path(queries, documents)); // a group of a group keeps the call's
  }

  /** The arithmetic that serves a call: {@link #fixed}, or as chosen for its queries and documents. */
  private Path pathOf(Tokens queries, Tokens documents) {
    return fixed != null ? fixed : path(queries, documents);
  }

  private static Path path(Tokens queries, Tokens documents) {
    if (queries.dtype == DType.BINARY && documents.dtype == DType.BINARY) {
      return Path.POPCOUNT;
    }
    return BitTableKernel.applies(queries, documents) ? Path.TABLES : Path.WIDENED;
  }

  @Override
  public WorkingMemory workingMemory(Tokens queries, Tokens documents) {
    Path path = pathOf(queries, documents);
    if (path != Path.WIDENED) {
      return path == Path.POPCOUNT ? PopcountKernel.workingMemory(queries, documents)
          : BitTableKernel.workingMemory(queries, documents);
    }
    // the fp32 copy, the scratch it is gathered in and a quantized row's stored bytes
    long staged = PairKernel.stagedQueryBytes(queries, V) + (long) queries.maxValidCount * queries.dim * Float.BYTES
        + (queries.dtype.isQuantized() ? queries.maxValidCount * queries.tokenBytes : 0);
    // a worker's slots and scales, a quantized mapped document's stored bytes, its widened tokens (stagedTokens) and
    // a bf16 mapped document's pieces (widenBf16Segment)
    long perToken = 2 * Integer.BYTES + (documents.dtype.isQuantized() && documents.s8 == null ? documents.tokenBytes
        : 0);
    long widened = (long) stagedTokens(queries, documents) * documents.dim * Float.BYTES;
    long pieces = documents.s16 == null && documents.segment != null && documents.dtype == DType.BFLOAT16
        ? (long) Math.min(TILE, documents.maxValidCount) * documents.dim * Short.BYTES : 0;
    long lanes = Math.max(V, PairKernel.padded(queries.maxValidCount, V));
    return new WorkingMemory(staged, PairKernel.workerBytes(documents, perToken, lanes) + widened + pieces);
  }

  /**
   * The tokens a worker's buffer holds: the longest row's valid tokens, or, where fp32 heap rows whose valid tokens
   * are one run are read where they lie ({@link VectorWorker#load}), those of the longest row that is not.
   */
  private static int stagedTokens(Tokens queries, Tokens documents) {
    boolean inPlace = documents.f32 != null && !queries.dtype.isQuantized();
    return inPlace ? documents.maxSplitValidCount : documents.maxValidCount;
  }

  @Override
  public Bound bind(Tokens queries, Tokens documents) {
    Path path = pathOf(queries, documents);
    if (path != Path.WIDENED) {
      return path == Path.POPCOUNT ? PopcountKernel.bind(queries, documents) : BitTableKernel.bind(queries, documents);
    }
    int dim = queries.dim;
    int rows = queries.rows;
    boolean scaled = queries.dtype.isQuantized() || documents.dtype.isQuantized();
    float[][] qt = new float[rows][];
    float[][] qScale = scaled ? new float[rows][] : null;
    float[] qMaxScale = new float[rows];
    float[] qMinScale = new float[rows];
    int[][] qSlots = new int[rows][];
    boolean[] qExact = new boolean[rows]; // a token the headroom sends to the exact path (Headroom.divide)
    // unscaled pairs whose partial sums may pass fp32's range are scored exactly (Headroom.mayOverflow)
    double[] qAbsSum = new double[rows];
    double anyQuery = 0;
    int maxPad = V;
    float[] scratch = new float[queries.maxValidCount * dim];
    Tokens.RunCopier stored = queries.dtype.isQuantized() ? Dequantizer.stored(queries) : queries::copyTokens;
    for (int i = 0; i < rows; i++) {
      int nv = queries.validCount[i];
      int pad = (nv + V - 1) / V * V;
      qSlots[i] = new int[nv];
      queries.gatherValid(i, scratch, qSlots[i], stored);
      if (!scaled) {
        qAbsSum[i] = Headroom.largestAbsSum(scratch, nv, dim);
        anyQuery = qAbsSum[i] > anyQuery ? qAbsSum[i] : anyQuery; // a NaN row scores NaN: it must not hide the others
      }
      float[] t = new float[dim * pad];
      for (int j = 0; j < nv; j++) {
        for (int k = 0; k < dim; k++) {
          t[k * pad + j] = scratch[j * dim + k];
        }
      }
      qt[i] = t;
      if (scaled) {
        qScale[i] = new float[pad];
        for (int j = 0; j < nv; j++) {
          qScale[i][j] = queries.scale(queries.rowStart[i] + qSlots[i][j]);
        }
        qMaxScale[i] = queries.maxValidScale(i);
        qMinScale[i] = ScaleRange.smallestNonzero(qScale[i], nv);
        if (!queries.dtype.isQuantized()) { // float lanes against stored values
          double largest = Headroom.largestStored(documents.dtype);
          for (int j = 0; j < nv; j++) {
            float divisor = Headroom.divisor(t, j, dim, pad, largest);
            qExact[i] |= Headroom.divide(t, j, dim, pad, divisor, Headroom.exactFrom(documents.dtype));
            if (divisor != 1f) {
              qScale[i][j] = divisor;
              qMaxScale[i] = Math.max(qMaxScale[i], divisor);
            }
          }
          qMinScale[i] = ScaleRange.smallestNonzero(qScale[i], nv);
        }
      }
      maxPad = Math.max(maxPad, pad);
    }
    int runLength = maxPad;
    boolean floatDocuments = scaled && !documents.dtype.isQuantized();
    double largestQuery = floatDocuments ? Headroom.largestStored(queries.dtype) : 0;
    boolean scanDocuments = Headroom.mayOverflow(anyQuery, Headroom.largestFinite(documents.dtype));
    return () -> new VectorWorker(queries, documents, qt, qScale, qMaxScale, qMinScale, qSlots, runLength,
        largestQuery, qExact, qAbsSum, scanDocuments);
  }

  private static final class VectorWorker implements Worker {
    private final Tokens documents;
    private final float[][] qt;
    private final int[][] qSlots;
    private final int dim;
    /** The staged tokens of the loaded document; made on the first document read through it. */
    private float[] buffer;
    private final int[] bufferSlots;
    private final float[] runMax;
    private final float[] runArg;
    private final Tokens.RunCopier dequantizer;
    /** Per query, its lanes' scales; null when neither side is quantized (no pair is scaled). */
    private final float[][] qScale;
    private final float[] qMaxScale;
    /** Per query, its lanes' smallest nonzero |scale| (infinity where none). */
    private final float[] qMinScale;
    /**
     * The staged tokens' scales: a quantized document's, or a float document's headroom divisors against quantized
     * queries; all 1 otherwise.
     */
    private final float[] docScale;
    private float docMaxScale = 1f;
    private float docMinScale = 1f;
    private int docTokens;
    /** Where the blocks read the document's tokens: the buffer, or an fp32 heap document's one run of valid ones. */
    private float[] docs;
    /** The index in {@link #docs} of the document's first token read. */
    private int docBase;
    /** Runs of valid tokens seen by {@link #noteRun}, and the first one's first token. */
    private int runs;
    private int runFirst;
    private final Tokens.ValidRun runCounter = this::noteRun;
    /** A mapped bf16 document's tokens, copied here before they are widened. */
    private short[] staged = new short[0];
    /** For float documents against quantized queries, the largest value those stage (the headroom), else 0. */
    private final double largestQuery;
    /** Against quantized queries, the smallest float value their stored values meet exactly (Headroom.exactFrom). */
    private final float queryExactFrom;
    private final Tokens queries;
    /** Per query, whether a token's pairs are scored exactly (Headroom.divide). */
    private final boolean[] qExact;
    /** Whether a loaded document token's pairs are scored exactly (Headroom.divide). */
    private boolean docExact;
    private int docIndex;
    /** Per query, the largest sum of |values| of its unscaled tokens (0 where scaled). */
    private final double[] qAbsSum;
    /** Whether a query's partial sums may overflow with a document's values: then documents are scanned. */
    private final boolean scanDocuments;
    /** The loaded document's largest |value| where scanned (an infinity counted as largestFinite), else 0. */
    private float docLargest;
    /** The largest finite |value| the documents' type holds (Headroom.largestFinite). */
    private final float largestFinite;

    VectorWorker(Tokens queries, Tokens documents, float[][] qt, float[][] qScale, float[] qMaxScale,
        float[] qMinScale, int[][] qSlots, int runLength, double largestQuery, boolean[] qExact, double[] qAbsSum,
        boolean scanDocuments) {
      this.queries = queries;
      this.qAbsSum = qAbsSum;
      this.scanDocuments = scanDocuments;
      this.largestFinite = (float) Headroom.largestFinite(documents.dtype);
      this.qExact = qExact;
      this.largestQuery = largestQuery;
      this.queryExactFrom = queries.dtype.isQuantized() ? Headroom.exactFrom(queries.dtype) : 0f;
      this.documents = documents;
      this.qt = qt;
      this.qScale = qScale;
      this.qMaxScale = qMaxScale;
      this.qMinScale = qMinScale;
      this.qSlots = qSlots;
      this.dim = documents.dim;
      this.bufferSlots = new int[documents.maxValidCount];
      this.runMax = new float[runLength];
      this.runArg = new float[runLength];
      this.dequantizer = documents.dtype.isQuantized() ? Dequantizer.stored(documents) : null;
      this.docScale = new float[documents.maxValidCount];
      Arrays.fill(docScale, 1f);
    }

    /**
     * Stages the document's valid tokens, widened to fp32, in this thread's buffer, except fp32 heap tokens that
     * are one run: the blocks read those where they lie, no slower than a copy would be (docs/benchmarks.md).
     */
    @Override
    public void load(int j) {
      docIndex = j;
      docExact = false;
      if (documents.f32 != null && largestQuery == 0 && readInPlace(j)) {
        // one run of valid fp32 tokens on the heap: the blocks read it where it lies (an infinity counts as the
        // largest finite value: a pair's path must not depend on the call's other queries)
        docLargest = scanDocuments ? Math.min(docLargest, largestFinite) : 0f;
        return;
      }
      float[] into = staging();
      docs = into;
      docBase = 0;
      if (dequantizer != null) {
        docTokens = documents.gatherValid(j, into, bufferSlots, dequantizer);
        float maxScale = 0;
        for (int t = 0; t < docTokens; t++) {
          docScale[t] = documents.scale(documents.rowStart[j] + bufferSlots[t]);
          maxScale = Math.max(maxScale, Math.abs(docScale[t]));
        }
        docMaxScale = maxScale;
        docMinScale = ScaleRange.smallestNonzero(docScale, docTokens);
      } else if (documents.s16 != null && documents.dtype == DType.BFLOAT16) {
        docTokens = documents.gatherValid(j, into, bufferSlots, this::widenBf16);
      } else if (documents.segment != null && documents.dtype == DType.BFLOAT16) {
        docTokens = documents.gatherValid(j, into, bufferSlots, this::widenBf16Segment);
      } else if (scanDocuments && documents.f32 != null) {
        docLargest = 0f;
        docTokens = documents.gatherValid(j, into, bufferSlots, this::copyScanned);
      } else {
        docTokens = documents.gatherValid(j, into, bufferSlots);
      }
      if (largestQuery > 0) { // float tokens against stored query values: each its own headroom
        float maxScale = 1f;
        for (int t = 0; t < docTokens; t++) {
          float divisor = Headroom.divisor(into, t * dim, dim, 1, largestQuery);
          docExact |= Headroom.divide(into, t * dim, dim, 1, divisor, queryExactFrom);
          docScale[t] = divisor;
          maxScale = Math.max(maxScale, divisor);
        }
        docMaxScale = maxScale;
        docMinScale = ScaleRange.smallestNonzero(docScale, docTokens);
      }
      if (!scanDocuments || documents.f32 == null) { // fp32 on the heap was scanned as it was copied
        docLargest = scanDocuments ? largestAbs(into, 0, docTokens * dim) : 0f;
      }
      // an infinity counts as the largest finite value: a pair's path must not depend on the call's other queries
      docLargest = Math.min(docLargest, largestFinite);
    }

    /** This worker's staging buffer, made on first use: fp32 documents read in place never need it. */
    private float[] staging() {
      if (buffer == null) {
        buffer = new float[stagedTokens(queries, documents) * dim];
      }
      return buffer;
    }

    /**
     * Points the blocks at an fp32 heap document's valid tokens where they lie, if they are one run (no mask, or a
     * mask that keeps one run), taking their largest |value| where the call scans; false (nothing read) otherwise.
     */
    private boolean readInPlace(int j) {
      runs = 0;
      int n = documents.forEachValidRun(j, bufferSlots, runCounter);
      if (runs > 1) {
        return false;
      }
      docs = documents.f32;
      docBase = runs == 0 ? 0 : runFirst * dim;
      docTokens = n;
      if (scanDocuments) {
        // the scan's one sequential pass also brings the document into cache, which the blocks read six rows at a
        // time far slower from memory (docs/benchmarks.md, what bounds the CPU kernels)
        docLargest = largestAbs(docs, docBase, n * dim);
      }
      return true;
    }

    private void noteRun(int token, int count, int n) {
      if (runs++ == 0) {
        runFirst = token;
      }
    }

    /** Copies fp32 tokens as {@link Tokens#copyTokens} does, taking their largest |value| into docLargest. */
    private void copyScanned(int token, int count, float[] dst, int off) {
      float[] src = documents.f32;
      int from = token * dim;
      int n = count * dim;
      FloatVector m0 = FloatVector.zero(S);
      FloatVector m1 = FloatVector.zero(S);
      int i = 0;
      for (; i + 2 * V <= n; i += 2 * V) {
        FloatVector v0 = FloatVector.fromArray(S, src, from + i);
        FloatVector v1 = FloatVector.fromArray(S, src, from + i + V);
        v0.intoArray(dst, off + i);
        v1.intoArray(dst, off + i + V);
        m0 = m0.max(v0.abs());
        m1 = m1.max(v1.abs());
      }
      System.arraycopy(src, from + i, dst, off + i, n - i);
      float largest = Math.max(m0.max(m1).reduceLanes(VectorOperators.MAX), largestAbs(src, from + i, n - i));
      docLargest = Math.max(docLargest, largest);
    }

    /** The largest |value| of {@code a[from .. from + n)}, NaN if one is. */
    private static float largestAbs(float[] a, int from, int n) {
      FloatVector m0 = FloatVector.zero(S);
      FloatVector m1 = FloatVector.zero(S);
      int i = 0;
      for (; i + 2 * V <= n; i += 2 * V) {
        m0 = m0.max(FloatVector.fromArray(S, a, from + i).abs());
        m1 = m1.max(FloatVector.fromArray(S, a, from + i + V).abs());
      }
      float largest = m0.max(m1).reduceLanes(VectorOperators.MAX);
      for (; i < n; i++) {
        largest = Math.max(largest, Math.abs(a[from + i]));
      }
      return largest;
    }

    /** bf16 -> fp32 is a 16-bit left shift: V lanes at a time (the scalar loop does not vectorise). */
    private void widenBf16(int token, int count, float[] dst, int off) {
      widen(documents.s16, token * dim, count * dim, dst, off);
    }

    /**
     * As {@link #widenBf16} from memory (a mapped corpus), staged on the heap by bulk copies first: a vector load
     * from a mapping whose file shrank crashes the JVM once compiled, where the copy's fault is an error. The copies
     * take {@value #TILE} tokens at a time, so the staging stays small beside the widened document.
     */
    private void widenBf16Segment(int token, int count, float[] dst, int off) {
      for (int done = 0; done < count; done += TILE) {
        int n = Math.min(TILE, count - done) * dim;
        if (staged.length < n) {
          staged = new short[n];
        }
        MemorySegment.copy(documents.segment, ValueLayout.JAVA_SHORT_UNALIGNED, (long) (token + done) * dim * 2,
            staged, 0, n);
        widen(staged, 0, n, dst, off + done * dim);
      }
    }

    private static void widen(short[] src, int from, int n, float[] dst, int off) {
      int i = 0;
      for (; SHORTS != null && i + V <= n; i += V) {
        ((IntVector) ShortVector.fromArray(SHORTS, src, from + i).convertShape(VectorOperators.S2I, INTS, 0))
            .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(dst, off + i);
      }
      for (; i < n; i++) {
        dst[off + i] = Float.intBitsToFloat(src[from + i] << 16);
      }
    }

    @Override
    public float score(int query, int[] argmax, int offset) {
      int[] slots = qSlots[query];
      int valid = slots.length;
      if (valid == 0) {
        return 0f; // every query token masked: an empty sum
      }
      if (qExact[query] || docExact || Headroom.mayOverflow(qAbsSum[query], docLargest)) {
        return ReferenceKernel.score(queries, query, documents, docIndex, argmax, offset);
      }
      float[] q = qt[query];
      int pad = q.length / dim;
      boolean track = argmax != null;
      LaneMaxima.reset(runMax, runArg, pad, track);
      float[] qs = qScale == null ? null : qScale[query];
      if (track && docTokens > EXACT_POSITIONS) {
        return scoreLongDocument(q, qs, pad, valid, slots, argmax, offset);
      }
      if (qs != null && ScaleRange.outOfRange(qMaxScale[query], qMinScale[query], docMaxScale, docMinScale)) {
        scoreScalesOutOfRange(q, qs, pad, valid);
      } else {
        // tiles end at docTokens - tileStart, never at tileStart + TILE past it, which passes 2^31 for the last tile
        // of a document near the largest array
        for (int tileStart = 0, tileEnd; tileStart < docTokens; tileStart = tileEnd) {
          tileEnd = docTokens - tileStart <= TILE ? docTokens : tileStart + TILE;
          int block = 0;
          if (qs == null) {
            if (V <= 8 && !track) {
              for (; block + 4 * V <= pad; block += 4 * V) {
                if (THREE_TOKENS) {
                  fourVectorBlock(q, pad, block, tileStart, tileEnd);
                } else {
                  fourVectorBlockOfPairs(q, pad, block, tileStart, tileEnd);
                }
              }
            }
            for (; block + 2 * V <= pad; block += 2 * V) {
              twoVectorBlock(q, pad, block, tileStart, tileEnd, track);
            }
            if (block < pad) {
              oneVectorBlock(q, pad, block, tileStart, tileEnd, track);
            }
          } else {
            if (V <= 8 && !track) {
              for (; block + 4 * V <= pad; block += 4 * V) {
                if (THREE_TOKENS) {
                  fourVectorBlockScaled(q, qs, pad, block, tileStart, tileEnd);
                } else {
                  fourVectorBlockOfPairsScaled(q, qs, pad, block, tileStart, tileEnd);
                }
              }
            }
            for (; block + 2 * V <= pad; block += 2 * V) {
              twoVectorBlockScaled(q, qs, pad, block, tileStart, tileEnd, track);
            }
            if (block < pad) {
              oneVectorBlockScaled(q, qs, pad, block, tileStart, tileEnd, track);
            }
          }
        }
      }
      if (track) {
        // the blocks' winners move on strictly greater values, which NaN never is: a lane whose max is NaN wins
        // at its first NaN, as on every backend
        for (int j = 0; j < valid; j++) {
          if (Float.isNaN(runMax[j])) {
            runArg[j] = firstNaN(q, qs, pad, j);
          }
        }
      }
      return LaneMaxima.finish(runMax, runArg, valid, slots, bufferSlots, argmax, offset);
    }

    /**
     * Lane j's value against loaded token t: the dot product, times the scales where there are any, as the blocks
     * take them where their fp32 product is normal, else through float64 ({@link ScaleRange#scaled}); a zero dot
     * product stays 0.
     */
    private float value(float[] q, float[] qs, int pad, int j, int t) {
      float dot = 0;
      for (int k = 0; k < dim; k++) {
        dot = Math.fma(q[k * pad + j], docs[docBase + t * dim + k], dot);
      }
      return qs == null ? dot : dot == 0 ? 0f : ScaleRange.scaled(dot, qs[j], docScale[t]);
    }

    /** The first loaded token whose value for lane j is NaN (the lane's max is NaN, so there is one). */
    private int firstNaN(float[] q, float[] qs, int pad, int j) {
      for (int t = 0; t < docTokens; t++) {
        if (Float.isNaN(value(q, qs, pad, j, t))) {
          return t;
        }
      }
      return 0;
    }

    /**
     * A tracked score over a document of more than {@link #EXACT_POSITIONS} valid tokens: lane by lane in a plain
     * loop with int positions (the same values, max, NaN and tie rules as the blocks; such documents are rare).
     */
    private float scoreLongDocument(float[] q, float[] qs, int pad, int valid, int[] slots, int[] argmax,
        int offset) {
      double sum = 0;
      for (int j = 0; j < valid; j++) {
        float max = Float.NEGATIVE_INFINITY;
        int arg = 0;
        for (int t = 0; t < docTokens; t++) {
          float x = value(q, qs, pad, j, t);
          if (x > max || (Float.isNaN(x) && !Float.isNaN(max))) {
            max = x;
            arg = t;
          }
        }
        sum += max;
        argmax[offset + slots[j]] = bufferSlots[arg];
      }
      return (float) sum;
    }

    /** Running max of query lanes [block, block + 2V) over document tokens [from, to), 6 tokens a step. */
    private void twoVectorBlock(float[] q, int pad, int block, int from, int to, boolean track) {
      float[] d = docs;
      int base = docBase;
      int dim = this.dim;
      int last = to - 1;
      FloatVector m0 = FloatVector.fromArray(S, runMax, block);
      FloatVector m1 = FloatVector.fromArray(S, runMax, block + V);
      FloatVector i0 = track ? FloatVector.fromArray(S, runArg, block) : null;
      FloatVector i1 = track ? FloatVector.fromArray(S, runArg, block + V) : null;
      for (int t = from; t < to; t += 6) {
        int o0 = base + t * dim;
        int o1 = base + Math.min(t + 1, last) * dim;
        int o2 = base + Math.min(t + 2, last) * dim;
        int o3 = base + Math.min(t + 3, last) * dim;
        int o4 = base + Math.min(t + 4, last) * dim;
        int o5 = base + Math.min(t + 5, last) * dim;
        FloatVector a00 = FloatVector.zero(S);
        FloatVector a01 = FloatVector.zero(S);
        FloatVector a10 = FloatVector.zero(S);
        FloatVector a11 = FloatVector.zero(S);
        FloatVector a20 = FloatVector.zero(S);
        FloatVector a21 = FloatVector.zero(S);
        FloatVector a30 = FloatVector.zero(S);
        FloatVector a31 = FloatVector.zero(S);
        FloatVector a40 = FloatVector.zero(S);
        FloatVector a41 = FloatVector.zero(S);
        FloatVector a50 = FloatVector.zero(S);
        FloatVector a51 = FloatVector.zero(S);
        for (int k = 0, qo = block; k < dim; k++, qo += pad) {
          FloatVector q0 = FloatVector.fromArray(S, q, qo);
          FloatVector q1 = FloatVector.fromArray(S, q, qo + V);
          FloatVector b0 = FloatVector.broadcast(S, d[o0 + k]);
          a00 = q0.fma(b0, a00);
          a01 = q1.fma(b0, a01);
          FloatVector b1 = FloatVector.broadcast(S, d[o1 + k]);
          a10 = q0.fma(b1, a10);
          a11 = q1.fma(b1, a11);
          FloatVector b2 = FloatVector.broadcast(S, d[o2 + k]);
          a20 = q0.fma(b2, a20);
          a21 = q1.fma(b2, a21);
          FloatVector b3 = FloatVector.broadcast(S, d[o3 + k]);
          a30 = q0.fma(b3, a30);
          a31 = q1.fma(b3, a31);
          FloatVector b4 = FloatVector.broadcast(S, d[o4 + k]);
          a40 = q0.fma(b4, a40);
          a41 = q1.fma(b4, a41);
          FloatVector b5 = FloatVector.broadcast(S, d[o5 + k]);
          a50 = q0.fma(b5, a50);
          a51 = q1.fma(b5, a51);
        }
        if (!track) {
          m0 = m0.max(a00).max(a10).max(a20).max(a30).max(a40).max(a50);
          m1 = m1.max(a01).max(a11).max(a21).max(a31).max(a41).max(a51);
        } else {
          // in token order, strict >: the lowest slot wins a tie
          FloatVector tv0 = FloatVector.broadcast(S, t);
          i0 = i0.blend(tv0, a00.compare(VectorOperators.GT, m0));
          m0 = m0.max(a00);
          i1 = i1.blend(tv0, a01.compare(VectorOperators.GT, m1));
          m1 = m1.max(a01);
          FloatVector tv1 = FloatVector.broadcast(S, Math.min(t + 1, last));
          i0 = i0.blend(tv1, a10.compare(VectorOperators.GT, m0));
          m0 = m0.max(a10);
          i1 = i1.blend(tv1, a11.compare(VectorOperators.GT, m1));
          m1 = m1.max(a11);
          FloatVector tv2 = FloatVector.broadcast(S, Math.min(t + 2, last));
          i0 = i0.blend(tv2, a20.compare(VectorOperators.GT, m0));
          m0 = m0.max(a20);
          i1 = i1.blend(tv2, a21.compare(VectorOperators.GT, m1));
          m1 = m1.max(a21);
          FloatVector tv3 = FloatVector.broadcast(S, Math.min(t + 3, last));
          i0 = i0.blend(tv3, a30.compare(VectorOperators.GT, m0));
          m0 = m0.max(a30);
          i1 = i1.blend(tv3, a31.compare(VectorOperators.GT, m1));
          m1 = m1.max(a31);
          FloatVector tv4 = FloatVector.broadcast(S, Math.min(t + 4, last));
          i0 = i0.blend(tv4, a40.compare(VectorOperators.GT, m0));
          m0 = m0.max(a40);
          i1 = i1.blend(tv4, a41.compare(VectorOperators.GT, m1));
          m1 = m1.max(a41);
          FloatVector tv5 = FloatVector.broadcast(S, Math.min(t + 5, last));
          i0 = i0.blend(tv5, a50.compare(VectorOperators.GT, m0));
          m0 = m0.max(a50);
          i1 = i1.blend(tv5, a51.compare(VectorOperators.GT, m1));
          m1 = m1.max(a51);
        }
      }
      m0.intoArray(runMax, block);
      m1.intoArray(runMax, block + V);
      if (track) {
        i0.intoArray(runArg, block);
        i1.intoArray(runArg, block + V);
      }
    }

    /**
     * Running max of query lanes [block, block + 4V) over document tokens [from, to), 3 tokens a step: with lanes
     * of 8 or fewer, two-vector blocks load a broadcast per 2 FMAs and read each tile once per 16 query tokens;
     * here 7 loads feed 12 FMAs and a 32-token query reads the tile once.
     */
    private void fourVectorBlock(float[] q, int pad, int block, int from, int to) {
      float[] d = docs;
      int base = docBase;
      int dim = this.dim;
      int last = to - 1;
      FloatVector m0 = FloatVector.fromArray(S, runMax, block);
      FloatVector m1 = FloatVector.fromArray(S, runMax, block + V);
      FloatVector m2 = FloatVector.fromArray(S, runMax, block + 2 * V);
      FloatVector m3 = FloatVector.fromArray(S, runMax, block + 3 * V);
      for (int t = from; t < to; t += 3) {
        int o0 = base + t * dim;
        int o1 = base + Math.min(t + 1, last) * dim;
        int o2 = base + Math.min(t + 2, last) * dim;
        FloatVector a00 = FloatVector.zero(S);
        FloatVector a01 = FloatVector.zero(S);
        FloatVector a02 = FloatVector.zero(S);
        FloatVector a03 = FloatVector.zero(S);
        FloatVector a10 = FloatVector.zero(S);
        FloatVector a11 = FloatVector.zero(S);
        FloatVector a12 = FloatVector.zero(S);
        FloatVector a13 = FloatVector.zero(S);
        FloatVector a20 = FloatVector.zero(S);
        FloatVector a21 = FloatVector.zero(S);
        FloatVector a22 = FloatVector.zero(S);
        FloatVector a23 = FloatVector.zero(S);
        for (int k = 0, qo = block; k < dim; k++, qo += pad) {
          FloatVector q0 = FloatVector.fromArray(S, q, qo);
          FloatVector q1 = FloatVector.fromArray(S, q, qo + V);
          FloatVector q2 = FloatVector.fromArray(S, q, qo + 2 * V);
          FloatVector q3 = FloatVector.fromArray(S, q, qo + 3 * V);
          FloatVector b0 = FloatVector.broadcast(S, d[o0 + k]);
          a00 = q0.fma(b0, a00);
          a01 = q1.fma(b0, a01);
          a02 = q2.fma(b0, a02);
          a03 = q3.fma(b0, a03);
          FloatVector b1 = FloatVector.broadcast(S, d[o1 + k]);
          a10 = q0.fma(b1, a10);
          a11 = q1.fma(b1, a11);
          a12 = q2.fma(b1, a12);
          a13 = q3.fma(b1, a13);
          FloatVector b2 = FloatVector.broadcast(S, d[o2 + k]);
          a20 = q0.fma(b2, a20);
          a21 = q1.fma(b2, a21);
          a22 = q2.fma(b2, a22);
          a23 = q3.fma(b2, a23);
        }
        m0 = m0.max(a00).max(a10).max(a20);
        m1 = m1.max(a01).max(a11).max(a21);
        m2 = m2.max(a02).max(a12).max(a22);
        m3 = m3.max(a03).max(a13).max(a23);
      }
      m0.intoArray(runMax, block);
      m1.intoArray(runMax, block + V);
      m2.intoArray(runMax, block + 2 * V);
      m3.intoArray(runMax, block + 3 * V);
    }

    /** As {@link #fourVectorBlock}, 2 tokens a step: 13 vectors in the loop, for 16 registers. */
    private void fourVectorBlockOfPairs(float[] q, int pad, int block, int from, int to) {
      float[] d = docs;
      int base = docBase;
      int dim = this.dim;
      int last = to - 1;
      FloatVector m0 = FloatVector.fromArray(S, runMax, block);
      FloatVector m1 = FloatVector.fromArray(S, runMax, block + V);
      FloatVector m2 = FloatVector.fromArray(S, runMax, block + 2 * V);
      FloatVector m3 = FloatVector.fromArray(S, runMax, block + 3 * V);
      for (int t = from; t < to; t += 2) {
        int o0 = base + t * dim;
        int o1 = base + Math.min(t + 1, last) * dim;
        FloatVector a00 = FloatVector.zero(S);
        FloatVector a01 = FloatVector.zero(S);
        FloatVector a02 = FloatVector.zero(S);
        FloatVector a03 = FloatVector.zero(S);
        FloatVector a10 = FloatVector.zero(S);
        FloatVector a11 = FloatVector.zero(S);
        FloatVector a12 = FloatVector.zero(S);
        FloatVector a13 = FloatVector.zero(S);
        for (int k = 0, qo = block; k < dim; k++, qo += pad) {
          FloatVector q0 = FloatVector.fromArray(S, q, qo);
          FloatVector q1 = FloatVector.fromArray(S, q, qo + V);
          FloatVector q2 = FloatVector.fromArray(S, q, qo + 2 * V);
          FloatVector q3 = FloatVector.fromArray(S, q, qo + 3 * V);
          FloatVector b0 = FloatVector.broadcast(S, d[o0 + k]);
          a00 = q0.fma(b0, a00);
          a01 = q1.fma(b0, a01);
          a02 = q2.fma(b0, a02);
          a03 = q3.fma(b0, a03);
          FloatVector b1 = FloatVector.broadcast(S, d[o1 + k]);
          a10 = q0.fma(b1, a10);
          a11 = q1.fma(b1, a11);
          a12 = q2.fma(b1, a12);
          a13 = q3.fma(b1, a13);
        }
        m0 = m0.max(a00).max(a10);
        m1 = m1.max(a01).max(a11);
        m2 = m2.max(a02).max(a12);
        m3 = m3.max(a03).max(a13);
      }
      m0.intoArray(runMax, block);
      m1.intoArray(runMax, block + V);
      m2.intoArray(runMax, block + 2 * V);
      m3.intoArray(runMax, block + 3 * V);
    }

    /** As {@link #twoVectorBlock} for the last V query lanes. */
    private void oneVectorBlock(float[] q, int pad, int block, int from, int to, boolean track) {
      float[] d = docs;
      int base = docBase;
      int dim = this.dim;
      int last = to - 1;
      FloatVector m = FloatVector.fromArray(S, runMax, block);
      FloatVector idx = track ? FloatVector.fromArray(S, runArg, block) : null;
      for (int t = from; t < to; t += 4) {
        int o0 = base + t * dim;
        int o1 = base + Math.min(t + 1, last) * dim;
        int o2 = base + Math.min(t + 2, last) * dim;
        int o3 = base + Math.min(t + 3, last) * dim;
        FloatVector a0 = FloatVector.zero(S);
        FloatVector a1 = FloatVector.zero(S);
        FloatVector a2 = FloatVector.zero(S);
        FloatVector a3 = FloatVector.zero(S);
        for (int k = 0, qo = block; k < dim; k++, qo += pad) {
          FloatVector q0 = FloatVector.fromArray(S, q, qo);
          a0 = q0.fma(FloatVector.broadcast(S, d[o0 + k]), a0);
          a1 = q0.fma(FloatVector.broadcast(S, d[o1 + k]), a1);
          a2 = q0.fma(FloatVector.broadcast(S, d[o2 + k]), a2);
          a3 = q0.fma(FloatVector.broadcast(S, d[o3 + k]), a3);
        }
        if (!track) {
          m = m.max(a0).max(a1).max(a2).max(a3);
        } else {
          VectorMask<Float> gt = a0.compare(VectorOperators.GT, m);
          idx = idx.blend(FloatVector.broadcast(S, t), gt);
          m = m.max(a0);
          gt = a1.compare(VectorOperators.GT, m);
          idx = idx.blend(FloatVector.broadcast(S, Math.min(t + 1, last)), gt);
          m = m.max(a1);
          gt = a2.compare(VectorOperators.GT, m);
          idx = idx.blend(FloatVector.broadcast(S, Math.min(t + 2, last)), gt);
          m = m.max(a2);
          gt = a3.compare(VectorOperators.GT, m);
          idx = idx.blend(FloatVector.broadcast(S, Math.min(t + 3, last)), gt);
          m = m.max(a3);
        }
      }
      m.intoArray(runMax, block);
      if (track) {
        idx.intoArray(runArg, block);
      }
    }

    /** As {@link #fourVectorBlock}, each dot product multiplied by query scale x document scale first. */
    private void fourVectorBlockScaled(float[] q, float[] qs, int pad, int block, int from, int to) {
      float[] d = docs;
      int base = docBase;
      float[] ds = docScale;
      int dim = this.dim;
      int last = to - 1;
      FloatVector s0 = FloatVector.fromArray(S, qs, block);
      FloatVector s1 = FloatVector.fromArray(S, qs, block + V);
      FloatVector s2 = FloatVector.fromArray(S, qs, block + 2 * V);
      FloatVector s3 = FloatVector.fromArray(S, qs, block + 3 * V);
      FloatVector m0 = FloatVector.fromArray(S, runMax, block);
      FloatVector m1 = FloatVector.fromArray(S, runMax, block + V);
      FloatVector m2 = FloatVector.fromArray(S, runMax, block + 2 * V);
      FloatVector m3 = FloatVector.fromArray(S, runMax, block + 3 * V);
      for (int t = from; t < to; t += 3) {
        int t1 = Math.min(t + 1, last);
        int t2 = Math.min(t + 2, last);
        int o0 = base + t * dim;
        int o1 = base + t1 * dim;
        int o2 = base + t2 * dim;
        FloatVector a00 = FloatVector.zero(S);
        FloatVector a01 = FloatVector.zero(S);
        FloatVector a02 = FloatVector.zero(S);
        FloatVector a03 = FloatVector.zero(S);
        FloatVector a10 = FloatVector.zero(S);
        FloatVector a11 = FloatVector.zero(S);
        FloatVector a12 = FloatVector.zero(S);
        FloatVector a13 = FloatVector.zero(S);
        FloatVector a20 = FloatVector.zero(S);
        FloatVector a21 = FloatVector.zero(S);
        FloatVector a22 = FloatVector.zero(S);
        FloatVector a23 = FloatVector.zero(S);
        for (int k = 0, qo = block; k < dim; k++, qo += pad) {
          FloatVector q0 = FloatVector.fromArray(S, q, qo);
          FloatVector q1 = FloatVector.fromArray(S, q, qo + V);
          FloatVector q2 = FloatVector.fromArray(S, q, qo + 2 * V);
          FloatVector q3 = FloatVector.fromArray(S, q, qo + 3 * V);
          FloatVector b0 = FloatVector.broadcast(S, d[o0 + k]);
          a00 = q0.fma(b0, a00);
          a01 = q1.fma(b0, a01);
          a02 = q2.fma(b0, a02);
          a03 = q3.fma(b0, a03);
          FloatVector b1 = FloatVector.broadcast(S, d[o1 + k]);
          a10 = q0.fma(b1, a10);
          a11 = q1.fma(b1, a11);
          a12 = q2.fma(b1, a12);
          a13 = q3.fma(b1, a13);
          FloatVector b2 = FloatVector.broadcast(S, d[o2 + k]);
          a20 = q0.fma(b2, a20);
          a21 = q1.fma(b2, a21);
          a22 = q2.fma(b2, a22);
          a23 = q3.fma(b2, a23);
        }
        float d0 = ds[t];
        float d1 = ds[t1];
        float d2 = ds[t2];
        m0 = m0.max(a00.mul(s0.mul(d0))).max(a10.mul(s0.mul(d1))).max(a20.mul(s0.mul(d2)));
        m1 = m1.max(a01.mul(s1.mul(d0))).max(a11.mul(s1.mul(d1))).max(a21.mul(s1.mul(d2)));
        m2 = m2.max(a02.mul(s2.mul(d0))).max(a12.mul(s2.mul(d1))).max(a22.mul(s2.mul(d2)));
        m3 = m3.max(a03.mul(s3.mul(d0))).max(a13.mul(s3.mul(d1))).max(a23.mul(s3.mul(d2)));
      }
      m0.intoArray(runMax, block);
      m1.intoArray(runMax, block + V);
      m2.intoArray(runMax, block + 2 * V);
      m3.intoArray(runMax, block + 3 * V);
    }

    /** As {@link #fourVectorBlockScaled}, 2 tokens a step: 13 vectors in the loop, for 16 registers. */
    private void fourVectorBlockOfPairsScaled(float[] q, float[] qs, int pad, int block, int from, int to) {
      float[] d = docs;
      int base = docBase;
      float[] ds = docScale;
      int dim = this.dim;
      int last = to - 1;
      FloatVector s0 = FloatVector.fromArray(S, qs, block);
      FloatVector s1 = FloatVector.fromArray(S, qs, block + V);
      FloatVector s2 = FloatVector.fromArray(S, qs, block + 2 * V);
      FloatVector s3 = FloatVector.fromArray(S, qs, block + 3 * V);
      FloatVector m0 = FloatVector.fromArray(S, runMax, block);
      FloatVector m1 = FloatVector.fromArray(S, runMax, block + V);
      FloatVector m2 = FloatVector.fromArray(S, runMax, block + 2 * V);
      FloatVector m3 = FloatVector.fromArray(S, runMax, block + 3 * V);
      for (int t = from; t < to; t += 2) {
        int t1 = Math.min(t + 1, last);
        int o0 = base + t * dim;
        int o1 = base + t1 * dim;
        FloatVector a00 = FloatVector.zero(S);
        FloatVector a01 = FloatVector.zero(S);
        FloatVector a02 = FloatVector.zero(S);
        FloatVector a03 = FloatVector.zero(S);
        FloatVector a10 = FloatVector.zero(S);
        FloatVector a11 = FloatVector.zero(S);
        FloatVector a12 = FloatVector.zero(S);
        FloatVector a13 = FloatVector.zero(S);
        for (int k = 0, qo = block; k < dim; k++, qo += pad) {
          FloatVector q0 = FloatVector.fromArray(S, q, qo);
          FloatVector q1 = FloatVector.fromArray(S, q, qo + V);
          FloatVector q2 = FloatVector.fromArray(S, q, qo + 2 * V);
          FloatVector q3 = FloatVector.fromArray(S, q, qo + 3 * V);
          FloatVector b0 = FloatVector.broadcast(S, d[o0 + k]);
          a00 = q0.fma(b0, a00);
          a01 = q1.fma(b0, a01);
          a02 = q2.fma(b0, a02);
          a03 = q3.fma(b0, a03);
          FloatVector b1 = FloatVector.broadcast(S, d[o1 + k]);
          a10 = q0.fma(b1, a10);
          a11 = q1.fma(b1, a11);
          a12 = q2.fma(b1, a12);
          a13 = q3.fma(b1, a13);
        }
        float d0 = ds[t];
        float d1 = ds[t1];
        m0 = m0.max(a00.mul(s0.mul(d0))).max(a10.mul(s0.mul(d1)));
        m1 = m1.max(a01.mul(s1.mul(d0))).max(a11.mul(s1.mul(d1)));
        m2 = m2.max(a02.mul(s2.mul(d0))).max(a12.mul(s2.mul(d1)));
        m3 = m3.max(a03.mul(s3.mul(d0))).max(a13.mul(s3.mul(d1)));
      }
      m0.intoArray(runMax, block);
      m1.intoArray(runMax, block + V);
      m2.intoArray(runMax, block + 2 * V);
      m3.intoArray(runMax, block + 3 * V);
    }

    /**
     * As {@link #twoVectorBlock}, each dot product multiplied by query scale x document scale first: a copy, not
     * a flag, because a vector that may be null (or merged from two paths) is boxed, which the fp32 path would pay.
     */
    private void twoVectorBlockScaled(float[] q, float[] qs, int pad, int block, int from, int to, boolean track) {
      float[] d = docs;
      int base = docBase;
      float[] ds = docScale;
      int dim = this.dim;
      int last = to - 1;
      FloatVector s0 = FloatVector.fromArray(S, qs, block);
      FloatVector s1 = FloatVector.fromArray(S, qs, block + V);
      FloatVector m0 = FloatVector.fromArray(S, runMax, block);
      FloatVector m1 = FloatVector.fromArray(S, runMax, block + V);
      FloatVector i0 = track ? FloatVector.fromArray(S, runArg, block) : null;
      FloatVector i1 = track ? FloatVector.fromArray(S, runArg, block + V) : null;
      for (int t = from; t < to; t += 6) {
        int o0 = base + t * dim;
        int o1 = base + Math.min(t + 1, last) * dim;
        int o2 = base + Math.min(t + 2, last) * dim;
        int o3 = base + Math.min(t + 3, last) * dim;
        int o4 = base + Math.min(t + 4, last) * dim;
        int o5 = base + Math.min(t + 5, last) * dim;
        FloatVector a00 = FloatVector.zero(S);
        FloatVector a01 = FloatVector.zero(S);
        FloatVector a10 = FloatVector.zero(S);
        FloatVector a11 = FloatVector.zero(S);
        FloatVector a20 = FloatVector.zero(S);
        FloatVector a21 = FloatVector.zero(S);
        FloatVector a30 = FloatVector.zero(S);
        FloatVector a31 = FloatVector.zero(S);
        FloatVector a40 = FloatVector.zero(S);
        FloatVector a41 = FloatVector.zero(S);
        FloatVector a50 = FloatVector.zero(S);
        FloatVector a51 = FloatVector.zero(S);
        for (int k = 0, qo = block; k < dim; k++, qo += pad) {
          FloatVector q0 = FloatVector.fromArray(S, q, qo);
          FloatVector q1 = FloatVector.fromArray(S, q, qo + V);
          FloatVector b0 = FloatVector.broadcast(S, d[o0 + k]);
          a00 = q0.fma(b0, a00);
          a01 = q1.fma(b0, a01);
          FloatVector b1 = FloatVector.broadcast(S, d[o1 + k]);
          a10 = q0.fma(b1, a10);
          a11 = q1.fma(b1, a11);
          FloatVector b2 = FloatVector.broadcast(S, d[o2 + k]);
          a20 = q0.fma(b2, a20);
          a21 = q1.fma(b2, a21);
          FloatVector b3 = FloatVector.broadcast(S, d[o3 + k]);
          a30 = q0.fma(b3, a30);
          a31 = q1.fma(b3, a31);
          FloatVector b4 = FloatVector.broadcast(S, d[o4 + k]);
          a40 = q0.fma(b4, a40);
          a41 = q1.fma(b4, a41);
          FloatVector b5 = FloatVector.broadcast(S, d[o5 + k]);
          a50 = q0.fma(b5, a50);
          a51 = q1.fma(b5, a51);
        }
        {
          float d0 = ds[t];
          float d1 = ds[Math.min(t + 1, last)];
          float d2 = ds[Math.min(t + 2, last)];
          float d3 = ds[Math.min(t + 3, last)];
          float d4 = ds[Math.min(t + 4, last)];
          float d5 = ds[Math.min(t + 5, last)];
          a00 = a00.mul(s0.mul(d0));
          a01 = a01.mul(s1.mul(d0));
          a10 = a10.mul(s0.mul(d1));
          a11 = a11.mul(s1.mul(d1));
          a20 = a20.mul(s0.mul(d2));
          a21 = a21.mul(s1.mul(d2));
          a30 = a30.mul(s0.mul(d3));
          a31 = a31.mul(s1.mul(d3));
          a40 = a40.mul(s0.mul(d4));
          a41 = a41.mul(s1.mul(d4));
          a50 = a50.mul(s0.mul(d5));
          a51 = a51.mul(s1.mul(d5));
        }
        if (!track) {
          m0 = m0.max(a00).max(a10).max(a20).max(a30).max(a40).max(a50);
          m1 = m1.max(a01).max(a11).max(a21).max(a31).max(a41).max(a51);
        } else {
          // in token order, strict >: the lowest slot wins a tie
          FloatVector tv0 = FloatVector.broadcast(S, t);
          i0 = i0.blend(tv0, a00.compare(VectorOperators.GT, m0));
          m0 = m0.max(a00);
          i1 = i1.blend(tv0, a01.compare(VectorOperators.GT, m1));
          m1 = m1.max(a01);
          FloatVector tv1 = FloatVector.broadcast(S, Math.min(t + 1, last));
          i0 = i0.blend(tv1, a10.compare(VectorOperators.GT, m0));
          m0 = m0.max(a10);
          i1 = i1.blend(tv1, a11.compare(VectorOperators.GT, m1));
          m1 = m1.max(a11);
          FloatVector tv2 = FloatVector.broadcast(S, Math.min(t + 2, last));
          i0 = i0.blend(tv2, a20.compare(VectorOperators.GT, m0));
          m0 = m0.max(a20);
          i1 = i1.blend(tv2, a21.compare(VectorOperators.GT, m1));
          m1 = m1.max(a21);
          FloatVector tv3 = FloatVector.broadcast(S, Math.min(t + 3, last));
          i0 = i0.blend(tv3, a30.compare(VectorOperators.GT, m0));
          m0 = m0.max(a30);
          i1 = i1.blend(tv3, a31.compare(VectorOperators.GT, m1));
          m1 = m1.max(a31);
          FloatVector tv4 = FloatVector.broadcast(S, Math.min(t + 4, last));
          i0 = i0.blend(tv4, a40.compare(VectorOperators.GT, m0));
          m0 = m0.max(a40);
          i1 = i1.blend(tv4, a41.compare(VectorOperators.GT, m1));
          m1 = m1.max(a41);
          FloatVector tv5 = FloatVector.broadcast(S, Math.min(t + 5, last));
          i0 = i0.blend(tv5, a50.compare(VectorOperators.GT, m0));
          m0 = m0.max(a50);
          i1 = i1.blend(tv5, a51.compare(VectorOperators.GT, m1));
          m1 = m1.max(a51);
        }
      }
      m0.intoArray(runMax, block);
      m1.intoArray(runMax, block + V);
      if (track) {
        i0.intoArray(runArg, block);
        i1.intoArray(runArg, block + V);
      }
    }

    /** As {@link #oneVectorBlock}, each dot product multiplied by its scales first. */
    private void oneVectorBlockScaled(float[] q, float[] qs, int pad, int block, int from, int to, boolean track) {
      float[] d = docs;
      int base = docBase;
      float[] ds = docScale;
      int dim = this.dim;
      int last = to - 1;
      FloatVector s0 = FloatVector.fromArray(S, qs, block);
      FloatVector m = FloatVector.fromArray(S, runMax, block);
      FloatVector idx = track ? FloatVector.fromArray(S, runArg, block) : null;
      for (int t = from; t < to; t += 4) {
        int o0 = base + t * dim;
        int o1 = base + Math.min(t + 1, last) * dim;
        int o2 = base + Math.min(t + 2, last) * dim;
        int o3 = base + Math.min(t + 3, last) * dim;
        FloatVector a0 = FloatVector.zero(S);
        FloatVector a1 = FloatVector.zero(S);
        FloatVector a2 = FloatVector.zero(S);
        FloatVector a3 = FloatVector.zero(S);
        for (int k = 0, qo = block; k < dim; k++, qo += pad) {
          FloatVector q0 = FloatVector.fromArray(S, q, qo);
          a0 = q0.fma(FloatVector.broadcast(S, d[o0 + k]), a0);
          a1 = q0.fma(FloatVector.broadcast(S, d[o1 + k]), a1);
          a2 = q0.fma(FloatVector.broadcast(S, d[o2 + k]), a2);
          a3 = q0.fma(FloatVector.broadcast(S, d[o3 + k]), a3);
        }
        {
          a0 = a0.mul(s0.mul(ds[t]));
          a1 = a1.mul(s0.mul(ds[Math.min(t + 1, last)]));
          a2 = a2.mul(s0.mul(ds[Math.min(t + 2, last)]));
          a3 = a3.mul(s0.mul(ds[Math.min(t + 3, last)]));
        }
        if (!track) {
          m = m.max(a0).max(a1).max(a2).max(a3);
        } else {
          VectorMask<Float> gt = a0.compare(VectorOperators.GT, m);
          idx = idx.blend(FloatVector.broadcast(S, t), gt);
          m = m.max(a0);
          gt = a1.compare(VectorOperators.GT, m);
          idx = idx.blend(FloatVector.broadcast(S, Math.min(t + 1, last)), gt);
          m = m.max(a1);
          gt = a2.compare(VectorOperators.GT, m);
          idx = idx.blend(FloatVector.broadcast(S, Math.min(t + 2, last)), gt);
          m = m.max(a2);
          gt = a3.compare(VectorOperators.GT, m);
          idx = idx.blend(FloatVector.broadcast(S, Math.min(t + 3, last)), gt);
          m = m.max(a3);
        }
      }
      m.intoArray(runMax, block);
      if (track) {
        idx.intoArray(runArg, block);
      }
    }

    /**
     * The running max of every query lane over the whole document, one pair at a time, for a query and document
     * whose fp32 scale product may overflow or not be normal ({@link ScaleRange}): such products are taken in float64
     * ({@link #value}), and a zero dot product stays 0, not infinity x 0. Such scales are rare, so this plain loop
     * (same max, NaN and argmax rules as the blocks) serves them; the blocks keep no per-pair test.
     */
    private void scoreScalesOutOfRange(float[] q, float[] qs, int pad, int valid) {
      for (int j = 0; j < valid; j++) {
        float max = Float.NEGATIVE_INFINITY;
        int arg = 0;
        for (int t = 0; t < docTokens; t++) {
          float x = value(q, qs, pad, j, t);
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

  /** Entry point for {@link CpuBackends}, found reflectively so this class loads only with the module. */
  static PairKernel create() {
    return new VectorKernel();
  }
}
