package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile tester's finding: searchExact collected every document as one first pass before keeping k, so its heap
 * grew with the index: 2,000,000 documents of one 2-d token (a 23 MB index) ran out of a 64 MB heap. It now holds k
 * hits and a bounded chunk of documents at a time.
 */
class HostileExactSearchHeapTest {
  private static final int DOCS = 2_000_000;

  @TempDir
  Path dir;

  /** searchExact(k = 10) of the index at args[0], printing its best hit and total hits. */
  public static final class TopTen {
    public static void main(String[] args) throws IOException {
      try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build();
          FSDirectory directory = FSDirectory.open(Path.of(args[0]));
          DirectoryReader reader = DirectoryReader.open(directory)) {
        LateInteractionRetriever retriever = new LateInteractionRetriever(FixedDimensionalEncoder.builder(2).build(),
            "fde", "tokens", maxSim);
        TopDocs top = retriever.searchExact(new IndexSearcher(reader), new float[][] {{1, 0}}, 10);
        ScoreDoc best = top.scoreDocs[0];
        System.out.println(best.doc + " " + best.score + " " + top.scoreDocs.length + " " + top.totalHits);
      }
    }
  }

  @Test
  @Timeout(600)
  void exactSearchOfManyDocumentsFitsASmallHeap() throws IOException, InterruptedException {
    try (FSDirectory directory = FSDirectory.open(dir);
        IndexWriter writer = new IndexWriter(directory, new IndexWriterConfig())) {
      for (int j = 0; j < DOCS; j++) {
        Document doc = new Document();
        doc.add(new LateInteractionField("tokens", new float[][] {{(j % 1000) / 1000f, 1}}));
        writer.addDocument(doc);
      }
      writer.forceMerge(1);
    }
    // every thousandth document scores 0.999, the best: the first of them ranks first
    assertEquals("999 0.999 10 " + DOCS + " hits", lastLine(TopTen.class, dir.toString()));
  }

  /** The last line of {@code main}'s output on a 64 MB heap, once it ended well. */
  private static String lastLine(Class<?> main, String arg) throws IOException, InterruptedException {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", "-Xmx64m", "-cp",
        System.getProperty("java.class.path"), main.getName(), arg);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(500, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), out);
    List<String> lines = out.lines().filter(l -> !l.startsWith("WARNING")).toList();
    return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
  }
}
