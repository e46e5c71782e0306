package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.QuantizedFiles.codes;
import static dev.maxsim4j.cli.QuantizedFiles.gaussians;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code score --docs FOLDER}: shards scored one by one equal the concatenated file; the heap need not hold them. */
class ShardedScoreTest {
  @TempDir Path dir;
  private final SplittableRandom rnd = new SplittableRandom();

  /** A packed corpus: stored bytes of every token, per-token scales (quantized), a mask and row offsets. */
  private record Corpus(DType dtype, int d, byte[] data, float[] scales, boolean[] mask, int[] offsets) {
    long width() {
      return dtype == DType.FLOAT32 ? 4L * d : dtype.bytesPerToken(d);
    }

    /** Rows {@code from} to {@code to} as a .safetensors file as encode / quantize write them. */
    void write(Path file, int from, int to) throws IOException {
      int t0 = offsets[from];
      int t1 = offsets[to];
      Map<String, NdArray> t = new LinkedHashMap<>();
      byte[] slice = Arrays.copyOfRange(data, (int) (t0 * width()), (int) (t1 * width()));
      long[] shape = {t1 - t0, dtype == DType.FLOAT32 ? d : width()};
      t.put("embeddings", NdArray.ofSegment("e", dtype == DType.FLOAT32 ? NdArray.ElementType.F32
          : TokenType.elementType(dtype), shape, MemorySegment.ofArray(slice)));
      if (scales != null) {
        t.put("scales", NdArray.ofFloats("s", new long[] {t1 - t0}, Arrays.copyOfRange(scales, t0, t1)));
      }
      t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {t1 - t0}, null, null,
          Arrays.copyOfRange(mask, t0, t1)));
      long[] o = new long[to - from + 1];
      for (int i = 0; i < o.length; i++) {
        o[i] = offsets[from + i] - t0;
      }
      t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {o.length},
          MemorySegment.ofArray(o)));
      SafeTensors.write(file, t);
    }
  }

  private Corpus corpus(DType dtype, int d, int n) {
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + 1 + rnd.nextInt(i % 5 == 0 ? 1 : 9); // ragged, L = 1 included
    }
    int tokens = offsets[n];
    boolean[] mask = new boolean[tokens];
    for (int t = 0; t < tokens; t++) {
      mask[t] = offsets[3] <= t && t < offsets[4] ? false : rnd.nextInt(5) != 0; // row 3: all masked
    }
    if (dtype == DType.FLOAT32) {
      ByteBuffer b = ByteBuffer.allocate(4 * tokens * d).order(ByteOrder.LITTLE_ENDIAN);
      for (float f : gaussians(rnd, tokens * d)) {
        b.putFloat(f);
      }
      return new Corpus(dtype, d, b.array(), null, mask, offsets);
    }
    return new Corpus(dtype, d, codes(rnd, dtype, tokens, d), QuantizedFiles.scales(rnd, tokens), mask, offsets);
  }

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  private static CliRun run(List<String> args) {
    return CliRun.of(args.toArray(String[]::new));
  }

  private static List<String> args(DType dtype, int d, String... a) {
    List<String> all = new ArrayList<>(List.of(a));
    if (dtype == DType.BINARY) {
      all.addAll(List.of("--docs-bits", String.valueOf(d)));
    }
    return all;
  }

  @Test
  void shardsScoreAndRankLikeTheConcatenatedFile() throws IOException {
    for (DType dtype : new DType[] {DType.FLOAT32, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      for (int d : new int[] {1, 3, 33, 127}) {
        String what = dtype + " d=" + d;
        int n = 23;
        Corpus c = corpus(dtype, d, n);
        Path shards = Files.createDirectories(dir.resolve("shards-" + dtype + "-" + d));
        int[] cuts = {0, 1, 11, 23}; // a one-document shard, then two larger ones
        for (int s = 0; s + 1 < cuts.length; s++) {
          c.write(shards.resolve("part-" + s + ".safetensors"), cuts[s], cuts[s + 1]);
        }
        Files.writeString(shards.resolve("README.txt"), "not a shard");
        c.write(dir.resolve("all.safetensors"), 0, n);
        float[] q = gaussians(rnd, 3 * 4 * d);
        Npy.writeFloats(dir.resolve("q.npy"), q, 3, 4, d);
        for (String k : new String[] {"5", "40"}) {
          CliRun one = run(args(dtype, d, "score", "--queries", p("q.npy"), "--docs", p("all.safetensors"),
              "--top-k", k, "--out-run", p("one.tsv")));
          assertEquals(0, one.status(), what + ": " + one.err());
          CliRun sharded = run(args(dtype, d, "score", "--queries", p("q.npy"), "--docs", shards.toString(),
              "--top-k", k, "--out-run", p("sharded.tsv")));
          assertEquals(0, sharded.status(), what + ": " + sharded.err());
          assertEquals(Files.readString(dir.resolve("one.tsv")), Files.readString(dir.resolve("sharded.tsv")), what);
          assertEquals(3, sharded.err().lines().filter(l -> l.startsWith("score: shard ")).count(), sharded.err());
          assertTrue(sharded.out().contains("of 23 documents in 3 shards"), sharded.out());
        }
        CliRun one = run(args(dtype, d, "score", "--queries", p("q.npy"), "--docs", p("all.safetensors"),
            "--out", p("one.npy")));
        assertEquals(0, one.status(), what + ": " + one.err());
        CliRun sharded = run(args(dtype, d, "score", "--queries", p("q.npy"), "--docs", shards.toString(),
            "--out", p("sharded.npy")));
        assertEquals(0, sharded.status(), what + ": " + sharded.err());
        float[] expected = Npy.read(dir.resolve("one.npy")).floats();
        float[] got = Npy.read(dir.resolve("sharded.npy")).floats();
        assertArrayEquals(expected, got, 0f, what);
        // and both are MaxSim on the stored values, checked in float64
        TokenBatch qb = TokenBatch.ofFloats(q, 3, 4, d);
        TokenBatch db = dtype == DType.FLOAT32
            ? TokenBatch.packedFromMemorySegment(MemorySegment.ofArray(c.data()), DType.FLOAT32, c.offsets(), d)
            : TokenBatch.packedBytes(dtype, c.data(), c.scales(), c.offsets(), d);
        db = db.withMask(c.mask());
        double[][] exact = QuantizedFiles.reference(qb, db);
        for (int i = 0; i < 3; i++) {
          for (int j = 0; j < n; j++) {
            QuantizedFiles.assertClose(exact[i][j], got[i * n + j], qb, i, db, j, what + " [" + i + ", " + j + "]");
          }
        }
      }
    }
  }

  @Test
  void paddedAndPackedShardsMix() throws IOException {
    int d = 33;
    float[] padded = gaussians(rnd, 2 * 5 * d);
    Path shards = Files.createDirectories(dir.resolve("mixed"));
    SafeTensors.write(shards.resolve("a.safetensors"), Map.of("embeddings", NdArray.ofFloats("e",
        new long[] {2, 5, d}, padded)));
    Corpus c = corpus(DType.FLOAT32, d, 7);
    c.write(shards.resolve("b.safetensors"), 0, 7);
    float[] q = gaussians(rnd, 2 * 3 * d);
    Npy.writeFloats(dir.resolve("q.npy"), q, 2, 3, d);
    Npy.writeFloats(shards.resolve("c.npy"), padded, 2, 5, d); // not a shard: named on stderr, left out
    // hidden: scored, it would come first and renumber every document
    SafeTensors.write(shards.resolve(".0.safetensors"), Map.of("embeddings", NdArray.ofFloats("e",
        new long[] {1, 5, d}, java.util.Arrays.copyOf(padded, 5 * d))));
    CliRun r = run(List.of("score", "--queries", p("q.npy"), "--docs", shards.toString(), "--out", p("s.npy")));
    assertEquals(0, r.status(), r.err());
    assertTrue(r.err().contains("left out 1 .npy file (c.npy); a folder's shards are .safetensors files"), r.err());
    assertTrue(r.err().contains("left out 1 hidden .safetensors file (.0.safetensors)"), r.err());
    float[] got = Npy.read(dir.resolve("s.npy")).floats();
    try (MaxSim m = MaxSim.create()) {
      TokenBatch qb = TokenBatch.ofFloats(q, 2, 3, d);
      float[][] a = m.scores(qb, TokenBatch.ofFloats(padded, 2, 5, d));
      float[][] b = m.scores(qb, TokenBatch.packedFromMemorySegment(MemorySegment.ofArray(c.data()), DType.FLOAT32,
          c.offsets(), d).withMask(c.mask()));
      for (int i = 0; i < 2; i++) {
        float[] row = new float[9];
        System.arraycopy(a[i], 0, row, 0, 2);
        System.arraycopy(b[i], 0, row, 2, 7);
        assertArrayEquals(row, Arrays.copyOfRange(got, i * 9, i * 9 + 9), 0f);
      }
    }
  }

  @Test
  void shardsOfAnotherDimensionOrTypeAreNamed() throws IOException {
    Path shards = Files.createDirectories(dir.resolve("bad"));
    corpus(DType.INT8, 33, 4).write(shards.resolve("a.safetensors"), 0, 4);
    corpus(DType.INT8, 32, 4).write(shards.resolve("b.safetensors"), 0, 4);
    Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 33), 1, 1, 33);
    CliRun r = run(List.of("score", "--queries", p("q.npy"), "--docs", shards.toString(), "--top-k", "2",
        "--out-run", p("run.tsv")));
    CliRun.assertOneLineError(r, 1, "b.safetensors holds int8 tokens of d = 32; expected int8 tokens of d = 33");
    corpus(DType.FLOAT8_E4M3, 33, 4).write(shards.resolve("b.safetensors"), 0, 4);
    r = run(List.of("score", "--queries", p("q.npy"), "--docs", shards.toString(), "--top-k", "2",
        "--out-run", p("run.tsv")));
    CliRun.assertOneLineError(r, 1, "b.safetensors holds float8_e4m3fn tokens of d = 33; expected int8 tokens of d"
        + " = 33");
    assertTrue(!Files.exists(dir.resolve("run.tsv")));

    Path empty = Files.createDirectories(dir.resolve("empty"));
    r = run(List.of("score", "--queries", p("q.npy"), "--docs", empty.toString(), "--top-k", "2",
        "--out-run", p("run.tsv")));
    CliRun.assertOneLineError(r, 1, "holds no .safetensors files");
    r = run(List.of("score", "--queries", p("q.npy"), "--docs", shards.toString(), "--doc-offsets", p("q.npy"),
        "--top-k", "2", "--out-run", p("run.tsv")));
    CliRun.assertOneLineError(r, 2, "--doc-offsets names one file for the whole corpus");
  }

  /** A quantized shard without scales reads as scale 1: beside scaled shards its scores would not rank with theirs. */
  @Test
  void aShardWithoutTheScalesOfTheOthersIsNamed() throws IOException {
    Path shards = Files.createDirectories(dir.resolve("unscaled"));
    Corpus c = corpus(DType.INT8, 16, 4);
    c.write(shards.resolve("a.safetensors"), 0, 4);
    new Corpus(c.dtype(), c.d(), c.data(), null, c.mask(), c.offsets()).write(shards.resolve("b.safetensors"), 0, 4);
    Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 16), 1, 1, 16);
    CliRun r = run(List.of("score", "--queries", p("q.npy"), "--docs", shards.toString(), "--top-k", "2",
        "--out-run", p("run.tsv")));
    CliRun.assertOneLineError(r, 1, "b.safetensors holds int8 tokens of d = 16 without scales; expected them with"
        + " scales like a.safetensors");
    assertFalse(Files.exists(dir.resolve("run.tsv")));
  }

  /**
   * A file read already (the queries kept in the folder, a shard linked twice) is no shard: its rows would be ranked
   * as extra documents and shift the indices of every later one.
   */
  @Test
  void aShardThatIsTheQueriesOrAnotherShardIsNamed() throws IOException {
    Path shards = Files.createDirectories(dir.resolve("twice"));
    corpus(DType.FLOAT32, 16, 4).write(shards.resolve("a.safetensors"), 0, 4);
    Path queries = shards.resolve("queries.safetensors");
    corpus(DType.FLOAT32, 16, 4).write(queries, 0, 2);
    List<String> args = List.of("score", "--queries", queries.toString(), "--docs", shards.toString(), "--top-k",
        "2", "--out-run", p("run.tsv"));
    CliRun.assertOneLineError(run(args), 1, "queries.safetensors is also the queries input");
    Files.move(queries, dir.resolve("queries.safetensors"));
    Files.createSymbolicLink(shards.resolve("b.safetensors"), shards.resolve("a.safetensors"));
    CliRun.assertOneLineError(run(List.of("score", "--queries", p("queries.safetensors"), "--docs",
        shards.toString(), "--top-k", "2", "--out-run", p("run.tsv"))), 1, "b.safetensors is the same file as shard");
    assertFalse(Files.exists(dir.resolve("run.tsv")));
  }

  /**
   * A .safetensors entry of the folder that is not a file (a dangling link, a directory) is an error naming it:
   * skipping it would give every later shard's documents other numbers in the run file.
   */
  @Test
  void anEntryThatIsNotAShardFileIsNamed() throws IOException {
    Path shards = Files.createDirectories(dir.resolve("odd"));
    corpus(DType.INT8, 16, 4).write(shards.resolve("a.safetensors"), 0, 4);
    corpus(DType.INT8, 16, 4).write(shards.resolve("c.safetensors"), 0, 4);
    Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 16), 1, 1, 16);
    Files.createSymbolicLink(shards.resolve("b.safetensors"), dir.resolve("missing.safetensors"));
    List<String> args = List.of("score", "--queries", p("q.npy"), "--docs", shards.toString(), "--top-k", "2",
        "--out-run", p("run.tsv"));
    CliRun.assertOneLineError(run(args), 1, "b.safetensors is a link to a missing file");
    Files.delete(shards.resolve("b.safetensors"));
    Files.createDirectory(shards.resolve("b.safetensors"));
    CliRun.assertOneLineError(run(args), 1, "b.safetensors is a directory");
    assertFalse(Files.exists(dir.resolve("run.tsv")));
    // a loop of links is named as one, not as a link to a missing file, here and as a --queries file
    Files.delete(shards.resolve("b.safetensors"));
    Files.createSymbolicLink(shards.resolve("b.safetensors"), shards.resolve("loop.link"));
    Files.createSymbolicLink(shards.resolve("loop.link"), shards.resolve("b.safetensors"));
    CliRun.assertOneLineError(run(args), 1, "b.safetensors is a loop of symbolic links");
    CliRun.assertOneLineError(CliRun.of("score", "--queries", shards.resolve("b.safetensors").toString(), "--docs",
        p("q.npy"), "--out", p("s.npy")), 1, "--queries " + shards.resolve("b.safetensors") + " is a loop of symbolic"
        + " links; expected a .npy or .safetensors file");
  }

  /**
   * Shards in a subfolder (corpus/part-0/, corpus/part-1/, as a sharded job may write them) are not the folder's
   * own: they were left out without a word, so that a run over part of the corpus passed for one over all of it.
   * They are left out still, and named on stderr, as .npy files are.
   */
  @Test
  void subfoldersHoldingShardsAreNamed() throws IOException {
    Path shards = Files.createDirectories(dir.resolve("nested"));
    corpus(DType.INT8, 16, 4).write(shards.resolve("a.safetensors"), 0, 4);
    Path sub = Files.createDirectories(shards.resolve("part-1"));
    corpus(DType.INT8, 16, 5).write(sub.resolve("b.SafeTensors"), 0, 5);
    Files.createDirectories(shards.resolve("notes")); // no shards: not named
    Files.writeString(shards.resolve("notes").resolve("readme.txt"), "not a shard");
    Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 16), 1, 1, 16);
    CliRun r = run(List.of("score", "--queries", p("q.npy"), "--docs", shards.toString(), "--top-k", "20",
        "--out-run", p("run.tsv")));
    assertEquals(0, r.status(), r.err());
    // one shard and one query read in the singular
    assertTrue(r.out().contains("top-20 of 4 documents in 1 shard for 1 query -> "), r.out());
    List<String> warnings = r.err().lines().filter(l -> l.startsWith("maxsim4j: warning:")).toList();
    assertEquals(List.of("maxsim4j: warning: score --docs " + shards + ": left out 1 folder holding .safetensors"
        + " files (part-1); a folder's shards are its own files, not its subfolders'"), warnings);
  }

  /**
   * A float32 shard of {@code docs} documents of {@code perDoc} tokens, d = 128, whose tokens are a hole (zeros
   * that take no disk space) except token {@code hot} of the shard (if >= 0), all ones.
   */
  private static void sparseShard(Path file, int docs, int perDoc, int hot) throws IOException {
    int d = 128;
    long tokens = (long) docs * perDoc;
    long offsetBytes = 8L * (docs + 1);
    String json = "{\"offsets\":{\"dtype\":\"I64\",\"shape\":[" + (docs + 1) + "],\"data_offsets\":[0," + offsetBytes
        + "]},\"embeddings\":{\"dtype\":\"F32\",\"shape\":[" + tokens + "," + d + "],\"data_offsets\":["
        + offsetBytes + "," + (offsetBytes + tokens * d * 4) + "]}}";
    json += " ".repeat((8 - json.length() % 8) % 8);
    ByteBuffer head = ByteBuffer.allocate(8 + json.length() + (int) offsetBytes).order(ByteOrder.LITTLE_ENDIAN);
    head.putLong(json.length()).put(json.getBytes(StandardCharsets.US_ASCII));
    for (long i = 0; i <= docs; i++) {
      head.putLong(i * perDoc);
    }
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.write(head.array());
      raf.setLength(head.capacity() + tokens * d * 4);
      ByteBuffer ones = ByteBuffer.allocate(4 * d).order(ByteOrder.LITTLE_ENDIAN);
      for (int k = 0; k < d; k++) {
        ones.putFloat(1f);
      }
      if (hot >= 0) {
        raf.seek(head.capacity() + 4L * d * hot);
        raf.write(ones.array());
      }
    }
  }

  @Test
  void aCorpusFiveTimesTheHeapIsScoredInAChildJvm() throws Exception {
    Path shards = Files.createDirectories(dir.resolve("large"));
    int docs = 3_200;
    int perDoc = 64;
    for (int s = 0; s < 3; s++) {
      sparseShard(shards.resolve("shard-" + s + ".safetensors"), docs, perDoc, s == 2 ? 77 * perDoc + 5 : -1);
    }
    long corpus = 0;
    for (int s = 0; s < 3; s++) {
      corpus += Files.size(shards.resolve("shard-" + s + ".safetensors"));
    }
    assertTrue(corpus > 300_000_000L, "corpus of " + corpus + " bytes");
    float[] q = new float[2 * 128];
    Arrays.fill(q, 1f);
    Npy.writeFloats(dir.resolve("q.npy"), q, 1, 2, 128);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
        "-Xmx64m", "-XX:-UsePerfData", "-cp", System.getProperty("java.class.path"), "dev.maxsim4j.cli.Main",
        "score", "--queries", p("q.npy"), "--docs", shards.toString(), "--top-k", "3", "--out-run", p("run.tsv"))
        .redirectErrorStream(true).redirectOutput(dir.resolve("child.log").toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child JVM finished");
    String log = Files.readString(dir.resolve("child.log"));
    assertEquals(0, p.exitValue(), log);
    List<String> run = Files.readAllLines(dir.resolve("run.tsv"));
    assertEquals("0\t" + (2 * docs + 77) + "\t1\t256.0", run.get(0), log);
    assertEquals("0\t0\t2\t0.0", run.get(1), log);
    assertEquals(3, run.size());
  }

  /**
   * One file of documents larger than the heap but within one Java array is scored from its mapping: it was copied
   * onto the heap whenever one array held it, and a heap that could not hold the copy ran out.
   */
  @Test
  void aFileLargerThanTheHeapIsScoredFromItsMapping() throws Exception {
    int docs = 3_200;
    int perDoc = 64;
    sparseShard(dir.resolve("one.safetensors"), docs, perDoc, 77 * perDoc + 5);
    assertTrue(Files.size(dir.resolve("one.safetensors")) > 100_000_000L);
    float[] q = new float[2 * 128];
    Arrays.fill(q, 1f);
    Npy.writeFloats(dir.resolve("q.npy"), q, 1, 2, 128);
    String log = childScore(0, "--queries", p("q.npy"), "--docs", p("one.safetensors"), "--top-k", "2", "--out-run",
        p("run.tsv"));
    assertEquals(List.of("0\t77\t1\t256.0", "0\t0\t2\t0.0"), Files.readAllLines(dir.resolve("run.tsv")), log);
  }

  /**
   * Rows too long for the library to score (it stages a row in one array) are refused by its message at once: they
   * were copied onto the heap first, which ran out and asked for a larger heap that led only to that refusal.
   */
  @Test
  void rowsTheLibraryRefusesAreNotCopiedFirst() throws Exception {
    long d = 1L << 25; // (1 + 64) x d is past one Java array; the file, 128 MiB, is past the child's heap
    Npy.createFloats(dir.resolve("wide.npy"), 1, 1, d);
    String log = childScore(1, "--queries", p("wide.npy"), "--docs", p("wide.npy"), "--out", p("s.npy"));
    assertTrue(log.contains("the longest row of queries holds tokens x d = 1 x " + d)
        && log.contains("use fewer dimensions") && !log.contains("out of memory"), log);
    assertFalse(Files.exists(dir.resolve("s.npy")));
  }

  /**
   * Files of many empty documents (a few bytes each): a folder's scores were gathered in one array of the whole
   * matrix beside each shard's, and a file's scores were copied flat to be written; a hostile test ran both out of
   * heap. Now a folder's scores go to the file a shard at a time, and a file whose scores do not fit beside its
   * documents' bookkeeping is refused by name.
   */
  @Test
  void manyEmptyDocumentsAreScoredOrRefusedByNameInASmallHeap() throws Exception {
    Path shards = Files.createDirectories(dir.resolve("empty"));
    for (int s = 0; s < 4; s++) {
      emptyDocuments(shards.resolve("shard-" + s + ".safetensors"), 2_000_000);
    }
    Npy.writeFloats(dir.resolve("q1.npy"), new float[2 * 8], 1, 2, 8);
    String log = childScore(0, "--queries", p("q1.npy"), "--docs", shards.toString(), "--out", p("s.npy"));
    float[] scores = Npy.read(dir.resolve("s.npy")).floats();
    assertEquals(8_000_000, scores.length, log);
    for (int i = 0; i < scores.length; i += 999_983) {
      assertEquals(-1e9f, scores[i], "document " + i);
    }
    assertEquals(-1e9f, scores[scores.length - 1]);
    emptyDocuments(dir.resolve("one.safetensors"), 3_000_000);
    Npy.writeFloats(dir.resolve("q2.npy"), new float[2 * 2 * 8], 2, 2, 8);
    log = childScore(1, "--queries", p("q2.npy"), "--docs", p("one.safetensors"), "--out", p("s2.npy"));
    assertTrue(log.contains("maxsim4j: error: score: scores of queries x documents = 2 x 3000000")
        && log.contains("bytes the call holds there (its inputs")
        && log.contains("use --top-k K --out-run FILE, or split --docs into a folder of shards"), log);
    assertFalse(Files.exists(dir.resolve("s2.npy")));
  }

  /** A .safetensors file of {@code n} documents of no token (d = 8). */
  private static void emptyDocuments(Path file, int n) throws IOException {
    String json = "{\"embeddings\":{\"dtype\":\"F32\",\"shape\":[" + n + ",0,8],\"data_offsets\":[0,0]}}";
    json += " ".repeat((8 - json.length() % 8) % 8);
    Files.write(file, ByteBuffer.allocate(8 + json.length()).order(ByteOrder.LITTLE_ENDIAN).putLong(json.length())
        .put(json.getBytes(StandardCharsets.US_ASCII)).array());
  }

  /** Runs the CLI in a JVM of a 64 MiB heap, expecting {@code status}; returns its output. */
  private String childScore(int status, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx64m", "-XX:-UsePerfData",
        "-cp", System.getProperty("java.class.path"), "dev.maxsim4j.cli.Main", "score"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("child.log").toFile())
        .start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child JVM finished");
    String log = Files.readString(dir.resolve("child.log"));
    assertEquals(status, p.exitValue(), log);
    return log;
  }
}
