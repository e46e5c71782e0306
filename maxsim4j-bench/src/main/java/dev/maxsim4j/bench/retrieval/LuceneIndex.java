package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.lucene.LateInteractionRetriever;
import dev.maxsim4j.lucene.MaxSimRescorer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;

/**
 * The evaluation's documents in an on-disk Lucene index: per document its FDE (HNSW, maximum inner product),
 * its token vectors (for the exact rerank), its mean-pooled unit vector (HNSW, the single-vector baseline) and
 * its position in the evaluation set.
 */
final class LuceneIndex implements AutoCloseable {
  static final String FDE = "fde";
  static final String TOKENS = "tokens";
  static final String MEAN = "mean";
  static final String ID = "id";
  final LateInteractionRetriever retriever;
  final double buildSeconds;
  final long bytes;
  final int segments;
  private final FSDirectory directory;
  private final DirectoryReader reader;
  private final IndexSearcher searcher;
  private final int[] itemOfDoc;
  private final MaxSim maxSim;

  private LuceneIndex(LateInteractionRetriever retriever, FSDirectory directory, double buildSeconds, long bytes,
      MaxSim maxSim) throws IOException {
    this.retriever = retriever;
    this.directory = directory;
    this.buildSeconds = buildSeconds;
    this.bytes = bytes;
    this.maxSim = maxSim;
    this.reader = DirectoryReader.open(directory);
    this.segments = reader.leaves().size();
    this.searcher = new IndexSearcher(reader);
    this.itemOfDoc = new int[reader.maxDoc()];
    for (LeafReaderContext leaf : reader.leaves()) {
      NumericDocValues ids = leaf.reader().getNumericDocValues(ID);
      for (int d = ids.nextDoc(); d != NumericDocValues.NO_MORE_DOCS; d = ids.nextDoc()) {
        itemOfDoc[leaf.docBase + d] = (int) ids.longValue();
      }
    }
  }

  /**
   * Indexes every document of {@code docs} into a fresh {@code dir} (whatever it held is deleted), with the
   * mean-pooled vectors when {@code withMean}. {@code encodings} (flat, one per document) are the documents'
   * FDEs computed beforehand, or null for {@link LateInteractionRetriever#documentFields} to encode each.
   */
  static LuceneIndex build(Path dir, Encoded docs, LateInteractionRetriever retriever, float[] encodings,
      MaxSim maxSim, int threads, boolean withMean) throws IOException {
    int fdeDim = retriever.encoder().dimension();
    deleteTree(dir);
    Files.createDirectories(dir);
    FSDirectory directory = FSDirectory.open(dir);
    long start = System.nanoTime();
    // plain (not compound) files, so the size of each part of the index can be read off its extension
    TieredMergePolicy merges = new TieredMergePolicy();
    merges.setNoCFSRatio(0);
    IndexWriterConfig config = new IndexWriterConfig().setCodec(retriever.codec()).setRAMBufferSizeMB(1024)
        .setUseCompoundFile(false).setMergePolicy(merges);
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      // documents are added from several threads: Lucene builds the HNSW graphs as they arrive
      IntStream.range(0, threads).parallel().forEach(t -> {
        for (int i = t; i < docs.size(); i += threads) {
          List<IndexableField> fields = new ArrayList<>(encodings == null ? retriever.documentFields(docs.row(i))
              : List.of(new KnnFloatVectorField(FDE, Arrays.copyOfRange(encodings, i * fdeDim, (i + 1) * fdeDim),
                  VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT), new LateInteractionField(TOKENS, docs.row(i))));
          if (withMean) {
            fields.add(new KnnFloatVectorField(MEAN, docs.meanUnit(i), VectorSimilarityFunction.DOT_PRODUCT));
          }
          fields.add(new NumericDocValuesField(ID, i));
          try {
            writer.addDocument(fields);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      });
      writer.commit();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long bytes;
    try (Stream<Path> files = Files.list(dir)) {
      bytes = files.mapToLong(p -> p.toFile().length()).sum();
    }
    return new LuceneIndex(retriever, directory, seconds, bytes, maxSim);
  }

  /** Bytes of the files of one field's format, by file extension (e.g. {@code vec}, {@code dvd}). */
  long bytesOf(Path dir, String... extensions) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> Stream.of(extensions).anyMatch(e -> p.toString().endsWith("." + e)))
          .mapToLong(p -> p.toFile().length()).sum();
    }
  }

  /** The top 10 by HNSW on the FDE alone. */
  int[] fdeOnly(float[][] query, int k) throws IOException {
    float[] encoding = retriever.encoder().encodeQueries(TokenBatch.ofQuery(query))[0];
    return items(searcher.search(new KnnFloatVectorQuery(FDE, encoding, k), k));
  }

  /** The top {@code k} of {@code candidates} FDE neighbours reranked by exact MaxSim. */
  int[] fdeRerank(float[][] query, int candidates, int k) throws IOException {
    return items(retriever.search(searcher, query, candidates, k));
  }

  /** The top {@code k} of {@code candidates} mean-pooled neighbours reranked by exact MaxSim. */
  int[] meanRerank(float[][] query, float[] queryMean, int candidates, int k) throws IOException {
    TopDocs first = searcher.search(new KnnFloatVectorQuery(MEAN, queryMean, candidates), candidates);
    return items(MaxSimRescorer.create(TOKENS, query, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW,
        maxSim).rescore(searcher, first, k));
  }

  /** Exact MaxSim over every document's stored tokens (brute force through the index). */
  int[] exact(float[][] query, int k) throws IOException {
    return items(retriever.searchExact(searcher, query, k));
  }

  private int[] items(TopDocs top) {
    ScoreDoc[] hits = top.scoreDocs;
    int[] out = new int[hits.length];
    for (int i = 0; i < hits.length; i++) {
      out[i] = itemOfDoc[hits[i].doc];
    }
    return out;
  }

  @Override
  public void close() throws IOException {
    reader.close();
    directory.close();
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
