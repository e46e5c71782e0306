package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.LateInteractionRescorer;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Rescorer;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile tester's finding: the rescorer gathered a block's 64 hits whatever their length, so 64 candidates of
 * 4,000 tokens x 128 dims (128 MB of floats) ran a 128 MB heap out of memory where Lucene's own rescorer, which reads
 * one value at a time, ranked them; int8 values the same at 96 MB. A block's gathered bytes are now bounded by the
 * heap.
 */
class HostileSmallHeapRescoreTest {
  private static final int DOCS = 64;
  private static final int D = 128;

  @TempDir Path dir;

  @Test
  @Timeout(600)
  void longCandidatesOnASmallHeapRankAsLucenesRescorerRanksThem() throws IOException, InterruptedException {
    index(dir.resolve("float"), 4000, null);
    index(dir.resolve("int8"), 8000, DType.INT8);
    String lucene = child("-Xmx128m", "float", "lucene");
    assertTrue(lucene.startsWith("RESULT "), lucene);
    assertEquals(lucene, child("-Xmx128m", "float", "maxsim4j"));
    assertTrue(child("-Xmx96m", "int8", "maxsim4j").startsWith("RESULT "));
  }

  /** {@code DOCS} documents of {@code tokens} Gaussian tokens, stored as floats or as {@code type}, one segment. */
  private static void index(Path path, int tokens, DType type) throws IOException {
    SplittableRandom r = new SplittableRandom(1);
    try (Directory directory = FSDirectory.open(path);
        IndexWriter w = new IndexWriter(directory, new IndexWriterConfig().setRAMBufferSizeMB(16))) {
      for (int i = 0; i < DOCS; i++) {
        float[][] v = new float[tokens][D];
        for (float[] row : v) {
          for (int k = 0; k < D; k++) {
            row[k] = (float) r.nextGaussian();
          }
        }
        Document doc = new Document();
        doc.add(type == null ? new LateInteractionField("f", v) : new QuantizedLateInteractionField("f", v, type));
        w.addDocument(doc);
      }
      w.forceMerge(1);
    }
  }

  /** The last line {@link Child} prints on a heap of {@code heap}. */
  private String child(String heap, String index, String rescorer) throws IOException, InterruptedException {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", heap, "-cp",
        System.getProperty("java.class.path"), Child.class.getName(), dir.resolve(index).toString(), rescorer);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), out);
    List<String> lines = out.lines().filter(l -> !l.startsWith("WARNING")).toList();
    return lines.isEmpty() ? out : lines.get(lines.size() - 1);
  }

  /** Rescores every document of the index at args[0] with Lucene's rescorer or this library's, on one thread. */
  public static final class Child {
    public static void main(String[] args) throws IOException {
      float[][] q = new float[32][D];
      for (float[] row : q) {
        Arrays.fill(row, 0.1f);
      }
      try (Directory directory = FSDirectory.open(Path.of(args[0]));
          DirectoryReader reader = DirectoryReader.open(directory);
          MaxSim maxSim = MaxSim.builder().backend("vector").threads(1).build()) {
        IndexSearcher searcher = new IndexSearcher(reader);
        TopDocs first = searcher.search(new MatchAllDocsQuery(), DOCS);
        boolean quantized = args[0].endsWith("int8");
        Rescorer rescorer = args[1].equals("lucene")
            ? LateInteractionRescorer.create("f", q, VectorSimilarityFunction.DOT_PRODUCT)
            : quantized ? MaxSimRescorer.createQuantized("f", q, MaxSimRescorer.Scale.LUCENE, maxSim)
            : MaxSimRescorer.create("f", q, VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.LUCENE, maxSim);
        TopDocs top = rescorer.rescore(searcher, first, 3);
        StringBuilder line = new StringBuilder("RESULT");
        for (var hit : top.scoreDocs) {
          line.append(' ').append(hit.doc);
        }
        System.out.println(line);
      }
    }
  }
}
