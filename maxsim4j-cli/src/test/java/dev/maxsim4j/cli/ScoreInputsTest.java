package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** score's inputs and outputs: packed files, mask defaults, options that cannot take effect, safe outputs. */
class ScoreInputsTest {
  @TempDir Path dir;

  private final SplittableRandom rnd = new SplittableRandom(7);

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  private float[] randoms(int n) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (float) rnd.nextGaussian();
    }
    return a;
  }

  private static NdArray longs(String name, long... v) {
    return NdArray.ofSegment(name, NdArray.ElementType.I64, new long[] {v.length}, MemorySegment.ofArray(v));
  }

  private static short[] bf16(float[] f) {
    short[] s = new short[f.length];
    for (int i = 0; i < f.length; i++) {
      s[i] = DType.BFLOAT16.narrow(f[i]);
    }
    return s;
  }

  /**
   * A shape the library refuses (more empty rows than its row arrays hold) is named by the input and tensor it came
   * from: the library's message alone named neither, so that with --pairwise on one file either side could have
   * failed. Found by a hostile tester.
   */
  @Test
  void aShapeTheLibraryRefusesIsNamedByItsOption() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofSegment("e", NdArray.ElementType.F32, new long[] {Integer.MAX_VALUE, 0, 4},
        MemorySegment.ofArray(new float[0])));
    SafeTensors.write(dir.resolve("empty.safetensors"), t);
    Npy.writeFloats(dir.resolve("q.npy"), randoms(5 * 4), 1, 5, 4);
    CliRun r = run("score", "--queries", p("q.npy"), "--docs", p("empty.safetensors"), "--out", p("s.npy"));
    assertOneLineError(r, 1, "error: docs " + p("empty.safetensors") + ":embeddings: shape [2147483647, 0,"
        + " 4] has 2147483647 rows; expected at most");
  }

  /**
   * Packed offsets of more rows than the heap can read and book are refused naming them, in a JVM of 32 MiB, where
   * the heap ran out naming nothing. Found by a hostile tester.
   */
  @Test
  void packedOffsetsPastTheHeapAreNamed() throws Exception {
    long[] offsets = new long[1_500_001]; // empty rows: 12 MB of offsets, 36 MB read and booked
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofSegment("e", NdArray.ElementType.F32, new long[] {0, 4},
        MemorySegment.ofArray(new float[0])));
    t.put("offsets", longs("o", offsets));
    SafeTensors.write(dir.resolve("packed.safetensors"), t);
    Npy.writeFloats(dir.resolve("q.npy"), randoms(5 * 4), 1, 5, 4);
    Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx32m",
        "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), NonUtf8LocaleTest.Child.class.getName(),
        String.join("\u0001", "score", "--queries", p("q.npy"), "--docs", p("packed.safetensors"), "--out",
            p("s.npy"))).redirectErrorStream(true).start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, child.waitFor(), output);
    assertTrue(output.contains("1 maxsim4j: error: docs offsets " + p("packed.safetensors") + ":offsets has 1500001"
        + " entries, whose reading and bookkeeping take 36000024 bytes, more than this JVM's whole heap"), output);
  }

  @Test
  void packedSafetensorsAndNpyScoreLikeTheLibrary() throws IOException {
    int[] offsets = {0, 3, 3, 8, 12};
    float[] tokens = randoms(12 * 8);
    short[] bits = bf16(tokens);
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", new NdArray("e", NdArray.ElementType.BF16, new long[] {12, 8}, null, bits, null));
    t.put("offsets", longs("o", 0, 3, 3, 8, 12));
    SafeTensors.write(dir.resolve("p.safetensors"), t);
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    CliRun r = run("score", "--queries", p("q.npy"), "--docs", p("p.safetensors"), "--out", p("s.npy"));
    assertEquals(0, r.status(), r.err());
    TokenBatch q = TokenBatch.ofFloats(Npy.read(dir.resolve("q.npy")).floats(), 2, 5, 8);
    try (MaxSim m = MaxSim.create()) {
      float[][] expected = m.scores(q, TokenBatch.packedHalfs(DType.BFLOAT16, bits, offsets, 8));
      float[] got = Npy.read(dir.resolve("s.npy")).floats();
      for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 4; j++) {
          assertEquals(expected[i][j], got[i * 4 + j], 0f);
        }
      }
      // the same tokens as .npy with --doc-offsets (int32)
      Npy.writeFloats(dir.resolve("p.npy"), tokens, 12, 8);
      Npy.write(dir.resolve("o.npy"), NdArray.ofSegment("o", NdArray.ElementType.I32, new long[] {5},
          MemorySegment.ofArray(offsets)));
      CliRun n = run("score", "--queries", p("q.npy"), "--docs", p("p.npy"), "--doc-offsets", p("o.npy"),
          "--out", p("s2.npy"));
      assertEquals(0, n.status(), n.err());
      assertArrayEquals(new long[] {2, 4}, Npy.read(dir.resolve("s2.npy")).shape());
    }
    Npy.write(dir.resolve("bad.npy"), longs("b", 0, 5, 4, 12));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("p.npy"), "--doc-offsets", p("bad.npy"),
        "--out", p("x.npy")), 1, "decrease at 2");
    Npy.write(dir.resolve("short.npy"), longs("b", 0, 5, 11));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("p.npy"), "--doc-offsets", p("short.npy"),
        "--out", p("x.npy")), 1, "end at 11; expected 12");
    Npy.write(dir.resolve("late.npy"), longs("b", 1, 12));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("p.npy"), "--doc-offsets", p("late.npy"),
        "--out", p("x.npy")), 1, "start at 1");
    Npy.write(dir.resolve("far.npy"), longs("b", 0, 1L << 40, 12));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("p.npy"), "--doc-offsets", p("far.npy"),
        "--out", p("x.npy")), 1, "past the 12 tokens");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("p.npy"), "--doc-offsets", p("q.npy"),
        "--out", p("x.npy")), 1, "expected int32 or int64 offsets");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--query-offsets", p("o.npy"), "--docs", p("p.npy"),
        "--out", p("x.npy")), 2, "--query-offsets is for packed");
  }

  @Test
  void maskTensorDefaultsToTheEmbeddingsFileAndElseIsAnError() throws IOException {
    boolean[] mask = new boolean[2 * 5];
    for (int i = 0; i < mask.length; i++) {
      mask[i] = i % 5 < 2 || i == 8; // row 1 is not a trailing mask
    }
    float[] q = randoms(2 * 5 * 8);
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("e", NdArray.ofFloats("e", new long[] {2, 5, 8}, q));
    t.put("m", new NdArray("m", NdArray.ElementType.BOOL, new long[] {2, 5}, null, null, mask));
    SafeTensors.write(dir.resolve("q.safetensors"), t);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    CliRun r = run("score", "--queries", p("q.safetensors"), "--queries-tensor", "e", "--query-mask-tensor", "m",
        "--docs", p("d.npy"), "--out", p("s.npy"));
    assertEquals(0, r.status(), r.err());
    try (MaxSim m = MaxSim.create()) {
      TokenBatch d = TokenBatch.ofFloats(Npy.read(dir.resolve("d.npy")).floats(), 3, 4, 8);
      float[][] masked = m.scores(TokenBatch.ofFloats(q, 2, 5, 8).withMask(mask), d);
      float[] got = Npy.read(dir.resolve("s.npy")).floats();
      for (int j = 0; j < 3; j++) {
        assertEquals(masked[1][j], got[3 + j], 0f);
      }
    }
    Npy.writeFloats(dir.resolve("q.npy"), q, 2, 5, 8);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--query-mask-tensor", "m", "--docs", p("d.npy"),
        "--out", p("x.npy")), 2, "--query-mask-tensor needs --query-mask");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("x.npy"),
        "--out-run", p("r.tsv")), 2, "--out-run needs --top-k");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("x.npy"),
        "--top-k", "2", "--out-run", p("r.tsv")), 2, "--out has no effect with --top-k");
  }

  /** Queries as [B, K, L, d] (the documents' candidate layout) are refused, not read as B x K queries. */
  @Test
  void fourDimensionalQueriesAreRefused() throws IOException {
    Npy.writeFloats(dir.resolve("q4.npy"), randoms(2 * 4 * 5 * 8), 2, 4, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 5 * 8), 3, 5, 8);
    assertOneLineError(run("score", "--queries", p("q4.npy"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "has shape [2, 4, 5, 8]; expected [N, L, d] or [L, d]");
  }

  /** Leading axes of 2^31 rows or more (with L = 0, no tokens at all) are refused, not wrapped to a few rows. */
  @Test
  void moreThanTwoToThe31RowsAreRefused() {
    for (long[] shape : new long[][] {{(1L << 32) + 3, 0, 4}, {1L << 33, 0, 4}, {1L << 16, 1L << 16, 0, 4}}) {
      NdArray e = NdArray.ofFloats("e", shape, new float[0]);
      IllegalArgumentException x = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
          () -> Inputs.padded("docs", e, null));
      assertTrue(x.getMessage().contains("more than 2^31-1 rows"), x.getMessage());
    }
  }

  /** A mask beside embeddings of too few axes names their shape, as without a mask (not a negative array size). */
  @Test
  void aMaskBesideEmbeddingsOfTooFewAxesIsRefusedByTheirShape() {
    NdArray mask = new NdArray("m", NdArray.ElementType.BOOL, new long[] {1}, null, null, new boolean[] {true});
    for (long[] shape : new long[][] {{}, {4}}) {
      NdArray e = NdArray.ofFloats("e", shape, new float[shape.length == 0 ? 1 : 4]);
      IllegalArgumentException x = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
          () -> Inputs.padded("docs", e, mask));
      assertTrue(x.getMessage().contains("expected [N, L, d]"), x.getMessage());
    }
  }

  @Test
  void trailingMasksBecomeLengthsAndOtherMasksStayMasks() {
    assertArrayEquals(new int[] {2, 0, 3}, Inputs.trailingLengths(
        new boolean[] {true, true, false, false, false, false, true, true, true}, 3, 3));
    assertNull(Inputs.trailingLengths(new boolean[] {true, false, true}, 1, 3));
    NdArray e = NdArray.ofFloats("e", new long[] {2, 3, 4}, new float[24]);
    NdArray trailing = new NdArray("m", NdArray.ElementType.BOOL, new long[] {2, 3}, null, null,
        new boolean[] {true, false, false, true, true, false});
    TokenBatch b = Inputs.padded("docs", e, trailing);
    assertEquals(1, b.length(0));
    assertEquals(2, b.length(1));
  }

  @Test
  void topKWithCandidatesRanksEachQuerysOwnCandidates() throws IOException {
    float[] q = randoms(2 * 5 * 8);
    float[] d = randoms(2 * 3 * 7 * 8);
    Npy.writeFloats(dir.resolve("q.npy"), q, 2, 5, 8);
    Npy.writeFloats(dir.resolve("d4.npy"), d, 2, 3, 7, 8);
    CliRun r = run("score", "--queries", p("q.npy"), "--docs", p("d4.npy"), "--top-k", "5", "--out-run", p("r.tsv"));
    assertEquals(0, r.status(), r.err());
    List<String> lines = Files.readAllLines(dir.resolve("r.tsv"));
    assertEquals(6, lines.size(), "min(k, K) = 3 per query");
    try (MaxSim m = MaxSim.create()) {
      float[][] c = m.candidates(TokenBatch.ofFloats(q, 2, 5, 8), TokenBatch.ofFloats(d, 6, 7, 8), 3);
      for (String line : lines) {
        String[] f = line.split("\t");
        int doc = Integer.parseInt(f[1]);
        assertTrue(doc < 3, line);
        assertEquals(c[Integer.parseInt(f[0])][doc], Float.parseFloat(f[3]), 0f);
      }
    }
  }

  @Test
  void outputsAreCheckedAndNeverHalfWritten() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    byte[] before = Files.readAllBytes(dir.resolve("d.npy"));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("d.npy")), 1,
        "is also the input");
    Files.createSymbolicLink(dir.resolve("alias.npy"), dir.resolve("q.npy"));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("alias.npy")), 1,
        "is also the input");
    assertArrayEquals(before, Files.readAllBytes(dir.resolve("d.npy")));
    Files.createDirectories(dir.resolve("folder"));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("folder")), 2,
        "is a directory; expected a file to write");
    assertOneLineError(run("score", "--queries", p("folder"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "--queries " + p("folder") + " is a directory; expected a .npy or .safetensors file");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("nope/s.npy")), 1,
        "does not exist");
    CliRun ok = run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("s.npy"));
    assertEquals(0, ok.status(), ok.err());
    byte[] previous = Files.readAllBytes(dir.resolve("s.npy"));
    Npy.writeFloats(dir.resolve("d16.npy"), randoms(3 * 4 * 16), 3, 4, 16);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d16.npy"), "--out", p("s.npy")), 1,
        "mismatch");
    assertArrayEquals(previous, Files.readAllBytes(dir.resolve("s.npy")), "a failed run keeps the previous output");
    try (Stream<Path> files = Files.list(dir)) {
      assertFalse(files.anyMatch(f -> f.getFileName().toString().endsWith(".tmp")), "no temporary file is left");
    }
  }

  /** [L, d] is one row of L tokens: its mask is [L] or, as [N, L] with N = 1, [1, L]; [2, L] is refused. */
  @Test
  void aMaskOfOneRowIsTakenBesideEmbeddingsOfOneRow() throws IOException {
    float[] q = randoms(3 * 4);
    Npy.writeFloats(dir.resolve("q2d.npy"), q, 3, 4);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(2 * 5 * 4), 2, 5, 4);
    boolean[] mask = {true, false, true};
    Npy.writeBools(dir.resolve("flat.npy"), mask, 3);
    Npy.writeBools(dir.resolve("row.npy"), mask, 1, 3);
    float[][] scores = new float[2][];
    int i = 0;
    for (String m : new String[] {"flat.npy", "row.npy"}) {
      CliRun r = run("score", "--queries", p("q2d.npy"), "--query-mask", p(m), "--docs", p("d.npy"), "--out",
          p("s" + m));
      assertEquals(0, r.status(), r.err());
      scores[i++] = Npy.read(dir.resolve("s" + m)).floats();
    }
    assertArrayEquals(scores[0], scores[1]);
    Npy.writeBools(dir.resolve("two.npy"), new boolean[6], 2, 3);
    assertOneLineError(run("score", "--queries", p("q2d.npy"), "--query-mask", p("two.npy"), "--docs", p("d.npy"),
        "--out", p("s.npy")), 1, "has shape [2, 3]; expected [3] or [1, 3] to match embeddings [3, 4]");
  }

  /**
   * Scores are written as .npy: under a .safetensors name (one file or a folder of shards) they would be taken for a
   * damaged .safetensors file, or for a shard by the next score of that folder, and under a text name for text, so
   * any name but .npy is refused up front.
   */
  @Test
  void scoresAreWrittenOnlyUnderAnNpyName() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    for (String name : new String[] {"s.SafeTensors", "s.txt", "s.tsv", "s", "s.npy.tmp"}) {
      assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p(name)), 2,
          "--out " + p(name) + " does not end in .npy; score writes its scores as a float32 .npy array");
      assertFalse(Files.exists(dir.resolve(name)), name);
    }
    CliRun upper = run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("s.NPY"));
    assertEquals(0, upper.status(), upper.err());
    // the run file is text: under an array's name, inside a folder of shards, the next score took it for a shard
    Path shards = Files.createDirectories(dir.resolve("shards"));
    for (String name : new String[] {"run.safetensors", "run.NPY"}) {
      assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--top-k", "2", "--out-run",
          shards.resolve(name).toString()), 2, "but the run is a text file");
      assertFalse(Files.exists(shards.resolve(name)));
    }
  }

  /**
   * An output name near the file system's 255-byte limit is written (its temporary file's name does not grow
   * with it); a path ending in a separator names a folder and is refused, the file without the separator kept;
   * candidates of K = 0 are refused naming the file and its shape. Found by a hostile test.
   */
  @Test
  void longOutputNamesTrailingSeparatorsAndEmptyCandidates() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    String longName = "s".repeat(250) + ".npy";
    CliRun ok = run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p(longName));
    assertEquals(0, ok.status(), ok.err());
    assertTrue(Files.size(dir.resolve(longName)) > 0);
    Files.writeString(dir.resolve("keep.npy"), "keep");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("keep.npy") + "/"), 2,
        "names a folder (it ends in a separator); expected a file to write");
    assertEquals("keep", Files.readString(dir.resolve("keep.npy")));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("new") + "/"), 2,
        "names a folder");
    assertFalse(Files.exists(dir.resolve("new")));
    // the output is checked before any input is read: here the damaged documents would have been named first
    Files.writeString(dir.resolve("damaged.npy"), "not an array");
    Files.createDirectories(dir.resolve("shards"));
    Files.createSymbolicLink(dir.resolve("run.tsv"), dir.resolve("q.npy"));
    for (String docs : new String[] {p("damaged.npy"), p("shards")}) {
      assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", docs, "--out", p("gone") + "/s.npy"), 1,
          "--out " + p("gone") + "/s.npy: the folder " + p("gone") + " does not exist");
      assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", docs, "--top-k", "1", "--out-run",
          p("run.tsv")), 1, "--out-run " + p("run.tsv") + " is also the input");
    }
    Npy.writeFloats(dir.resolve("empty.npy"), new float[0], 2, 0, 4, 8);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("empty.npy"), "--out", p("e.npy")), 1,
        "K = 0 candidates per query; expected at least 1");
  }

  @Test
  void outputsThatAMoveWouldReplaceAreRefusedAndLinksAreWrittenThrough() throws Exception {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    Path fifo = dir.resolve("pipe");
    assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
    assertEquals(0, new ProcessBuilder("mkfifo", p("pipe.npy")).start().waitFor());
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("pipe.npy")), 1,
        "is not a regular file");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--top-k", "1", "--out-run",
        p("pipe")), 1, "is not a regular file");
    assertTrue(Files.exists(fifo) && !Files.isRegularFile(fifo), "the pipe is still a pipe");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", ""), 2,
        "--out = ''; expected a non-empty value");

    Files.writeString(dir.resolve("real.npy"), "old");
    Path link = Files.createSymbolicLink(dir.resolve("link.npy"), Path.of("real.npy"));
    CliRun viaLink = run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("link.npy"));
    assertEquals(0, viaLink.status(), viaLink.err());
    assertTrue(Files.isSymbolicLink(link), "the link stays a link");
    assertEquals(2, Npy.read(dir.resolve("real.npy")).rank(), "the scores went to the file it names");
    Files.createSymbolicLink(dir.resolve("dangling.npy"), Path.of("fresh.npy"));
    assertEquals(0, run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("dangling.npy")).status());
    assertTrue(Files.isRegularFile(dir.resolve("fresh.npy")));
    Files.createSymbolicLink(dir.resolve("loop1.npy"), Path.of("loop2.npy"));
    Files.createSymbolicLink(dir.resolve("loop2.npy"), Path.of("loop1.npy"));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("loop1.npy")), 1,
        "loop of symbolic links");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("q.npy") + "/s.npy"),
        1, "is not a folder");
    try (Stream<Path> files = Files.list(dir)) {
      assertFalse(files.anyMatch(f -> f.getFileName().toString().endsWith(".tmp")), "no temporary file is left");
    }
  }

  @Test
  void anOptionGivenTwiceIsAUsageError() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("a.npy"), "--out",
        p("b.npy")), 2, "--out is given twice");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--queries", p("d.npy"), "--docs", p("d.npy"),
        "--out", p("a.npy")), 2, "--queries is given twice");
    assertFalse(Files.exists(dir.resolve("a.npy")) || Files.exists(dir.resolve("b.npy")));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--top-k", "99999999999",
        "--out-run", p("r.tsv")), 2, "expected 1 <= --top-k <= 2147483647");
  }

  /** An option whose value is missing does not take the next option's name as its value (a file of that name). */
  @Test
  void anOptionFollowedByAnotherOptionIsAUsageError() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out-run", "--top-k", "3"), 2,
        "--out-run needs a value, not the option --top-k");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", "--normalize"), 2,
        "--out needs a value, not the option --normalize");
    assertFalse(Files.exists(dir.resolve("--top-k")) || Files.exists(Path.of("--top-k")));
    // an option this command does not take is not a value either (its own value was then "an unknown option")
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", "--dir", p("d.npy"), "--out", p("s.npy")), 2,
        "--docs needs a value, not '--dir' (an option score does not take");
    // free text may start with two dashes
    CliRun text = run("rerank", "--query", "--literally", "--candidates", p("missing.txt"));
    assertFalse(text.err().contains("needs a value"), text.err());
  }

  /** --threads is checked against what MaxSim takes, by its own name, before any work. */
  @Test
  void threadsBeyondTheLibrarysLimitAreAUsageError() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("s.npy"), "--threads",
        "100000"), 2, "--threads = 100000; expected 1 <= --threads <= " + dev.maxsim4j.MaxSim.MAX_THREADS);
    assertFalse(Files.exists(dir.resolve("s.npy")));
  }

  @Test
  void aTokenDimensionOfZeroNamesTheFile() throws IOException {
    Npy.writeFloats(dir.resolve("q0.npy"), new float[0], 2, 5, 0);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    assertOneLineError(run("score", "--queries", p("q0.npy"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "queries " + p("q0.npy") + " has shape [2, 5, 0]; expected a token dimension d >= 1");
    Npy.writeFloats(dir.resolve("p0.npy"), new float[0], 3, 0);
    Npy.write(dir.resolve("o.npy"), longs("o", 0, 3));
    assertOneLineError(run("score", "--queries", p("d.npy"), "--docs", p("p0.npy"), "--doc-offsets", p("o.npy"),
        "--out", p("s.npy")), 1, "docs " + p("p0.npy") + " has shape [3, 0]; expected a token dimension d >= 1");
  }

  @Test
  void unsupportedDtypesAreRefusedAsEmbeddingsAndMasks() throws IOException {
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    Npy.write(dir.resolve("i.npy"), longs("i", 1, 2, 3, 4));
    assertOneLineError(run("score", "--queries", p("i.npy"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "holds int64; expected float32");
    Npy.writeFloats(dir.resolve("m.npy"), new float[12], 3, 4);
    assertOneLineError(run("score", "--queries", p("d.npy"), "--docs", p("d.npy"), "--doc-mask", p("m.npy"),
        "--out", p("s.npy")), 1, "holds float32; expected bool, uint8, int32 or int64 flags");
  }

  /**
   * A mask holds flags, 0 or 1: any other byte (a uint8 array of token ids, a damaged bool array) was read as "valid"
   * and scored without a word. Found by a hostile test.
   */
  @Test
  void masksOfValuesOtherThanZeroAndOneAreRefused() throws IOException {
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    byte[] flags = {1, 1, 1, 1, 1, 1, 2, 0, 1, 1, 1, 1};
    Npy.write(dir.resolve("m.npy"), NdArray.ofSegment("m", NdArray.ElementType.U8, new long[] {3, 4},
        MemorySegment.ofArray(flags)));
    assertOneLineError(run("score", "--queries", p("d.npy"), "--docs", p("d.npy"), "--doc-mask", p("m.npy"),
        "--out", p("s.npy")), 1, "docs mask " + p("m.npy") + " holds 2 at [1, 2]; expected 0 or 1");
    flags[6] = 1;
    flags[11] = (byte) 0xff;
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {3, 4, 8}, randoms(3 * 4 * 8)));
    t.put("mask", NdArray.ofSegment("m", NdArray.ElementType.BOOL, new long[] {3, 4}, MemorySegment.ofArray(flags)));
    SafeTensors.write(dir.resolve("e.safetensors"), t);
    assertOneLineError(run("score", "--queries", p("e.safetensors"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "queries mask " + p("e.safetensors") + ":mask holds 255 at [2, 3]; expected 0 or 1");
    // quantize copies the mask only after the checks score makes
    assertOneLineError(run("quantize", "--in", p("e.safetensors"), "--to", "int8", "--out", p("c.safetensors")), 1,
        "mask " + p("e.safetensors") + ":mask holds 255 at [2, 3]; expected 0 or 1");
    assertFalse(Files.exists(dir.resolve("s.npy")));
    assertFalse(Files.exists(dir.resolve("c.safetensors")));
  }

  /**
   * A tokenizer's attention_mask comes as int64 (Hugging Face, PyTorch) or int32: taken as flags, scoring as the bool
   * mask of the same values, in .npy and .safetensors alike; a value other than 0 or 1 is refused by place.
   */
  @Test
  void integerMasksScoreAsBoolMasks() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 3 * 8), 2, 3, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    boolean[] flags = {true, true, false, true, false, false, false, false, false, true, true, true};
    long[] ones = new long[flags.length];
    int[] ints = new int[flags.length];
    for (int i = 0; i < flags.length; i++) {
      ones[i] = flags[i] ? 1 : 0;
      ints[i] = (int) ones[i];
    }
    Npy.write(dir.resolve("b.npy"), new NdArray("b", NdArray.ElementType.BOOL, new long[] {3, 4}, null, null, flags));
    Npy.write(dir.resolve("l.npy"), NdArray.ofSegment("l", NdArray.ElementType.I64, new long[] {3, 4},
        MemorySegment.ofArray(ones)));
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", Npy.read(dir.resolve("d.npy")));
    t.put("mask", NdArray.ofSegment("m", NdArray.ElementType.I32, new long[] {3, 4}, MemorySegment.ofArray(ints)));
    SafeTensors.write(dir.resolve("d.safetensors"), t);
    assertEquals(0, run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--doc-mask", p("b.npy"), "--out",
        p("b.s.npy")).status());
    assertEquals(0, run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--doc-mask", p("l.npy"), "--out",
        p("l.s.npy")).status());
    assertEquals(0, run("score", "--queries", p("q.npy"), "--docs", p("d.safetensors"), "--out", p("i.s.npy"))
        .status());
    float[] expected = Npy.read(dir.resolve("b.s.npy")).floats();
    assertEquals(-1e9f, expected[1], "document 1 has no valid token");
    assertArrayEquals(expected, Npy.read(dir.resolve("l.s.npy")).floats());
    assertArrayEquals(expected, Npy.read(dir.resolve("i.s.npy")).floats());
    ones[6] = 7;
    Npy.write(dir.resolve("l7.npy"), NdArray.ofSegment("l", NdArray.ElementType.I64, new long[] {3, 4},
        MemorySegment.ofArray(ones)));
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--doc-mask", p("l7.npy"),
        "--out", p("s.npy")), 1, "docs mask " + p("l7.npy") + " holds 7 at [1, 2]; expected 0 or 1");
  }

  /** Offsets beside padded embeddings would be silently ignored: refused instead. */
  @Test
  void offsetsBesidePaddedEmbeddingsAreRefused() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {2, 3, 8}, randoms(2 * 3 * 8)));
    t.put("offsets", longs("o", 0, 2, 3));
    SafeTensors.write(dir.resolve("pad.safetensors"), t);
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("pad.safetensors"), "--out", p("s.npy")), 1,
        "holds an 'offsets' tensor, but its embeddings");
  }

  /** A replaced output keeps the permissions it had: an owner-only file does not become world-readable. */
  @Test
  void aReplacedOutputKeepsItsPermissions() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Npy.writeFloats(dir.resolve("d.npy"), randoms(3 * 4 * 8), 3, 4, 8);
    Path out = Files.writeString(dir.resolve("s.npy"), "old");
    var ownerOnly = java.nio.file.attribute.PosixFilePermissions.fromString("rw-------");
    Files.setPosixFilePermissions(out, ownerOnly);
    assertEquals(0, run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("s.npy")).status());
    assertEquals(2, Npy.read(out).rank());
    assertEquals(ownerOnly, Files.getPosixFilePermissions(out));
  }

  /** A count of one reads in the singular: "1 bytes" read as a typo in the message that names a truncated file. */
  @Test
  void aOneByteFileIsNamedInTheSingular() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), randoms(2 * 5 * 8), 2, 5, 8);
    Files.write(dir.resolve("one.npy"), new byte[] {(byte) 0x93});
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("one.npy"), "--out", p("s.npy")), 1,
        p("one.npy") + " is not a .npy file (1 byte, too short)");
    Files.write(dir.resolve("one.safetensors"), new byte[] {'{'});
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("one.safetensors"), "--out", p("s.npy")), 1,
        p("one.safetensors") + " is not a .safetensors file (1 byte, too short)");
    Files.write(dir.resolve("two.npy"), new byte[2]);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("two.npy"), "--out", p("s.npy")), 1,
        p("two.npy") + " is not a .npy file (2 bytes, too short)");
  }

  /** An all-pairs matrix past one array is refused with the option that helps, not the library's API advice. */
  @Test
  void aScoreMatrixTooLargeForOneArrayPointsToTopK() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), new float[65_536], 65_536, 1, 1);
    Npy.writeFloats(dir.resolve("d.npy"), new float[32_769], 32_769, 1, 1);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "the score matrix [65536, 32769] has more than 2^31-1 entries, more than one .npy array written from Java"
            + " can hold; use --top-k K --out-run FILE");
    assertFalse(Files.exists(dir.resolve("s.npy")));
  }
}
