package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.FixedDimensionalEncoder;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.FieldExistsQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * searchExact's heap follows k and the slices that run, not the index: 2,000,000 documents of one 2-d token (a 23 MB
 * index) searched in a 64 MB heap, by a plain searcher and by searchers of Lucene 10's intra-segment partitions, run
 * one after the other on the caller's thread. Hostile testers' findings: searchExact once collected every document as
 * one first pass before keeping k, and later kept what each slice left pending until the manager's reduction, which
 * with 1,000 slices of 2,000 documents held every document at once.
 */
class HostileExactSearchHeapTest {
  private static final int DOCS = 2_000_000;

  @TempDir
  Path dir;

  /** A searcher whose slices are partitions of {@code size} documents of each segment, run on {@code executor}. */
  static final class Partitioned extends IndexSearcher {
    private final int size;

    Partitioned(IndexReader reader, Executor executor, int size) {
      super(reader, executor);
      this.size = size;
    }

    @Override
    protected LeafSlice[] slices(List<LeafReaderContext> leaves) {
      List<LeafSlice> slices = new ArrayList<>();
      for (LeafReaderContext leaf : leaves) {
        int maxDoc = leaf.reader().maxDoc();
        for (int from = 0; from < maxDoc; from += size) {
          slices.add(new LeafSlice(List.of(
              LeafReaderContextPartition.createFromAndTo(leaf, from, Math.min(maxDoc, from + size)))));
        }
      }
      return slices.toArray(new LeafSlice[0]);
    }
  }

  /**
   * searchExact(k = 10) of the index at args[0], printing its best hit and total hits; with args[1], by a searcher of
   * partitions of that many documents; with args[2] too, Lucene's own top 10 of the same documents by that searcher.
   */
  public static final class TopTen {
    public static void main(String[] args) throws IOException {
      try (MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build();
          FSDirectory directory = FSDirectory.open(Path.of(args[0]));
          DirectoryReader reader = DirectoryReader.open(directory)) {
        LateInteractionRetriever retriever = new LateInteractionRetriever(FixedDimensionalEncoder.builder(2).build(),
            "fde", "tokens", maxSim);
        IndexSearcher searcher = args.length > 1 ? new Partitioned(reader, Runnable::run, Integer.parseInt(args[1]))
            : new IndexSearcher(reader);
        if (args.length > 2) {
          TopDocs top = searcher.search(new FieldExistsQuery("tokens"), 10);
          System.out.println(top.scoreDocs.length + " " + top.totalHits);
          return;
        }
        TopDocs top = retriever.searchExact(searcher, new float[][] {{1, 0}}, 10);
        ScoreDoc best = top.scoreDocs[0];
        System.out.println(best.doc + " " + best.score + " " + top.scoreDocs.length + " " + top.totalHits);
      }
    }
  }

  @Test
  @Timeout(900)
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
    String expected = "999 0.999 10 " + DOCS + " hits";
    assertEquals(expected, lastLine(dir.toString()), "a plain searcher");
    // Lucene's own top 10 by the searcher of 1,000 slices fits: what searchExact adds must too
    assertTrue(lastLine(dir.toString(), "2000", "lucene").startsWith("10 " + DOCS), "Lucene's top 10");
    assertEquals(expected, lastLine(dir.toString(), "250000"), "8 slices of 250,000 documents");
    assertEquals(expected, lastLine(dir.toString(), "2000"), "1,000 slices of 2,000 documents");
  }

  /** The last line of TopTen's output for {@code args} on a 64 MB heap, once it ended well. */
  private static String lastLine(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", "-Xmx64m", "-cp",
        System.getProperty("java.class.path"), TopTen.class.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(500, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), String.join(" ", args) + ": " + out);
    List<String> lines = out.lines().filter(l -> !l.startsWith("WARNING")).toList();
    return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
  }
}
