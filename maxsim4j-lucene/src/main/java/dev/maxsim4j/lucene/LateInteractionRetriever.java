package dev.maxsim4j.lucene;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.lucene.codecs.Codec;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.VectorEncoding;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.FieldExistsQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;

/**
 * Late-interaction retrieval in a Lucene index: candidates by HNSW on each document's MUVERA encoding
 * ({@link FixedDimensionalEncoder}), then exact MaxSim over the candidates' token vectors.
 *
 * <p>A document carries two fields ({@link #documentFields}): its encoding in a {@link KnnFloatVectorField}
 * (maximum inner product, the similarity encodings approximate MaxSim with) and its token vectors in a
 * {@link LateInteractionField}. {@link #search} encodes the query, takes the {@code candidates} nearest
 * encodings (optionally together with the best hits of a lexical query) and reranks them with
 * {@link MaxSimRescorer}; scores are raw MaxSim sums. Both fields are ordinary Lucene fields, so the same
 * documents shard across a cluster as any Lucene index does (each shard returns its reranked top k; the
 * coordinator merges by score). The encoding field of {@link #documentFields} records its encoder in each
 * segment, and {@link #search} refuses a segment written by another encoder of the same dimension, or merged from
 * segments of several. The record is per segment, as Lucene keeps field attributes: one writer adding documents of
 * two encoders into one segment keeps the first one's record, which the check cannot see past.
 *
 * <p>Encodings wider than Lucene's 1,024 dimensions index with {@link #codec()}, rather than a final projection
 * down to 1,024, which serves recall less on real text ({@code docs/retrieval.md}).
 *
 * <pre>{@code
 * var retriever = new LateInteractionRetriever(FixedDimensionalEncoder.builder(128).build(), "fde", "tokens", maxSim);
 * IndexWriterConfig config = new IndexWriterConfig().setCodec(retriever.codec());   // needed past 1024 dimensions
 * writer.addDocument(retriever.documentFields(tokens));
 * TopDocs top10 = retriever.search(searcher, queryTokens, 500, 10);
 * }</pre>
 */
public final class LateInteractionRetriever {
  /** Attribute of the encoding field that names the encoder that wrote it (for errors). */
  static final String ENCODER_ATTRIBUTE = "maxsim4j.fde.encoder";
  /**
   * Attribute of the encoding field whose name ends in the {@link FixedDimensionalEncoder#fingerprint} of the encoder
   * that wrote it (its value names the encoder). A merge keeps the attributes of every segment it merges, one per
   * name, so a segment merged from two encoders' encodings holds both fingerprints: a single attribute holding the
   * fingerprint, as builds before wrote it, would hold the newest segment's alone.
   */
  static final String FINGERPRINT_PREFIX = "maxsim4j.fde.fingerprint.";
  /** The single fingerprint attribute of earlier builds, read so that their encodings are still told apart. */
  static final String EARLIER_FINGERPRINT_ATTRIBUTE = "maxsim4j.fde.fingerprint";
  /** Documents {@link #searchExact} rescores at a time. */
  static final int EXACT_CHUNK = 4096;
  private final FixedDimensionalEncoder encoder;
  private final String encodingField;
  private final String tokensField;
  private final MaxSim maxSim;
  private final String fingerprint;
  /** The encoding field's type: maximum inner product, recording this encoder in the segments it is written to. */
  private final FieldType encodingType;

  /**
   * A retriever whose documents hold their encoding in {@code encodingField} and their tokens in
   * {@code tokensField}, reranked with {@code maxSim} (the caller keeps and closes it).
   */
  public LateInteractionRetriever(FixedDimensionalEncoder encoder, String encodingField, String tokensField,
      MaxSim maxSim) {
    this.encoder = Arguments.nonNull(encoder, "encoder");
    this.encodingField = Arguments.nonNull(encodingField, "encodingField");
    this.tokensField = Arguments.nonNull(tokensField, "tokensField");
    this.maxSim = Arguments.nonNull(maxSim, "maxSim");
    if (encodingField.equals(tokensField)) {
      throw new IllegalArgumentException("encodingField and tokensField are both \"" + tokensField
          + "\"; expected two fields");
    }
    this.fingerprint = encoder.fingerprint();
    FieldType type = new FieldType(KnnFloatVectorField.createFieldType(encoder.dimension(),
        VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT));
    type.putAttribute(ENCODER_ATTRIBUTE, encoder.toString());
    type.putAttribute(FINGERPRINT_PREFIX + fingerprint, encoder.toString());
    type.freeze();
    this.encodingType = type;
  }

  /** The encoder documents and queries are encoded with. */
  public FixedDimensionalEncoder encoder() {
    return encoder;
  }

  /**
   * A codec for {@code IndexWriterConfig.setCodec} that accepts this encoder's encodings: Lucene's default
   * codec when they fit its 1,024 dimensions, else {@link WideVectorsCodec}.
   */
  public Codec codec() {
    return WideVectorsCodec.forDimensions(encoder.dimension());
  }

  /** The fields of a document of token vectors {@code [L][d]} (at least one token). */
  public List<IndexableField> documentFields(float[][] tokens) {
    checkStoredSize(tokens);
    tokens = Arguments.copyRows(tokens); // encoded and stored as read once: the caller's could change meanwhile
    // checked before encoding: the encoder names a token of another d as its batch's ("documents have dimension 2")
    checkTokens("tokens", tokens);
    return fieldsOfCopies(tokens, encoder.encodeDocuments(TokenBatch.ofQuery(tokens))[0]);
  }

  /**
   * The fields of a document whose encoding is already computed, e.g. a row of
   * {@code encoder().encodeDocuments(batch)} for many documents at once (rows are encoded in parallel).
   */
  public List<IndexableField> documentFields(float[][] tokens, float[] encoding) {
    // Lucene's vector field keeps the array it is given: a caller that refills one array with each document's
    // encoding, adding the documents later, would index the last encoding for all of them, past the check below
    checkStoredSize(tokens);
    return fieldsOfCopies(Arguments.copyRows(tokens), Arguments.nonNull(encoding, "encoding").clone());
  }

  /**
   * Refuses a document whose tokens one value of Lucene's LateInteractionField cannot hold (4 + L x d x 4 bytes in
   * one array), before they are copied: Lucene's own size arithmetic wraps past an int.
   */
  private void checkStoredSize(float[][] tokens) {
    long d = encoder.tokenDimension();
    if (tokens != null && 4 + 4L * tokens.length * d > Capacity.MAX_ARRAY) {
      throw new IllegalArgumentException("tokens has " + tokens.length + " vectors of d = " + d + ", " + (4 + 4L
          * tokens.length * d) + " bytes as the one stored value of " + tokensField + "; expected at most "
          + (Capacity.MAX_ARRAY - 4) / (4 * d) + " vectors, a value one Java array holds");
    }
  }

  /** documentFields of {@code tokens} and {@code encoding} that no caller holds (copied, or made here). */
  private List<IndexableField> fieldsOfCopies(float[][] tokens, float[] encoding) {
    if (encoding.length != encoder.dimension()) {
      throw new IllegalArgumentException("encoding has " + encoding.length + " dimensions; expected "
          + encoder.dimension() + ", this retriever's encoder's");
    }
    requireInnerProductRange("the document's encoding", encoding);
    // the tokens are not encoded here, so their shape is checked here: a token of another d would be indexed
    // and only fail the searches that rerank its document
    checkTokens("tokens", tokens);
    return List.of(new KnnFloatVectorField(encodingField, encoding, encodingType),
        new LateInteractionField(tokensField, tokens));
  }

  /** The best {@code k} documents among the {@code candidates} nearest encodings, by exact MaxSim. */
  public TopDocs search(IndexSearcher searcher, float[][] queryTokens, int candidates, int k) throws IOException {
    return search(searcher, queryTokens, null, candidates, k);
  }

  /**
   * As {@link #search(IndexSearcher, float[][], int, int)}, the candidates being the {@code candidates} nearest
   * encodings together with the best {@code candidates} hits of {@code lexical} (when not null).
   */
  public TopDocs search(IndexSearcher searcher, float[][] queryTokens, Query lexical, int candidates, int k)
      throws IOException {
    Arguments.nonNull(searcher, "searcher");
    checkCounts(candidates, k);
    queryTokens = Arguments.copyRows(queryTokens); // encoded and reranked as read once
    checkTokens("queryTokens", queryTokens);
    float[] encoding = encoder.encodeQueries(TokenBatch.ofQuery(queryTokens))[0];
    requireInnerProductRange("queryTokens' encoding", encoding);
    checkEncodingField(searcher, lexical == null);
    // more candidates than documents would only size Lucene's queues past them (and past what it allows)
    int n = Math.min(candidates, Math.max(1, searcher.getIndexReader().maxDoc()));
    TopDocs nearest = nearestWithTokens(searcher, encoding, n);
    if (lexical != null) {
      checkTokensField(searcher);
    }
    TopDocs firstPass = lexical == null ? nearest : union(nearest, searcher.search(withTokens(lexical), n));
    return rerank(searcher, queryTokens, firstPass, k);
  }

  /**
   * The {@code n} nearest encodings of documents with token vectors. Encodings indexed without their tokens (by hand)
   * would take candidate places the rerank then leaves empty; a search among them alone would cost every query a pass
   * over the tokens field, so it is asked for only where the plain search found such an encoding.
   */
  private TopDocs nearestWithTokens(IndexSearcher searcher, float[] encoding, int n) throws IOException {
    TopDocs nearest = searcher.search(new CompleteKnnFloatVectorQuery(encodingField, encoding, n), n);
    TopDocs scorable = withTokens(searcher, nearest);
    if (scorable == nearest) {
      return nearest;
    }
    checkTokensField(searcher); // before FieldExistsQuery, which throws Lucene's own error on a field of another kind
    return searcher.search(new CompleteKnnFloatVectorQuery(encodingField, encoding, n,
        new FieldExistsQuery(tokensField)), n);
  }

  /**
   * The exact best {@code k} documents by MaxSim over every document with token vectors (brute force), holding
   * {@code k} hits and a chunk of 4,096 documents being rescored at a time per slice of the searcher, whatever the
   * index's size. It is a search of the searcher's: its executor takes the slices, and its timeout ({@link
   * IndexSearcher#setTimeout}) stops it as it stops any search, {@link IndexSearcher#timedOut} then true and the hits
   * the best of the documents collected before, their count the total.
   */
  public TopDocs searchExact(IndexSearcher searcher, float[][] queryTokens, int k) throws IOException {
    Arguments.nonNull(searcher, "searcher");
    checkCounts(1, k);
    queryTokens = Arguments.copyRows(queryTokens);
    // checked against the encoder, not left to the rerank: it would blame the first document, or find none to blame
    checkTokens("queryTokens", queryTokens);
    checkTokensField(searcher);
    return searchExact(searcher, queryTokens, k, EXACT_CHUNK);
  }

  /**
   * searchExact, rescoring the live documents with token vectors {@code chunk} at a time into a running top {@code k}
   * per slice (tests: small chunks), ranked as the rescorer ranks one first pass of them all.
   */
  TopDocs searchExact(IndexSearcher searcher, float[][] queryTokens, int k, int chunk) throws IOException {
    return searcher.search(new FieldExistsQuery(tokensField),
        ExactSearchCollector.manager(rescorer(queryTokens), searcher, k, chunk));
  }

  private TopDocs rerank(IndexSearcher searcher, float[][] queryTokens, TopDocs firstPass, int k)
      throws IOException {
    return rescorer(queryTokens).rescore(searcher, firstPass, k);
  }

  /** Raw MaxSim sums of the tokens field's dot products with {@code queryTokens}. */
  private MaxSimRescorer rescorer(float[][] queryTokens) {
    return MaxSimRescorer.create(tokensField, queryTokens, VectorSimilarityFunction.DOT_PRODUCT,
        MaxSimRescorer.Scale.RAW, maxSim);
  }

  /**
   * The candidates that hold token vectors: the rescorer scores a document without them 0, above every document
   * whose raw MaxSim is negative (an encoding indexed without its tokens, by hand, would be such a candidate). The
   * hits are read in doc order, one doc-values iterator per leaf.
   */
  private TopDocs withTokens(IndexSearcher searcher, TopDocs hits) throws IOException {
    ScoreDoc[] byDoc = hits.scoreDocs.clone();
    Arrays.sort(byDoc, Comparator.comparingInt(h -> h.doc));
    List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
    List<ScoreDoc> kept = new ArrayList<>(byDoc.length);
    int leaf = -1;
    int leafEnd = 0;
    BinaryDocValues values = null;
    for (ScoreDoc h : byDoc) {
      while (h.doc >= leafEnd && leaf + 1 < leaves.size()) {
        leaf++;
        leafEnd = leaves.get(leaf).docBase + leaves.get(leaf).reader().maxDoc();
        values = MaxSimRescorer.binaryValues(leaves.get(leaf).reader(), tokensField);
      }
      if (h.doc < 0 || h.doc >= leafEnd) {
        kept.add(h); // not a document of this searcher: the rescorer names it
      } else if (values != null && values.advanceExact(h.doc - leaves.get(leaf).docBase)) {
        kept.add(h);
      }
    }
    return kept.size() == byDoc.length ? hits
        : new TopDocs(new TotalHits(kept.size(), TotalHits.Relation.EQUAL_TO), kept.toArray(new ScoreDoc[0]));
  }

  /**
   * The tokens field in every leaf is binary doc values, or absent: on a field of another kind Lucene's
   * {@link FieldExistsQuery} throws its own {@code IllegalStateException}, which names neither argument nor remedy.
   */
  private void checkTokensField(IndexSearcher searcher) throws IOException {
    boolean encodings = false;
    boolean tokens = false;
    for (LeafReaderContext leaf : searcher.getIndexReader().leaves()) {
      MaxSimRescorer.binaryValues(leaf.reader(), tokensField);
      encodings |= leaf.reader().getFieldInfos().fieldInfo(encodingField) != null;
      tokens |= leaf.reader().getFieldInfos().fieldInfo(tokensField) != null;
    }
    requireTokensBesideEncodings(encodings, tokens);
  }

  /**
   * Some segment holds the tokens field where one holds encodings: else every candidate would be dropped for having
   * no token vectors (a misspelt tokensField), and the search would return nothing, silently.
   */
  private void requireTokensBesideEncodings(boolean encodings, boolean tokens) {
    if (encodings && !tokens) {
      throw new IllegalArgumentException("no segment holds field " + tokensField + ", while documents hold"
          + " encodings in " + encodingField + "; expected the token vectors documentFields indexes beside them"
          + " (check tokensField)");
    }
  }

  /**
   * The lexical query's hits among documents with token vectors, so that its best {@code candidates} are all
   * documents the rerank can score, not crowded out by ones without tokens.
   */
  private Query withTokens(Query lexical) {
    return new BooleanQuery.Builder().add(lexical, BooleanClause.Occur.MUST)
        .add(new FieldExistsQuery(tokensField), BooleanClause.Occur.FILTER).build();
  }

  private static TopDocs union(TopDocs a, TopDocs b) {
    Map<Integer, ScoreDoc> byDoc = new LinkedHashMap<>();
    for (ScoreDoc h : a.scoreDocs) {
      byDoc.put(h.doc, h);
    }
    for (ScoreDoc h : b.scoreDocs) {
      byDoc.putIfAbsent(h.doc, h);
    }
    ScoreDoc[] hits = byDoc.values().toArray(new ScoreDoc[0]);
    return new TopDocs(new TotalHits(hits.length, TotalHits.Relation.EQUAL_TO), hits);
  }

  /**
   * An encoding whose norm passes sqrt(Float.MAX_VALUE) could meet another in an fp32 inner product that
   * overflows, which HNSW would drop or refuse: tokens that large are refused up front, naming them.
   */
  private static void requireInnerProductRange(String what, float[] encoding) {
    double squares = 0;
    for (float v : encoding) {
      squares += (double) v * v;
    }
    if (!(squares <= Float.MAX_VALUE)) {
      throw new IllegalArgumentException(what + " has norm " + Math.sqrt(squares) + " (its token values are too"
          + " large or not finite); expected at most " + Math.sqrt(Float.MAX_VALUE)
          + ", so that inner products of encodings stay inside fp32");
    }
  }

  /**
   * Every segment that has the encoding field holds it as this encoder's float encodings: the nearest-neighbour
   * query would find no candidate in a field of another kind, silently, and poor ones in another encoder's (told
   * apart where the segment records its encoder, as {@link #documentFields} does). Where {@code alone} (no lexical
   * query brings candidates of its own), some segment holds it if any holds token vectors.
   */
  private void checkEncodingField(IndexSearcher searcher, boolean alone) {
    boolean encodings = false;
    boolean tokens = false;
    for (LeafReaderContext leaf : searcher.getIndexReader().leaves()) {
      encodings |= leaf.reader().getFieldInfos().fieldInfo(encodingField) != null;
      tokens |= leaf.reader().getFieldInfos().fieldInfo(tokensField) != null;
    }
    if (alone && tokens && !encodings) { // a misspelt name, or an index without encodings: no candidate, silently
      throw new IllegalArgumentException("no segment holds field " + encodingField + ", while documents hold token"
          + " vectors in " + tokensField + "; expected the encodings documentFields indexes beside them (check"
          + " encodingField, or use searchExact)");
    }
    requireTokensBesideEncodings(encodings, tokens);
    for (LeafReaderContext leaf : searcher.getIndexReader().leaves()) {
      FieldInfo info = leaf.reader().getFieldInfos().fieldInfo(encodingField);
      if (info != null && (info.getVectorDimension() != encoder.dimension()
          || info.getVectorEncoding() != VectorEncoding.FLOAT32)) {
        throw new IllegalArgumentException("field " + encodingField + " of segment " + leaf.reader() + " holds "
            + (info.getVectorDimension() == 0 ? "no vectors"
                : info.getVectorEncoding() + " vectors of " + info.getVectorDimension() + " dimensions")
            + "; expected FLOAT32 vectors of " + encoder.dimension() + " dimensions, this retriever's encodings");
      }
      // encodings indexed by hand with another similarity (KnnFloatVectorField's default is EUCLIDEAN) are searched
      // by it: their nearest by distance or angle are not the encodings that approximate MaxSim
      if (info != null && info.getVectorSimilarityFunction() != VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT) {
        throw new IllegalArgumentException("field " + encodingField + " of segment " + leaf.reader()
            + " holds encodings compared by " + info.getVectorSimilarityFunction() + "; expected MAXIMUM_INNER_PRODUCT,"
            + " the similarity encodings approximate MaxSim with (index them with documentFields)");
      }
      // encodings of another encoder of the same length (or of another release's draws): its nearest are no
      // candidates for this one's queries; the fingerprint hashes the parameters and the encodings themselves
      Set<String> written = info == null ? Set.of() : fingerprints(info);
      if (!written.isEmpty() && !written.equals(Set.of(fingerprint))) {
        String writer = info.getAttribute(ENCODER_ATTRIBUTE);
        String where = "field " + encodingField + " of segment " + leaf.reader();
        if (written.size() > 1) {
          throw new IllegalArgumentException(where + " holds the encodings of several encoders or releases, merged"
              + " (fingerprints " + new TreeSet<>(written) + "); expected this retriever's alone (" + fingerprint
              + ", " + encoder + "): re-index them with one encoder");
        }
        throw new IllegalArgumentException(where + (encoder.toString().equals(writer)
            ? " holds encodings of " + writer + " that this maxsim4j does not compute alike (fingerprint "
                + written.iterator().next() + ", here " + fingerprint + "); expected this version's encodings"
                + " (re-index them)"
            : " holds encodings written by " + writer + " (fingerprint " + written.iterator().next() + ")"
                + "; expected encodings of this retriever's " + encoder + " (" + fingerprint + "; search it with"
                + " the encoder that wrote it)"));
      }
    }
  }

  /** The fingerprints of the encoders whose encodings the field of a segment holds (none recorded: hand-indexed). */
  private static Set<String> fingerprints(FieldInfo info) {
    Set<String> found = new HashSet<>();
    info.attributes().keySet().stream().filter(k -> k.startsWith(FINGERPRINT_PREFIX))
        .forEach(k -> found.add(k.substring(FINGERPRINT_PREFIX.length())));
    String earlier = info.getAttribute(EARLIER_FINGERPRINT_ATTRIBUTE);
    if (earlier != null) {
      found.add(earlier);
    }
    return found;
  }

  /**
   * Finite token vectors {@code [L >= 1][d]} of this retriever's encoder's d; {@code name} names them in errors. A NaN
   * or infinite value would make its document score NaN against every query, first in every ranking, and its
   * encoding unsearchable.
   */
  private void checkTokens(String name, float[][] tokens) {
    if (tokens == null || tokens.length == 0) {
      throw new IllegalArgumentException(name + " is " + (tokens == null ? "null" : "empty")
          + "; expected [L >= 1][" + encoder.tokenDimension() + "]");
    }
    for (int t = 0; t < tokens.length; t++) {
      if (tokens[t] == null || tokens[t].length != encoder.tokenDimension()) {
        throw new IllegalArgumentException(name + "[" + t + "] has " + (tokens[t] == null ? "no vector"
            : "dimension " + tokens[t].length) + "; expected " + encoder.tokenDimension()
            + ", the token dimension of this retriever's encoder");
      }
      for (int k = 0; k < tokens[t].length; k++) {
        if (!Float.isFinite(tokens[t][k])) {
          throw new IllegalArgumentException(name + "[" + t + "][" + k + "] = " + tokens[t][k]
              + "; expected finite token values");
        }
      }
    }
  }

  private static void checkCounts(int candidates, int k) {
    if (candidates < 1) {
      throw new IllegalArgumentException("candidates = " + candidates + "; expected >= 1");
    }
    if (k < 1) {
      throw new IllegalArgumentException("k = " + k + "; expected >= 1");
    }
  }
}
