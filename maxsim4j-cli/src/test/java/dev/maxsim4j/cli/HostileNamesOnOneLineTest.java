package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Names of files and tensors may hold any character, line breaks and text-direction marks included: every line the
 * command line prints about them (an error, a warning, progress, the summary) stays one line and forges none.
 */
class HostileNamesOnOneLineTest {
  /** Characters that end a line or reorder it for some reader (a terminal, Python's splitlines, an editor). */
  private static final String BREAKERS = "\n\r\u000b\u000c\u001c\u001d\u001e\u0085\u2028\u2029\u202e\u2066\u001b";

  @TempDir Path dir;

  private static Map<String, NdArray> tensors(String... names) {
    Map<String, NdArray> t = new LinkedHashMap<>();
    for (String name : names) {
      t.put(name, NdArray.ofFloats(name, new long[] {5, 3, 4}, new float[60]));
    }
    return t;
  }

  /** Lines split as the most eager reader splits them, with no other character that rewrites a line. */
  private static List<String> lines(String printed) {
    String body = printed.endsWith("\n") ? printed.substring(0, printed.length() - 1) : printed;
    for (char c : BREAKERS.toCharArray()) {
      if (c != '\n') {
        assertFalse(body.indexOf(c) >= 0, "printed U+" + Integer.toHexString(c) + ": " + printed);
      }
    }
    return body.isEmpty() ? List.of() : List.of(body.split("\n", -1));
  }

  @Test
  void anErrorQuotingATensorOrFileNameIsOneLine() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), new float[24], 2, 3, 4);
    SafeTensors.write(dir.resolve("two.safetensors"), tensors("e\u2028x\u0085y\u202ez\u001b[2J", "other"));
    CliRun r = CliRun.of("score", "--queries", dir.resolve("q.npy").toString(), "--docs",
        dir.resolve("two.safetensors").toString(), "--out", dir.resolve("s.npy").toString());
    assertEquals(1, r.status(), r.err());
    assertEquals(1, lines(r.err()).size(), r.err());
    assertTrue(r.err().contains("holds 2 tensors"), r.err());

    CliRun missing = CliRun.of("score", "--queries", dir.resolve("q\u2029\u0085\u2066.npy").toString(), "--docs",
        dir.resolve("two.safetensors").toString(), "--out", dir.resolve("s.npy").toString());
    assertEquals(1, missing.status(), missing.err());
    assertEquals(1, lines(missing.err()).size(), missing.err());
    assertTrue(missing.err().contains("no such file"), missing.err());
  }

  /**
   * Invisible format characters (a zero-width space, a byte-order mark, a word joiner, a soft hyphen, the Arabic letter
   * mark) printed as they are made "embeddings\u200b" read as "embeddings": an error listed the very name it said was
   * missing. Found by a hostile test.
   */
  @Test
  void invisibleCharactersInANameAreShown() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), new float[24], 2, 3, 4);
    String invisible = "\u200b\ufeff\u2060\u00ad\u061c\u180e";
    SafeTensors.write(dir.resolve("two.safetensors"), tensors("embeddings" + invisible, "other"));
    CliRun r = CliRun.of("score", "--queries", dir.resolve("q.npy").toString(), "--docs",
        dir.resolve("two.safetensors").toString(), "--docs-tensor", "embeddings", "--out",
        dir.resolve("s.npy").toString());
    assertEquals(1, r.status(), r.err());
    assertTrue(r.err().contains("\"embeddings??????\""), r.err());
    // joiners stay: they belong to real names (Persian words, emoji sequences)
    SafeTensors.write(dir.resolve("two.safetensors"), tensors("\u0645\u06cc\u200c\u062e\ud83d\udc69\u200d\ud83d\udcbb",
        "other"));
    r = CliRun.of("score", "--queries", dir.resolve("q.npy").toString(), "--docs",
        dir.resolve("two.safetensors").toString(), "--out", dir.resolve("s.npy").toString());
    assertTrue(r.err().contains("\u0645\u06cc\u200c\u062e\ud83d\udc69\u200d\ud83d\udcbb"), r.err());
  }

  @Test
  void warningsProgressAndSummariesOfAShardFolderForgeNoLine() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), new float[24], 2, 3, 4);
    Path shards = Files.createDirectories(dir.resolve("shards"));
    Path shard = shards.resolve("a\nmaxsim4j: error: forged\u2028.safetensors");
    SafeTensors.write(shard, tensors("embeddings"));
    Npy.writeFloats(shards.resolve("b\nmaxsim4j: error: forged\u0085.npy"), new float[24], 2, 3, 4);
    for (List<String> out : List.of(List.of("--top-k", "2", "--out-run", dir.resolve("r\nx\u2028.tsv").toString()),
        List.of("--out", dir.resolve("s\nx\u2029.npy").toString()))) {
      List<String> args = new java.util.ArrayList<>(List.of("score", "--queries", dir.resolve("q.npy").toString(),
          "--docs", shards.toString()));
      args.addAll(out);
      CliRun r = CliRun.of(args.toArray(String[]::new));
      assertEquals(0, r.status(), r.err());
      List<String> err = lines(r.err());
      assertEquals(2, err.size(), r.err()); // the left-out .npy, the one shard's progress
      assertTrue(err.get(0).startsWith("maxsim4j: warning: "), r.err());
      assertTrue(err.get(1).startsWith("score: shard 1 of 1, "), r.err());
      assertEquals(1, lines(r.out()).size(), r.out());
    }

    CliRun q = CliRun.of("quantize", "--in", shard.toString(), "--to", "int8", "--out",
        dir.resolve("c\n\u202e.safetensors").toString());
    assertEquals(0, q.status(), q.err());
    assertEquals(1, lines(q.out()).size(), q.out());
    assertTrue(q.out().startsWith("quantized "), q.out());
  }
}
