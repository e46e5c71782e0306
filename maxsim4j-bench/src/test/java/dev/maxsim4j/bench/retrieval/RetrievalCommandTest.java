package dev.maxsim4j.bench.retrieval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.bench.retrieval.KnownItems.Item;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.BenchRun;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The retrieval command end to end on small inputs, and its one-line refusals. */
class RetrievalCommandTest {
  @TempDir Path dir;

  @Test
  void cacheEncodesResumablyAndTheEvaluationReportsEveryMethod() throws IOException {
    List<Item> items = new ArrayList<>();
    String[] topics = {"image viewer", "mail client", "music player", "text editor", "web browser", "chess game",
        "font package", "database server"};
    for (int i = 0; i < topics.length; i++) {
      items.add(new Item("p" + i, "1", "0123456789ab" + i, "A " + topics[i],
          "This program is a " + topics[i].split(" ")[1] + " for the " + topics[i].split(" ")[0] + " of a user."));
    }
    TokenCache cache = new TokenCache(dir, "test", 3);
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    cache.encode(items, 5, new PrintStream(log, true, StandardCharsets.UTF_8));
    assertEquals(2, cache.encodedChunks(6)); // whole chunks: the first 6 packages
    assertEquals(2, log.toString(StandardCharsets.UTF_8).lines().count());
    cache.encode(items, 6, new PrintStream(log, true, StandardCharsets.UTF_8)); // nothing left to do
    assertEquals(2, log.toString(StandardCharsets.UTF_8).lines().count());
    try (Arena arena = Arena.ofShared(); MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
      Encoded docs = cache.load("doc", 5, arena);
      TokenBatch reference = encoder.encode(items.subList(0, 5).stream().map(Item::text).toList());
      assertEquals(reference.offsets()[5], docs.tokenCount());
      for (int i = 0; i < 5; i++) {
        float[][] row = docs.row(i);
        for (int t = 0; t < row.length; t++) {
          for (int k = 0; k < MiniLmTokenEncoder.DIM; k++) {
            assertEquals(reference.get(i, t, k), row[t][k], Math.abs(reference.get(i, t, k)) / 128 + 1e-6);
          }
        }
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Path json = dir.resolve("r.json");
    String[] argv = {"retrieval", "--docs", "6", "--queries", "3", "--candidates", "2,4", "--fde", "2:2:4,3:2:4:16",
        "--index-dir", dir.resolve("index").toString(), "--threads", "1", "--lucene-exact", "2", "--exact-timed", "2",
        "--json", json.toString()};
    Args a = new Args("maxsim4j bench", "retrieval", argv, 1, Set.of("--docs", "--queries", "--candidates", "--fde",
        "--index-dir", "--threads", "--lucene-exact", "--exact-timed", "--json"), Set.of());
    assertEquals(0, KnownItemEvaluation.run(a, items, cache, new PrintStream(out, true, StandardCharsets.UTF_8)));
    String printed = out.toString(StandardCharsets.UTF_8);
    for (String method : new String[] {"exact MaxSim (in memory, bf16)", "exact MaxSim (in memory, fp32)",
        "FDE scan only", "FDE scan + exact rerank", "mean-pooled scan + exact rerank", "FDE HNSW only (k=10)",
        "FDE HNSW + exact rerank", "mean-pooled HNSW + exact rerank", "exact MaxSim in Lucene (brute force)"}) {
      assertTrue(printed.contains("  " + method + " "), method + " in\n" + printed);
    }
    String written = Files.readString(json);
    assertEquals(1 + 1 + 3 * 2 + 3 + 1 + 2 + 2 + 1, written.lines().filter(l -> l.contains("\"method\"")).count(),
        written);
    // six documents: every candidate set of 4+ reranked exactly finds what exact search finds
    assertTrue(written.contains("\"candidates\": 4, \"recall_at_1\""), written);
  }

  @Test
  void syntheticScalingTimesBothMethods() throws IOException {
    Path json = dir.resolve("s.json");
    BenchRun r = BenchRun.of("retrieval", "--synthetic", "50,120", "--queries", "4", "--candidates", "20", "--fde", "2:2:4",
        "--threads", "1", "--index-dir", dir.toString(), "--json", json.toString());
    assertEquals(0, r.status(), r.err());
    assertEquals(4, Files.readString(json).lines().filter(l -> l.contains("\"method\"")).count());
    assertTrue(r.out().contains("120 docs: generated"), r.out());
    BenchRun exact = BenchRun.of("retrieval", "--synthetic", "50,120", "--queries", "4", "--exact-only", "--threads",
        "1", "--index-dir", dir.toString());
    assertEquals(0, exact.status(), exact.err());
    assertTrue(exact.out().contains("120 docs: generated") && !exact.out().contains("FDE HNSW"), exact.out());
  }

  @Test
  void badArgumentsAreOneLine() {
    assertTrue(BenchRun.of("retrieval", "--synthetic", "10,x").refusedWith("retrieval: --synthetic '10,x'; expected"
        + " integers from 1 to 2147483647"));
    assertTrue(BenchRun.of("retrieval", "--synthetic", "0").refusedWith("retrieval: --synthetic '0'; expected"
        + " integers from 1"));
    assertTrue(BenchRun.of("retrieval", "--synthetic", "99999999999").refusedWith("--synthetic '99999999999';"
        + " expected integers from 1 to 2147483647"));
    // every query's tokens are held at once: a count past the heap is refused, not run out of memory
    BenchRun queries = BenchRun.of("retrieval", "--synthetic", "100", "--exact-only", "--queries", "999999999");
    assertTrue(queries.refusedWith("retrieval: --queries 999999999; their tokens take about"), queries.err());
    assertTrue(BenchRun.of("retrieval", "--synthetic", "10", "--fde", "1:1:1,2:2:2").refusedWith("retrieval: --fde"));
    assertTrue(BenchRun.of("retrieval", "--synthetic", "10", "--fde", "4:8").refusedWith("expected bits:repetitions:projection"));
    // a refusal worded without the command (FdeParams', Lz4's) is named by the bench's dispatch
    BenchRun fde = BenchRun.of("retrieval", "--synthetic", "10", "--fde", "4:8");
    assertTrue(fde.err().startsWith("maxsim4j bench: retrieval: --fde '4:8'"), fde.err());
    assertTrue(BenchRun.of("retrieval", "--synthetic", "10", "--fde", "11:1:1").refusedWith("simHashBits = 11"));
    // a missing input is named as the user commands name one (exit 1, as for any input that cannot be read)
    BenchRun missing = BenchRun.of("retrieval", "--translations", dir.resolve("none").toString());
    assertTrue(missing.failedCleanly() && missing.err().contains("--translations " + dir.resolve("none")
        + ": no such file; expected an apt list"), missing.err());
    assertTrue(BenchRun.of("retrieval", "--bogus").refusedWith("unknown option '--bogus'"));
  }
}
