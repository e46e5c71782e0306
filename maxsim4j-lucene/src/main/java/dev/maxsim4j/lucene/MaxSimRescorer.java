package dev.maxsim4j.lucene;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.PoolTasks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DocValuesType;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Rescorer;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.util.ArrayUtil;
import org.apache.lucene.util.BytesRef;

/**
 * A drop-in replacement for Lucene's {@code LateInteractionRescorer}: rescores first-pass hits by the
 * late-interaction similarity of their {@code LateInteractionField} to the query's token vectors, scored by fused
 * MaxSim calls: the whole candidate set in one call on the GPU, blocks of 64 hits scored in parallel on the CPU (a
 * block's gathered tokens bounded by the heap: past an eighth of it, shared among the threads, it takes more calls).
 *
 * <pre>{@code
 * TopDocs firstPass = searcher.search(query, 1000);
 * TopDocs reranked = MaxSimRescorer.create("colbert", queryVectors, VectorSimilarityFunction.DOT_PRODUCT)
 *     .rescore(searcher, firstPass, 10);
 * }</pre>
 *
 * <p>Scores. With {@link Scale#LUCENE} (the default) a document scores what Lucene's {@code SUM_MAX_SIM} gives for
 * {@code DOT_PRODUCT} (unit-length token vectors, as that function requires) or {@code COSINE}: the sum over query
 * tokens of {@code (1 + best similarity) / 2}, computed here as {@code (n + S) / 2} from the raw MaxSim sum {@code
 * S} of {@code n} query tokens (from the halved query's {@code S / 2} where {@code S} passes fp32's range, so
 * that it stays finite where Lucene's sum of halves does; where one token's dot product itself passes that range,
 * Lucene reports infinity and this the finite value), equal to Lucene's within float rounding, same order (two sums
 * a rounding apart can report one value, and then rank by doc id, as in Lucene; {@link Scale#RAW} keeps the
 * library's order); a stored
 * value of no token scores {@code Float.MIN_VALUE}, as in Lucene. With {@link Scale#RAW} a document scores {@code
 * S} itself (maxsim4j's contract: -1e9 for a value of no token). Documents without the field score 0, or keep their
 * first-pass score ({@link #withFallbackToFirstPassScore}), as in Lucene. Hits are ordered as {@link dev.maxsim4j.TopK}
 * orders them: higher scores first, equal scores by the lower doc id, and a NaN score (NaN in a valid token of the
 * query or of a float field's document, neither of them empty) above every other, so that the order is total and the
 * same on every run. A compressed field's e4m3 NaN code or non-finite scale, which its encoder never writes, is
 * refused, naming the document and the token.
 *
 * <p>Lucene's own scorer differs from the raw sum in two places (see {@code docs/integrations.md}): it
 * clamps each query token's best similarity at {@code Float.MIN_VALUE} (its running max starts there), and it
 * scales similarities into [0, 1]. Neither changes the order for unit vectors.
 *
 * <p>Compressed fields. {@link #createQuantized} rescores a {@link QuantizedLateInteractionField} (int8, fp8 or
 * one bit per dimension, with per-token scales): the stored bytes are gathered and scored as they are, never
 * expanded to floats in memory, and each document scores MaxSim on its dequantized vectors, each product exact and
 * the sums in fp32 (a field's values may differ in type from document to document: each type is scored in its own
 * call). Its similarity is DOT_PRODUCT (index quantized unit vectors); {@link #withQueryType} compresses the query
 * too.
 */
public final class MaxSimRescorer extends Rescorer {

  /** How a document's value is reported. */
  public enum Scale {
    /** Lucene's SUM_MAX_SIM value for DOT_PRODUCT / COSINE: {@code (n + S) / 2}. */
    LUCENE,
    /** The raw MaxSim sum of best dot products (cosines for COSINE). */
    RAW
  }

  private final String field;
  private final float[][] queryVectors;
  private final TokenBatch query;
  /** The query halved, for Lucene's scale of documents whose raw sum passes fp32's range; null for the raw scale. */
  private final TokenBatch halvedQuery;
  private final VectorSimilarityFunction similarity;
  private final Scale scale;
  private final boolean fallbackToFirstPass;
  private final MaxSim maxSim;
  /** Whether the field holds QuantizedLateInteractionField values rather than LateInteractionField ones. */
  private final boolean quantized;
  /** The query's stored type: FLOAT32, or a quantized type ({@link #withQueryType}). */
  private final DType queryType;
  /** How the hits are cut into fused calls. */
  private final Blocking blocking;
  /**
   * Hits per gathered and scored block on the CPU. On the GPU the whole candidate set is one block: one
   * fused call, one launch, where a call's fixed cost matters more than overlapping the gathering with it (more
   * calls only where its tokens pass what one Java array holds).
   */
  private static final int CPU_BLOCK = 64;
  /**
   * Idle gathering buffers, grown to the largest blocks they served and reused, of float and of quantized fields: at
   * most RETAINED_BYTES each for all threads together. A larger one (a GPU block of many long candidates) is left to
   * the collector.
   */
  static final long RETAINED_BYTES = 64L << 20;
  private static final IdleBuffers BUFFERS = new IdleBuffers(RETAINED_BYTES);
  private static final IdleBuffers QUANTIZED_BUFFERS = new IdleBuffers(RETAINED_BYTES);

  /** The idle gathering buffers of float fields, or of quantized ones. */
  static IdleBuffers idleBuffers(boolean quantized) {
    return quantized ? QUANTIZED_BUFFERS : BUFFERS;
  }

  private MaxSimRescorer(String field, float[][] queryVectors, VectorSimilarityFunction similarity, Scale scale,
      boolean fallbackToFirstPass, MaxSim maxSim, boolean quantized) {
    this(field, queryVectors, similarity, scale, fallbackToFirstPass, maxSim, Blocking.DEFAULT, quantized,
        DType.FLOAT32);
  }

  /**
   * Hits per block when {@code hits} > 0 (tests: the GPU's one block on the CPU), and the most entries a gathering
   * buffer's array takes: a value that would pass it has what the buffer holds scored first (tests: a small one).
   */
  record Blocking(int hits, int entries) {
    static final Blocking DEFAULT = new Blocking(0, Capacity.MAX_ARRAY);
  }

  private MaxSimRescorer(String field, float[][] queryVectors, VectorSimilarityFunction similarity, Scale scale,
      boolean fallbackToFirstPass, MaxSim maxSim, Blocking blocking, boolean quantized, DType queryType) {
    this.blocking = blocking;
    this.quantized = quantized;
    this.queryType = Arguments.nonNull(queryType, "queryType");
    this.field = Arguments.nonNull(field, "field");
    this.similarity = Arguments.nonNull(similarity, "similarity");
    this.scale = Arguments.nonNull(scale, "scale");
    this.maxSim = Arguments.nonNull(maxSim, "maxSim");
    if (similarity != VectorSimilarityFunction.DOT_PRODUCT && similarity != VectorSimilarityFunction.COSINE) {
      throw new IllegalArgumentException("similarity = " + similarity
          + "; expected DOT_PRODUCT or COSINE (MaxSim sums best dot products; EUCLIDEAN and MAXIMUM_INNER_PRODUCT"
          + " scale each token's similarity non-linearly)");
    }
    if (quantized && similarity != VectorSimilarityFunction.DOT_PRODUCT) {
      throw new IllegalArgumentException("similarity = " + similarity + " for quantized field " + field
          + "; expected DOT_PRODUCT (normalising would expand the stored tokens: index quantized unit vectors)");
    }
    // a copy, read once, then checked and used: derived rescorers (withQueryType, withFallbackToFirstPassScore) rebuild
    // the query from it, and a caller that refills its array for the next query would otherwise change what they score
    this.queryVectors = checkQuery(Arguments.copyRows(queryVectors));
    if (queryType != DType.FLOAT32) {
      // checked on the given values: quantize would name a "stored token", and COSINE turns an infinity into NaN
      Arguments.requireFinite(this.queryVectors, "queryVectors", "quantize the query to " + queryType);
    }
    TokenBatch q = TokenBatch.of(new float[][][] {this.queryVectors});
    q = similarity == VectorSimilarityFunction.COSINE ? q.l2Normalized() : q;
    this.query = queryType == DType.FLOAT32 ? q : q.quantize(queryType);
    TokenBatch half = scale == Scale.LUCENE ? LuceneScale.halved(q) : null;
    this.halvedQuery = half == null || queryType == DType.FLOAT32 ? half : half.quantize(queryType);
    this.fallbackToFirstPass = fallbackToFirstPass;
  }

  /** Lucene-scaled scores, documents without the field score 0; scored by a JVM-wide default MaxSim. */
  public static MaxSimRescorer create(String field, float[][] queryVectors, VectorSimilarityFunction similarity) {
    return new MaxSimRescorer(field, queryVectors, similarity, Scale.LUCENE, false, DefaultMaxSim.get(), false);
  }

  /** As {@link #create(String, float[][], VectorSimilarityFunction)} on the given instance and scale. */
  public static MaxSimRescorer create(String field, float[][] queryVectors, VectorSimilarityFunction similarity,
      Scale scale, MaxSim maxSim) {
    return new MaxSimRescorer(field, queryVectors, similarity, scale, false, maxSim, false);
  }

  /**
   * Rescores by a {@link QuantizedLateInteractionField} (DOT_PRODUCT): Lucene-scaled scores, documents without
   * the field score 0; scored by a JVM-wide default MaxSim.
   */
  public static MaxSimRescorer createQuantized(String field, float[][] queryVectors) {
    return createQuantized(field, queryVectors, Scale.LUCENE, DefaultMaxSim.get());
  }

  /** As {@link #createQuantized(String, float[][])} on the given instance and scale. */
  public static MaxSimRescorer createQuantized(String field, float[][] queryVectors, Scale scale, MaxSim maxSim) {
    return new MaxSimRescorer(field, queryVectors, VectorSimilarityFunction.DOT_PRODUCT, scale, false, maxSim, true);
  }

  /** This rescorer, reporting values on {@code scale} (e.g. {@link Scale#RAW}, the library's sums). */
  public MaxSimRescorer withScale(Scale scale) {
    Arguments.nonNull(scale, "scale");
    return new MaxSimRescorer(field, queryVectors, similarity, scale, fallbackToFirstPass, maxSim, blocking,
        quantized, queryType);
  }

  /**
   * This rescorer, but documents without the field keep their first-pass score; one whose first-pass score is NaN
   * (a first pass sorted by a field) is refused, naming it.
   */
  public MaxSimRescorer withFallbackToFirstPassScore() {
    return new MaxSimRescorer(field, queryVectors, similarity, scale, true, maxSim, blocking, quantized,
        queryType);
  }

  /**
   * This rescorer with the query quantized to {@code type} as {@link TokenBatch#quantize} does (FLOAT32: as
   * given); documents then score MaxSim against the dequantized query, e.g. 1-bit against 1-bit documents.
   */
  public MaxSimRescorer withQueryType(DType type) {
    Arguments.nonNull(type, "type");
    if (type != DType.FLOAT32 && !type.isQuantized()) {
      throw new IllegalArgumentException("type is " + type + "; expected FLOAT32, INT8, FLOAT8_E4M3 or BINARY");
    }
    return new MaxSimRescorer(field, queryVectors, similarity, scale, fallbackToFirstPass, maxSim, blocking,
        quantized, type);
  }

  /** This rescorer with {@code hits} per block (tests). */
  MaxSimRescorer withBlockSize(int hits) {
    return new MaxSimRescorer(field, queryVectors, similarity, scale, fallbackToFirstPass, maxSim,
        new Blocking(hits, blocking.entries()), quantized, queryType);
  }

  /** This rescorer with gathering buffers of at most {@code entries} an array (tests). */
  MaxSimRescorer withGatherLimit(int entries) {
    return new MaxSimRescorer(field, queryVectors, similarity, scale, fallbackToFirstPass, maxSim,
        new Blocking(blocking.hits(), entries), quantized, queryType);
  }

  /**
   * The library's ranking (TopK's): Float.compare's order of scores, highest first (NaN above every number, +0
   * above -0), ties to the lower doc id. A total order, unlike ScoreDoc.COMPARATOR, which NaN breaks (a sort that
   * throws, or a wrong top n).
   */
  static final Comparator<ScoreDoc> RANKING = (a, b) -> {
    int byScore = Float.compare(b.score, a.score);
    return byScore != 0 ? byScore : Integer.compare(a.doc, b.doc);
  };

  @Override
  public TopDocs rescore(IndexSearcher searcher, TopDocs firstPassTopDocs, int topN) throws IOException {
    Arguments.nonNull(searcher, "searcher");
    Arguments.nonNull(firstPassTopDocs, "firstPassTopDocs");
    Arguments.nonNull(firstPassTopDocs.scoreDocs, "firstPassTopDocs.scoreDocs");
    if (topN < 0) {
      throw new IllegalArgumentException("topN = " + topN + "; expected >= 0");
    }
    // new ScoreDoc objects: the caller's first pass is left as it was (Lucene's rescorer overwrites its scores)
    ScoreDoc[] hits = new ScoreDoc[firstPassTopDocs.scoreDocs.length];
    for (int i = 0; i < hits.length; i++) {
      ScoreDoc h = firstPassTopDocs.scoreDocs[i];
      if (h == null) {
        throw new IllegalArgumentException("firstPassTopDocs.scoreDocs[" + i + "] is null; expected a hit");
      }
      if (h.doc < 0) {
        throw new IllegalArgumentException("firstPassTopDocs.scoreDocs[" + i + "].doc = " + h.doc
            + "; expected a document of this searcher (0 or more)");
      }
      hits[i] = new ScoreDoc(h.doc, h.score, h.shardIndex);
    }
    Arrays.sort(hits, (a, b) -> Integer.compare(a.doc, b.doc));
    // on the CPU, blocks of CPU_BLOCK hits (doc order) are gathered and scored in parallel: each block reads
    // its leaves' doc values forward with its own iterators into a reused per-thread buffer, then scores in
    // one fused call, so gathering (copying the stored tokens) overlaps scoring, faster than one gather and one call
    // (docs/benchmarks.md). At most maxSim.threads() strands take the blocks, so a MaxSim built with threads(n) is
    // not outnumbered by the common pool's threads.
    List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
    int block = blockSize(hits.length);
    int blocks = (hits.length + block - 1) / block;
    rescoreInStrands(leaves, hits, block, blocks, gatherBudget(Math.min(blocks, maxSim.threads())));
    if (topN < hits.length) {
      ArrayUtil.select(hits, 0, hits.length, topN, RANKING);
      hits = Arrays.copyOf(hits, topN);
    }
    Arrays.sort(hits, RANKING);
    return new TopDocs(firstPassTopDocs.totalHits, hits);
  }

  /**
   * Blocks {@code [0, blocks)} of {@code block} hits on at most {@code maxSim.threads()} threads, the caller's among
   * them ({@link PoolTasks}): a failure stops the blocks not yet begun and is thrown once every block under way has
   * ended, so that nothing reads the searcher or scores with the {@code MaxSim} after this returns (the caller may
   * close them).
   */
  private void rescoreInStrands(List<LeafReaderContext> leaves, ScoreDoc[] hits, int block, int blocks, long budget)
      throws IOException {
    try {
      PoolTasks.forEach(blocks, maxSim.threads(), b -> {
        try {
          rescoreBlock(leaves, hits, b * block, Math.min(hits.length, (b + 1) * block), budget);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /**
   * The bytes each of {@code strands} gathering buffers may fill before what it holds is scored: an eighth of the
   * heap shared among them, since a buffer grows by doubling (the old array beside the new) and the doc values read
   * and the idle buffers kept take their part (1 MiB at least). Lucene's own rescorer reads one value at a time, so
   * long candidates on a small heap must not fail here where they pass there.
   */
  private static long gatherBudget(int strands) {
    return Math.max(1L << 20, Runtime.getRuntime().maxMemory() / (8L * Math.max(1, strands)));
  }

  /** Hits per block: all of them on the GPU, {@value #CPU_BLOCK} on the CPU (or {@link Blocking#hits}). */
  int blockSize(int hits) {
    if (blocking.hits() > 0) {
      return blocking.hits();
    }
    return "cuda".equals(maxSim.backendName()) ? Math.max(1, hits) : CPU_BLOCK;
  }

  /**
   * Gathers hits [from, to) (sorted by doc) and sets their scores: the rescored value, or the fallback. Values of
   * a quantized field may differ in type from document to document; each type met is gathered into a buffer of
   * its own and scored in its own call, so a document scores the same whatever else its block holds.
   */
  private void rescoreBlock(List<LeafReaderContext> leaves, ScoreDoc[] hits, int from, int to, long budget)
      throws IOException {
    IdleBuffers idle = idleBuffers(quantized);
    Map<DType, Gathered> byType = new EnumMap<>(DType.class);
    try {
      int leaf = -1;
      int leafEnd = 0;
      BinaryDocValues values = null;
      for (int h = from; h < to; h++) {
        ScoreDoc hit = hits[h];
        if (hit.doc >= leafEnd) {
          do {
            if (++leaf == leaves.size()) {
              throw new IllegalArgumentException("hit doc " + hit.doc + " is past the searcher's last document ("
                  + leafEnd + "); expected firstPassTopDocs from this searcher");
            }
            leafEnd = leaves.get(leaf).docBase + leaves.get(leaf).reader().maxDoc();
          } while (hit.doc >= leafEnd);
          values = binaryValues(leaves.get(leaf).reader(), field); // null: no document of the leaf has it
        }
        if (values != null && values.advanceExact(hit.doc - leaves.get(leaf).docBase)) {
          BytesRef value = values.binaryValue();
          DType type = quantized ? QuantizedLateInteractionField.statedType(value) : DType.FLOAT32;
          if (type == null) { // not a quantized value: the header check says what it is
            type = QuantizedLateInteractionField.header(value, "field " + field + " of doc " + hit.doc).type();
          }
          Gathered group = byType.get(type);
          if (group == null) {
            group = new Gathered(take(idle), new ScoreDoc[to - from]);
            byType.put(type, group);
          } else if (!group.tokens.fits(value, blocking.entries())
              || group.tokens.rows() > 0 && group.tokens.usedBytes() + value.length > budget) {
            // a block past what one array holds or the heap spares (the GPU's: every hit) takes several calls
            scoreGathered(group);
          }
          group.hits[group.tokens.rows()] = hit;
          group.tokens.add(value, hit.doc);
        } else if (!fallbackToFirstPass) {
          hit.score = 0f;
        } else {
          requireFallback(hit.doc, hit.score);
        }
      }
      for (Gathered group : byType.values()) {
        scoreGathered(group);
      }
    } finally {
      for (Gathered group : byType.values()) {
        idle.giveBack(group.tokens);
      }
    }
  }

  /** Sets the scores of the hits {@code group} holds, in one fused call, and empties it for the block's next ones. */
  private void scoreGathered(Gathered group) {
    float[] rescored = score(group.tokens.batch());
    for (int i = 0; i < rescored.length; i++) {
      group.hits[i].score = rescored[i];
    }
    group.tokens.reset(field, query.dim());
  }

  /** One type's gathered values of a block and their hits, in gathering order. */
  private record Gathered(StoredTokens tokens, ScoreDoc[] hits) {}

  /** An idle buffer, reset for this field, or a new one; the caller gives it back to {@code idle} when done. */
  private StoredTokens take(IdleBuffers idle) {
    StoredTokens buffer = idle.take();
    if (buffer == null) {
      buffer = quantized ? new QuantizedTokenBytes() : new LateInteractionBytes();
    }
    return buffer.reset(field, query.dim());
  }

  /**
   * {@code firstPass}, the score document {@code doc} without the field keeps: a NaN, which would rank above every
   * rescored hit, is refused (a first pass sorted by a field has no scores).
   */
  private float requireFallback(int doc, float firstPass) {
    if (Float.isNaN(firstPass)) {
      throw new IllegalArgumentException("doc " + doc + " has no " + field + " value, and its first-pass score to"
          + " fall back to is NaN (a search sorted by a field leaves its hits' scores NaN); expected scored first-pass"
          + " hits, or a rescorer without withFallbackToFirstPassScore");
    }
    return firstPass;
  }

  /** The reported value of each row of {@code documents} (one fused call). */
  private float[] score(TokenBatch documents) {
    TokenBatch d = similarity == VectorSimilarityFunction.COSINE ? documents.l2Normalized() : documents;
    float[] sums = maxSim.scores(query, d)[0];
    if (scale == Scale.LUCENE) {
      int n = queryVectors.length;
      float[] halves = null;
      for (int i = 0; i < sums.length; i++) {
        // a value of no token scores -1e9 raw: Lucene's SUM_MAX_SIM gives such a document Float.MIN_VALUE, not
        // (n - 1e9) / 2, which would rank it below documents without the field
        if (documents.validTokens(i) == 0) {
          sums[i] = Float.MIN_VALUE;
        } else if (LuceneScale.needsHalved(sums[i])) {
          halves = halves == null ? maxSim.scores(halvedQuery, d)[0] : halves;
          sums[i] = LuceneScale.valueOfHalved(n, halves[i]);
        } else {
          sums[i] = LuceneScale.value(n, sums[i]);
        }
      }
    }
    return sums;
  }

  @Override
  public Explanation explain(IndexSearcher searcher, Explanation firstPassExplanation, int docID)
      throws IOException {
    Arguments.nonNull(searcher, "searcher");
    Arguments.nonNull(firstPassExplanation, "firstPassExplanation");
    List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
    if (docID < 0 || docID >= searcher.getIndexReader().maxDoc()) {
      throw new IllegalArgumentException("docID = " + docID + "; not in any leaf of the searcher (maxDoc "
          + searcher.getIndexReader().maxDoc() + ")");
    }
    LeafReaderContext ctx = leaves.get(ReaderUtil.subIndex(docID, leaves));
    BinaryDocValues values = binaryValues(ctx.reader(), field);
    Explanation first = Explanation.match(firstPassExplanation.getValue(), "first pass score", firstPassExplanation);
    if (values == null || !values.advanceExact(docID - ctx.docBase)) {
      float score = fallbackToFirstPass ? requireFallback(docID, first.getValue().floatValue()) : 0f;
      return Explanation.match(score, "no " + field + " value: " + (fallbackToFirstPass ? "first pass score" : "0"),
          first);
    }
    StoredTokens tokens = (quantized ? new QuantizedTokenBytes() : new LateInteractionBytes())
        .reset(field, query.dim());
    tokens.add(values.binaryValue(), docID);
    float value = score(tokens.batch())[0];
    return Explanation.match(value, "MaxSim (" + similarity + ", " + scale + " scale) of " + queryVectors.length
        + " query token vectors against field " + field + " (maxsim4j, " + maxSim.backendName() + ")", first);
  }

  /**
   * The leaf's binary doc values of {@code field}, null where no document of the leaf has the field. A field the
   * leaf holds as anything else (a text field of that name, numeric or sorted doc values) is refused: Lucene
   * returns null for it, and read as absent it would score every document 0, or drop them all from a retriever's
   * candidates.
   */
  static BinaryDocValues binaryValues(LeafReader reader, String field) throws IOException {
    BinaryDocValues values = reader.getBinaryDocValues(field);
    FieldInfo info = reader.getFieldInfos().fieldInfo(field);
    if (values == null && info != null && info.getDocValuesType() != DocValuesType.BINARY) {
      throw new IllegalArgumentException("field " + field + " of segment " + reader + " has "
          + (info.getDocValuesType() == DocValuesType.NONE ? "no doc values (it is indexed as another kind of field)"
              : info.getDocValuesType() + " doc values")
          + "; expected the binary doc values of late-interaction token vectors");
    }
    return values;
  }

  private static float[][] checkQuery(float[][] queryVectors) {
    if (queryVectors == null || queryVectors.length == 0) {
      throw new IllegalArgumentException("queryVectors is " + (queryVectors == null ? "null" : "empty")
          + "; expected [Lq][dim] with Lq >= 1");
    }
    int dim = queryVectors[0] == null ? 0 : queryVectors[0].length;
    for (int i = 0; i < queryVectors.length; i++) {
      if (queryVectors[i] == null || queryVectors[i].length != dim || dim == 0) {
        throw new IllegalArgumentException("queryVectors[" + i + "] " + (queryVectors[i] == null ? "is null"
            : "has length " + queryVectors[i].length) + "; expected every token of dim " + dim + " >= 1");
      }
    }
    return queryVectors;
  }

  @Override
  public String toString() {
    return "MaxSimRescorer(field=" + field + (quantized ? " (quantized)" : "") + ", similarity=" + similarity
        + ", scale=" + scale + ", queryTokens=" + queryVectors.length + ", queryType=" + queryType
        + ", fallbackToFirstPass=" + fallbackToFirstPass + ")";
  }
}
