package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
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
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line on files the test writes itself: results equal the library's, errors are one line. */
class MainTest {
  @TempDir Path dir;
  private final SplittableRandom rnd = new SplittableRandom();
  private float[] q;
  private short[] dHalf;
  private boolean[] qMask;
  private boolean[] dMask;

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

  @BeforeEach
  void writeInputs() throws IOException {
    q = randoms(2 * 5 * 8);
    float[] d = randoms(6 * 7 * 8);
    dHalf = new short[d.length];
    for (int i = 0; i < d.length; i++) {
      dHalf[i] = Float.floatToFloat16(d[i]);
    }
    qMask = new boolean[2 * 5];
    dMask = new boolean[6 * 7];
    for (int i = 0; i < qMask.length; i++) {
      qMask[i] = rnd.nextInt(4) != 0;
    }
    for (int i = 0; i < dMask.length; i++) {
      dMask[i] = rnd.nextInt(4) != 0;
    }
    Npy.writeFloats(dir.resolve("q.npy"), q, 2, 5, 8);
    Npy.writeHalfs(dir.resolve("d.npy"), dHalf, 6, 7, 8);
    Npy.writeHalfs(dir.resolve("d4.npy"), dHalf, 2, 3, 7, 8);
    Npy.writeBools(dir.resolve("qm.npy"), qMask, 2, 5);
    Npy.writeBools(dir.resolve("dm.npy"), dMask, 6, 7);
  }

  private TokenBatch queries() {
    return TokenBatch.ofFloats(q, 2, 5, 8).withMask(qMask);
  }

  private TokenBatch docs() {
    return TokenBatch.ofHalfs(DType.FLOAT16, dHalf, 6, 7, 8).withMask(dMask);
  }

  private static float[] flat(float[][] m) {
    float[] f = new float[m.length * m[0].length];
    for (int i = 0; i < m.length; i++) {
      System.arraycopy(m[i], 0, f, i * m[0].length, m[0].length);
    }
    return f;
  }

  @Test
  void scoreAllPairsFromNpyEqualsTheLibrary() throws IOException {
    CliRun r = run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--query-mask", p("qm.npy"),
        "--doc-mask", p("dm.npy"), "--out", p("s.npy"));
    assertEquals(0, r.status(), r.err());
    NdArray s = Npy.read(dir.resolve("s.npy"));
    assertArrayEquals(new long[] {2, 6}, s.shape());
    try (MaxSim m = MaxSim.create()) {
      assertArrayEquals(flat(m.scores(queries(), docs())), s.floats());
    }
  }

  @Test
  void pairwiseCandidatesAndTopK() throws IOException {
    Npy.writeFloats(dir.resolve("q6.npy"), randoms(6 * 5 * 8), 6, 5, 8);
    CliRun pw = run("score", "--queries", p("q6.npy"), "--docs", p("d.npy"), "--pairwise", "--out", p("pw.npy"));
    assertEquals(0, pw.status(), pw.err());
    assertArrayEquals(new long[] {6}, Npy.read(dir.resolve("pw.npy")).shape());

    CliRun cand = run("score", "--queries", p("q.npy"), "--docs", p("d4.npy"), "--out", p("c.npy"));
    assertEquals(0, cand.status(), cand.err());
    NdArray c = Npy.read(dir.resolve("c.npy"));
    assertArrayEquals(new long[] {2, 3}, c.shape());
    try (MaxSim m = MaxSim.create()) {
      TokenBatch d = TokenBatch.ofHalfs(DType.FLOAT16, dHalf, 6, 7, 8);
      assertArrayEquals(flat(m.candidates(TokenBatch.ofFloats(q, 2, 5, 8), d, 3)), c.floats());

      CliRun top = run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--top-k", "4", "--out-run", p("run.tsv"));
      assertEquals(0, top.status(), top.err());
      List<String> lines = Files.readAllLines(dir.resolve("run.tsv"));
      assertEquals(8, lines.size());
      float[][] all = m.scores(TokenBatch.ofFloats(q, 2, 5, 8), d);
      for (int i = 0; i < 2; i++) {
        for (int r = 0; r < 4; r++) {
          String[] f = lines.get(i * 4 + r).split("\t");
          assertEquals(String.valueOf(i), f[0]);
          assertEquals(String.valueOf(r + 1), f[2]);
          assertEquals(all[i][Integer.parseInt(f[1])], Float.parseFloat(f[3]), 0f);
          if (r > 0) {
            assertTrue(Float.parseFloat(f[3]) <= Float.parseFloat(lines.get(i * 4 + r - 1).split("\t")[3]));
          }
        }
      }
    }
  }

  @Test
  void safetensorsWithNamedTensorsAndBf16() throws IOException {
    short[] dBf = new short[dHalf.length];
    for (int i = 0; i < dBf.length; i++) {
      dBf[i] = DType.BFLOAT16.narrow(Float.float16ToFloat(dHalf[i]));
    }
    Map<String, NdArray> tensors = new LinkedHashMap<>();
    tensors.put("query_embeddings", NdArray.ofFloats("q", new long[] {2, 5, 8}, q));
    tensors.put("query_mask", new NdArray("qm", NdArray.ElementType.BOOL, new long[] {2, 5}, null, null, qMask));
    SafeTensors.write(dir.resolve("q.safetensors"), tensors);
    Map<String, NdArray> docs = new LinkedHashMap<>();
    docs.put("doc_embeddings", new NdArray("d", NdArray.ElementType.BF16, new long[] {6, 7, 8}, null, dBf, null));
    SafeTensors.write(dir.resolve("d.safetensors"), docs);

    CliRun r = run("score", "--queries", p("q.safetensors"), "--queries-tensor", "query_embeddings",
        "--query-mask", p("q.safetensors"), "--query-mask-tensor", "query_mask",
        "--docs", p("d.safetensors"), "--out", p("s.npy"));
    assertEquals(0, r.status(), r.err());
    try (MaxSim m = MaxSim.create()) {
      TokenBatch d = TokenBatch.ofHalfs(DType.BFLOAT16, dBf, 6, 7, 8);
      assertArrayEquals(flat(m.scores(queries(), d)), Npy.read(dir.resolve("s.npy")).floats());
    }
    CliRun ambiguous = run("score", "--queries", p("q.safetensors"), "--docs", p("d.safetensors"), "--out", p("x.npy"));
    // it was "q.safetensors holds 2 tensors [...]; name one with the matching --...-tensor option"
    assertOneLineError(ambiguous, 1, "--queries " + p("q.safetensors") + " holds 2 tensors [\"query_embeddings\","
        + " \"query_mask\"], none called \"embeddings\"; expected --queries-tensor NAME to say which");
    CliRun missing = run("score", "--queries", p("q.safetensors"), "--queries-tensor", "nope",
        "--docs", p("d.safetensors"), "--out", p("x.npy"));
    assertOneLineError(missing, 1, "--queries-tensor nope: --queries " + p("q.safetensors") + " has no tensor 'nope'");
    CliRun mask = run("score", "--queries", p("q.safetensors"), "--queries-tensor", "query_embeddings",
        "--query-mask", p("q.safetensors"), "--docs", p("d.safetensors"), "--out", p("x.npy"));
    assertOneLineError(mask, 1, "--query-mask " + p("q.safetensors") + " holds 2 tensors [\"query_embeddings\","
        + " \"query_mask\"], none called \"mask\"; expected --query-mask-tensor NAME to say which");
    CliRun quantize = run("quantize", "--in", p("q.safetensors"), "--to", "int8", "--out", p("c.safetensors"));
    assertOneLineError(quantize, 1, "--in " + p("q.safetensors") + " holds 2 tensors [\"query_embeddings\","
        + " \"query_mask\"], none called \"embeddings\"; expected --tensor NAME to say which");
  }

  @Test
  void errorExits() throws IOException {
    assertOneLineError(run("score", "--queries", p("missing.npy"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "--queries " + p("missing.npy") + ": no such file");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--doc-mask", p("nomask.npy"),
        "--out", p("s.npy")), 1, "--doc-mask " + p("nomask.npy") + ": no such file");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy")), 2, "--out is required");
    assertOneLineError(run("score", "--bogus"), 2, "unknown option '--bogus'");
    assertOneLineError(run("frobnicate"), 2, "unknown command");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--doc-mask", p("qm.npy"),
        "--out", p("s.npy")), 1, "expected [6, 7]");
    Npy.writeFloats(dir.resolve("d16.npy"), randoms(16), 1, 1, 16);
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d16.npy"), "--out", p("s.npy")), 1,
        "d mismatch");
    Files.writeString(dir.resolve("junk.npy"), "not numpy at all");
    assertOneLineError(run("score", "--queries", p("junk.npy"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "not a .npy file");
    Files.write(dir.resolve("junk.safetensors"), new byte[] {1, 2, 3});
    assertOneLineError(run("score", "--queries", p("junk.safetensors"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "not a .safetensors file");
    assertOneLineError(run("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--top-k", "0", "--out-run",
        p("r.tsv")), 2, "--top-k = 0");
    assertOneLineError(run("bench", "--shape", "1,2,3"), 2, "(the benchmarks: ./maxsim4j bench)");
  }

  @Test
  void helpListsTheUserCommandsOnly() {
    CliRun help = run("help");
    assertEquals(0, help.status(), help.err());
    for (String command : new String[] {"demo", "encode", "index", "search", "rerank", "score", "train-example"}) {
      assertTrue(help.out().contains("\n  " + command + " "), command + " in " + help.out());
    }
    assertFalse(help.out().contains("bench") || help.out().contains("plot"), help.out());
    // --backend's names, which every scoring command's usage leaves to the overview
    assertTrue(help.out().contains("--backend NAME  where the scoring runs, one of auto, "), help.out());
    for (String name : MaxSim.backendNames()) {
      assertTrue(help.out().contains(name), name + " in " + help.out());
    }
  }

  /**
   * help COMMAND is COMMAND --help, and --help anywhere after a command asks for its usage (it was an unknown option
   * after another); help of a command that does not exist is a usage error, not the overview.
   */
  @Test
  void helpNamesACommandAndHelpAnywhereIsHelp() {
    CliRun named = run("help", "score");
    assertEquals(0, named.status(), named.err());
    assertTrue(named.out().startsWith("usage: maxsim4j score"), named.out());
    CliRun late = run("score", "--queries", "x.npy", "--help");
    assertEquals(0, late.status(), late.err());
    assertTrue(late.out().startsWith("usage: maxsim4j score"), late.out());
    // help answers before the options are checked: a refused backend, an unknown option or a missing value
    for (String[] refused : new String[][] {{"score", "--backend", "bogus", "--help"},
        {"score", "--bogus", "-h"}, {"index", "--help", "--threads", "many"}, {"search", "--help", "--query"}}) {
      CliRun help = run(refused);
      assertEquals(0, help.status(), String.join(" ", refused) + ": " + help.err());
      assertTrue(help.out().startsWith("usage: maxsim4j " + refused[0]), help.out());
    }
    // where an option takes it as its value, "-h" is that value: the command runs (here to a missing file)
    CliRun value = run("rerank", "--query", "-h", "--candidates", "no-such-candidates.txt");
    assertEquals(1, value.status(), value.out() + value.err());
    assertTrue(value.err().contains("no-such-candidates.txt"), value.err());
    for (String asked : new String[] {"--help", "help"}) {
      CliRun overview = run("help", asked);
      assertEquals(0, overview.status(), overview.err());
      assertTrue(overview.out().contains("commands:"), overview.out());
      // the summaries stand in one column, past the longest command's name
      String commands = overview.out().substring(overview.out().indexOf("commands:\n") + 10);
      List<Integer> columns = commands.substring(0, commands.indexOf("\n\n")).lines()
          .map(l -> l.indexOf(l.strip().split(" +", 2)[1])).distinct().toList();
      assertEquals(1, columns.size(), overview.out());
    }
    // a second form lines up under the first, continued options under the first option
    assertTrue(run("demo", "-h").out().contains("\n       maxsim4j demo --synthetic "), run("demo", "-h").out());
    assertTrue(run("help", "score").out().contains("\n" + " ".repeat("usage: maxsim4j score ".length())
        + "[--pairwise]"), run("help", "score").out());
    assertOneLineError(run("help", "bogus"), 2, "unknown command 'bogus'");
    assertOneLineError(run("help", "score", "encode"), 2, "help takes one command name");
  }

  /** COMMAND --help prints that command's usage alone and succeeds. */
  @Test
  void eachCommandHasItsOwnHelp() {
    for (String command : new String[] {"demo", "encode", "index", "search", "rerank", "score", "quantize",
        "train-example"}) {
      for (String flag : new String[] {"--help", "-h"}) {
        CliRun help = run(command, flag);
        assertEquals(0, help.status(), command + " " + flag + ": " + help.err());
        assertTrue(help.out().startsWith("usage: maxsim4j " + command), command + ": " + help.out());
        assertFalse(help.out().contains("commands:"), command + ": " + help.out());
      }
    }
  }

  @Test
  void syntheticDemoRanksTheQueryTopicsFirst() {
    CliRun demo = run("demo", "--synthetic", "--docs", "300");
    assertEquals(0, demo.status(), demo.err());
    assertTrue(demo.out().contains("precision@10"), demo.out());
    assertTrue(demo.out().contains("relevant"), demo.out());
  }
}
