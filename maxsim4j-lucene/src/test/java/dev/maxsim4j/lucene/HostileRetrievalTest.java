package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.MultiReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile retrieval: documents that a lexical query finds but that hold no token vectors; null arguments, each
 * named in an IllegalArgumentException as the core library names its own.
 */
class HostileRetrievalTest {
  @TempDir
  Path dir;
  MaxSim maxSim;
  FSDirectory directory;

  @BeforeEach
  void open() throws IOException {
    maxSim = MaxSim.builder().backend("vector").threads(2).build();
    directory = FSDirectory.open(dir);
  }

  @AfterEach
  void close() throws IOException {
    directory.close();
    maxSim.close();
  }

  private IndexWriter writer(LateInteractionRetriever retriever) throws IOException {
    return new IndexWriter(directory, new IndexWriterConfig().setCodec(retriever.codec()));
  }

  /** Indexes one document of {@code tokens} with the retriever's fields. */
  private void indexOne(LateInteractionRetriever retriever, float[][] tokens) throws IOException {
    try (IndexWriter writer = writer(retriever)) {
      Document doc = new Document();
      retriever.documentFields(tokens).forEach(doc::add);
      writer.addDocument(doc);
    }
  }

  @Test
  void lexicalHitsWithoutTokensNeverOutrankScoredDocuments() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    try (IndexWriter writer = writer(retriever)) {
      for (int j = 0; j < 3; j++) {
        Document doc = new Document();
        retriever.documentFields(new float[][] {{-1, -1, 0, 0}, {-1, -1 - j, 0, 0}}).forEach(doc::add);
        doc.add(new StringField("id", "d" + j, Field.Store.YES));
        doc.add(new StringField("tag", "x", Field.Store.NO));
        writer.addDocument(doc);
      }
      writer.commit();
      Document textOnly = new Document(); // its own segment, with neither an encoding nor tokens
      textOnly.add(new StringField("id", "text", Field.Store.YES));
      textOnly.add(new StringField("tag", "x", Field.Store.NO));
      writer.addDocument(textOnly);
    }
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      float[][] q = {{1, 0, 0, 0}, {0, 1, 0, 0}}; // every document's raw MaxSim is -2
      TopDocs top = retriever.search(searcher, q, new TermQuery(new Term("tag", "x")), 100, 10);
      TopDocs exact = retriever.searchExact(searcher, q, 10);
      assertEquals(exact.scoreDocs.length, top.scoreDocs.length, "only documents with token vectors are ranked");
      for (int r = 0; r < top.scoreDocs.length; r++) {
        ScoreDoc hit = top.scoreDocs[r];
        assertEquals(exact.scoreDocs[r].doc, hit.doc, "rank " + r + " is "
            + searcher.storedFields().document(hit.doc).get("id") + " at " + hit.score);
        assertEquals(-2f, hit.score);
      }
    }
  }

  /**
   * A retriever whose encoding field no segment holds (a misspelt name, an index built without encodings) found no
   * candidate and returned nothing, silently, where searchExact ranks every document: it names the field. Found by
   * a hostile test.
   */
  @Test
  void anEncodingFieldNoSegmentHoldsIsNamed() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    indexOne(retriever, new float[][] {{-1, -1, 0, 0}});
    LateInteractionRetriever misspelt = new LateInteractionRetriever(encoder, "fdee", "tokens", maxSim);
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      float[][] q = {{1, 0, 0, 0}};
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> misspelt.search(searcher, q,
          10, 10));
      assertTrue(e.getMessage().startsWith("no segment holds field fdee, while documents hold token vectors in"
          + " tokens"), e.getMessage());
      assertEquals(1, misspelt.searchExact(searcher, q, 10).scoreDocs.length);
      assertEquals(1, retriever.search(searcher, q, 10, 10).scoreDocs.length);
    }
  }

  /**
   * A retriever whose tokens field no segment holds (a misspelt name) found candidates by their encodings, dropped
   * each for having no token vectors and returned nothing, silently, from search and searchExact alike: both name
   * the field. Found by a hostile test.
   */
  @Test
  void aTokensFieldNoSegmentHoldsIsNamed() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    indexOne(retriever, new float[][] {{-1, -1, 0, 0}});
    LateInteractionRetriever misspelt = new LateInteractionRetriever(encoder, "fde", "tokenz", maxSim);
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      float[][] q = {{1, 0, 0, 0}};
      String expected = "no segment holds field tokenz, while documents hold encodings in fde; expected the token"
          + " vectors documentFields indexes beside them (check tokensField)";
      assertEquals(expected, assertThrows(IllegalArgumentException.class,
          () -> misspelt.search(searcher, q, 10, 10)).getMessage());
      assertEquals(expected, assertThrows(IllegalArgumentException.class,
          () -> misspelt.search(searcher, q, new MatchAllDocsQuery(), 10, 10)).getMessage());
      assertEquals(expected, assertThrows(IllegalArgumentException.class,
          () -> misspelt.searchExact(searcher, q, 10)).getMessage());
      assertEquals(1, retriever.search(searcher, q, 10, 10).scoreDocs.length);
    }
  }

  /** A document indexed with an encoding but no token vectors (by hand) is never ranked. */
  @Test
  void nearestEncodingsWithoutTokensAreNotRanked() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    float[][] tokens = {{-1, -1, 0, 0}, {-1, -2, 0, 0}};
    try (IndexWriter writer = writer(retriever)) {
      Document whole = new Document();
      retriever.documentFields(tokens).forEach(whole::add);
      writer.addDocument(whole);
      Document encodingOnly = new Document();
      encodingOnly.add(retriever.documentFields(tokens).get(0));
      writer.addDocument(encodingOnly);
    }
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      TopDocs top = retriever.search(searcher, new float[][] {{1, 0, 0, 0}, {0, 1, 0, 0}}, 10, 10);
      assertEquals(1, top.scoreDocs.length);
      assertEquals(0, top.scoreDocs[0].doc);
      assertEquals(-2f, top.scoreDocs[0].score);
    }
  }

  /**
   * Nearer encodings without token vectors do not take the candidate places: the one document with tokens is found
   * with a single candidate though five without them come first (the search returned nothing below six). Found by a
   * hostile test.
   */
  @Test
  void nearestEncodingsWithoutTokensDoNotCrowdOutOnesWithThem() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    try (IndexWriter writer = writer(retriever)) {
      for (int i = 0; i < 5; i++) {
        Document encodingOnly = new Document();
        encodingOnly.add(retriever.documentFields(new float[][] {{1, 1, 0, 0}}).get(0));
        writer.addDocument(encodingOnly);
      }
      Document whole = new Document();
      retriever.documentFields(new float[][] {{.5f, .5f, 0, 0}}).forEach(whole::add);
      writer.addDocument(whole);
    }
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      float[][] q = {{1, 0, 0, 0}, {0, 1, 0, 0}};
      for (int candidates : new int[] {1, 5, 6}) {
        TopDocs top = retriever.search(searcher, q, candidates, 10);
        assertEquals(1, top.scoreDocs.length, candidates + " candidates");
        assertEquals(5, top.scoreDocs[0].doc);
        assertEquals(1f, top.scoreDocs[0].score);
      }
    }
  }

  /**
   * Lexical hits without token vectors do not take the lexical query's candidate places: the one document of the
   * term that has tokens is a candidate though five without them come first in the term's hits.
   */
  @Test
  void lexicalHitsWithoutTokensDoNotCrowdOutOnesWithThem() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(2).repetitions(4).build();
    float[][] q = {{1, 0, 0, 0}, {0, 1, 0, 0}};
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    try (IndexWriter writer = writer(retriever)) {
      for (int j = 0; j < 5; j++) { // first in the term's hits (equal scores rank by doc id)
        Document textOnly = new Document();
        textOnly.add(new StringField("tag", "x", Field.Store.NO));
        writer.addDocument(textOnly);
      }
      Document target = new Document(); // doc 5: the far side of the query, never among the nearest encodings
      retriever.documentFields(new float[][] {{-1, 0, 0, 0}, {0, -1, 0, 0}}).forEach(target::add);
      target.add(new StringField("tag", "x", Field.Store.NO));
      writer.addDocument(target);
      Random rnd = new Random(7);
      for (int j = 0; j < 20; j++) {
        float[][] tokens = new float[3][4];
        for (float[] t : tokens) {
          t[0] = 0.5f + rnd.nextFloat();
          t[1] = 0.5f + rnd.nextFloat();
          t[2] = rnd.nextFloat() - 0.5f;
          t[3] = rnd.nextFloat() - 0.5f;
        }
        Document doc = new Document();
        retriever.documentFields(tokens).forEach(doc::add);
        writer.addDocument(doc);
      }
    }
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      TopDocs nearest = retriever.search(searcher, q, 3, 30);
      assertTrue(Arrays.stream(nearest.scoreDocs).noneMatch(h -> h.doc == 5),
          "the target is not among the nearest encodings, so only the lexical query can bring it");
      TopDocs top = retriever.search(searcher, q, new TermQuery(new Term("tag", "x")), 3, 30);
      assertTrue(Arrays.stream(top.scoreDocs).anyMatch(h -> h.doc == 5), "the target is a candidate");
    }
  }

  /**
   * A query of the wrong shape is named as the query, by both searches: the exact search blamed the first document
   * for a query of another d (or, on an index without documents, found nothing), and a null query was named by
   * the name of a parameter inside the library.
   */
  @Test
  void badQueriesAreNamedAsTheQuery() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    indexOne(retriever, new float[][] {{1, 0, 0, 0}});
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      IndexSearcher empty = new IndexSearcher(new MultiReader());
      for (IndexSearcher s : new IndexSearcher[] {searcher, empty}) {
        for (float[][] q : new float[][][] {null, {}, {{1, 0, 0}}, {{1, 0, 0, 0}, null}}) {
          for (boolean exact : new boolean[] {false, true}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> { if (exact) retriever.searchExact(s, q, 5); else retriever.search(s, q, 5, 5); });
            assertTrue(e.getMessage().startsWith("queryTokens"), e.getMessage());
          }
        }
      }
    }
  }

  /**
   * Fields that the index holds as another kind than the retriever expects are refused by name: a text field as the
   * tokens (every candidate was dropped, or scored 0 by the rescorer), the token field as the encodings (no
   * candidate found), encodings of another encoder.
   */
  @Test
  void fieldsOfAnotherKindAreNamed() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    float[][] q = {{1, 0, 0, 0}, {0, 1, 0, 0}};
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    try (IndexWriter writer = writer(retriever)) {
      for (int j = 0; j < 3; j++) {
        Document doc = new Document();
        retriever.documentFields(new float[][] {{1, j, 0, 0}}).forEach(doc::add);
        doc.add(new StringField("id", "d" + j, Field.Store.YES));
        writer.addDocument(doc);
      }
    }
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      assertEquals(3, retriever.search(searcher, q, 10, 10).scoreDocs.length);
      LateInteractionRetriever onText = new LateInteractionRetriever(encoder, "fde", "id", maxSim);
      // each path to the tokens, the brute force and the lexical first pass too: Lucene's field-exists query threw
      // its own IllegalStateException there
      for (Executable call : new Executable[] {() -> onText.search(searcher, q, 10, 10),
          () -> onText.searchExact(searcher, q, 10),
          () -> onText.search(searcher, q, new TermQuery(new Term("id", "d1")), 10, 10)}) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith("field id of segment ") && e.getMessage().contains("no doc values"),
            e.getMessage());
      }
      IllegalArgumentException e;
      e = assertThrows(IllegalArgumentException.class, () -> MaxSimRescorer.create("id", q,
          VectorSimilarityFunction.DOT_PRODUCT).rescore(searcher, searcher.search(MatchAllDocsQuery.INSTANCE, 10), 10));
      assertTrue(e.getMessage().startsWith("field id of segment "), e.getMessage());
      e = assertThrows(IllegalArgumentException.class,
          () -> new LateInteractionRetriever(encoder, "tokens", "fde", maxSim).search(searcher, q, 10, 10));
      assertTrue(e.getMessage().startsWith("field tokens of segment ") && e.getMessage().contains("no vectors"),
          e.getMessage());
      FixedDimensionalEncoder wider = FixedDimensionalEncoder.builder(4).simHashBits(2).repetitions(2).build();
      e = assertThrows(IllegalArgumentException.class,
          () -> new LateInteractionRetriever(wider, "fde", "tokens", maxSim).search(searcher, q, 10, 10));
      assertTrue(e.getMessage().contains("FLOAT32 vectors of 16 dimensions; expected FLOAT32 vectors of 32"),
          e.getMessage());
    }
  }

  /** Doc values of another type under the tokens' name read as no value to Lucene: refused, not scored 0. */
  @Test
  void docValuesOfAnotherTypeAreNamedNotScoredZero() throws Exception {
    float[][] q = {{1, 0, 0, 0}};
    try (IndexWriter writer = new IndexWriter(directory, new IndexWriterConfig())) {
      Document doc = new Document();
      doc.add(new NumericDocValuesField("number", 3));
      doc.add(new SortedDocValuesField("sorted", new BytesRef("x")));
      writer.addDocument(doc);
    }
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      TopDocs all = searcher.search(MatchAllDocsQuery.INSTANCE, 10);
      for (String field : new String[] {"number", "sorted"}) {
        MaxSimRescorer rescorer = MaxSimRescorer.create(field, q, VectorSimilarityFunction.DOT_PRODUCT,
            MaxSimRescorer.Scale.RAW, maxSim);
        for (Executable call : new Executable[] {() -> rescorer.rescore(searcher, all, 10),
            () -> rescorer.explain(searcher, Explanation.match(1f, "first"), 0),
            () -> MaxSimRescorer.createQuantized(field, q, MaxSimRescorer.Scale.RAW, maxSim)
                .rescore(searcher, all, 10)}) {
          IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call, field);
          assertTrue(e.getMessage().startsWith("field " + field + " of segment ")
              && e.getMessage().contains(" doc values; expected the binary doc values"), e.getMessage());
        }
      }
    }
  }

  @Test
  void nullArgumentsAreNamedInIllegalArgumentExceptions() throws IOException {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).simHashBits(1).repetitions(2).build();
    float[][] tokens = {{1, 0, 0, 0}};
    MaxSimRescorer rescorer = MaxSimRescorer.create("tokens", tokens, VectorSimilarityFunction.DOT_PRODUCT,
        MaxSimRescorer.Scale.RAW, maxSim);
    LateInteractionRetriever retriever = new LateInteractionRetriever(encoder, "fde", "tokens", maxSim);
    try (IndexWriter writer = writer(retriever)) {
      writer.commit();
    }
    try (DirectoryReader reader = DirectoryReader.open(directory)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      TopDocs none = new TopDocs(new org.apache.lucene.search.TotalHits(0,
          org.apache.lucene.search.TotalHits.Relation.EQUAL_TO), new ScoreDoc[0]);
      assertNamed("encoder", () -> new LateInteractionRetriever(null, "fde", "tokens", maxSim));
      assertNamed("tokensField", () -> new LateInteractionRetriever(encoder, "fde", null, maxSim));
      assertNamed("maxSim", () -> new LateInteractionRetriever(encoder, "fde", "tokens", null));
      assertNamed("searcher", () -> retriever.searchExact(null, tokens, 1));
      assertNamed("maxSim", () -> MaxSimRescorer.create("tokens", tokens, VectorSimilarityFunction.DOT_PRODUCT,
          MaxSimRescorer.Scale.RAW, null));
      assertNamed("searcher", () -> rescorer.rescore(null, none, 1));
      assertNamed("firstPassTopDocs", () -> rescorer.rescore(searcher, null, 1));
      assertNamed("firstPassTopDocs.scoreDocs", () -> rescorer.rescore(searcher, new TopDocs(none.totalHits, null), 1));
      assertNamed("searcher", () -> rescorer.explain(null, Explanation.match(1f, "first"), 0));
      assertNamed("firstPassExplanation", () -> rescorer.explain(searcher, null, 0));
      assertNamed("type", () -> rescorer.withQueryType(null));
      assertNamed("maxSim", () -> new MaxSimMultiVectorSimilarity(null));
      assertNamed("queryVector", () -> new MaxSimMultiVectorSimilarity(maxSim).compare(null, tokens,
          VectorSimilarityFunction.DOT_PRODUCT));
      assertNamed("type", () -> QuantizedLateInteractionField.encode(tokens, (DType) null));
      assertNamed("value", () -> QuantizedLateInteractionField.decode(null));
    }
  }

  private static void assertNamed(String argument, Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call, argument);
    assertTrue(e.getMessage().startsWith(argument + " is null"), e.getMessage());
  }
}
