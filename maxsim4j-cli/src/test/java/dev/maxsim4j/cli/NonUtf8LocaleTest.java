package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A path option whose name the file system's encoding cannot hold (a non-ASCII name under the C locale, as in many
 * containers and cron jobs) is refused naming the option and the encoding, with the way out. It was "Malformed input
 * or input contains unmappable characters: ??.npy", naming neither the option nor what to do, for every command.
 */
class NonUtf8LocaleTest {
  private static final String SEPARATOR = "\u0001";
  @TempDir Path dir;

  /** Runs each command line (arguments joined by SEPARATOR) in this JVM; prints each one's status and stderr. */
  public static final class Child {
    public static void main(String[] args) {
      System.out.println("encoding " + System.getProperty("sun.jnu.encoding"));
      for (String line : args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Main.run(line.split(SEPARATOR), new PrintStream(new ByteArrayOutputStream()),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        System.out.println(status + " " + err.toString(StandardCharsets.UTF_8).strip().replace('\n', '|'));
      }
    }
  }

  /**
   * A name whose bytes are not valid in the file system's encoding reaches the JVM with U+FFFD for them: it was
   * written to (or looked up as) that other name, and two such names landed in one file. Found by a hostile tester.
   */
  @Test
  void namesWithBytesTheEncodingCannotReadAreRefused() throws IOException {
    // in this JVM: its messages are those of a UTF-8 locale (the other locales' are the test below)
    Assumptions.assumeTrue("UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding")),
        () -> "this JVM runs under " + System.getProperty("sun.jnu.encoding") + ", not UTF-8");
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    String q = dir.resolve("q.npy").toString();
    String bad = dir.resolve("s\uFFFD.npy").toString();
    for (String[] args : new String[][] {{"score", "--queries", q, "--docs", q, "--out", bad},
        {"score", "--queries", bad, "--docs", q, "--out", dir.resolve("s.npy").toString()}}) {
      CliRun r = CliRun.of(args);
      String option = args[2].equals(bad) ? "--queries" : "--out";
      CliRun.assertOneLineError(r, 1, option + " " + bad + " holds U+FFFD, which stands either for bytes of the"
          + " name given that are not valid UTF-8 or for the character itself");
    }
    try (var files = Files.list(dir)) {
      assertEquals(List.of(dir.resolve("q.npy")), files.toList());
    }
    // a query text too: it was encoded with U+FFFD in the bytes' place, where a file's line of them is refused
    CliRun query = CliRun.of("rerank", "--query", "otters \uFFFD", "--candidates", q);
    CliRun.assertOneLineError(query, 2, "rerank: --query holds U+FFFD, which stands either for bytes that are not"
        + " valid UTF-8 or for the character itself; expected text without it");
  }

  @Test
  void pathsTheEncodingCannotHoldAreRefusedNamingTheOption() throws Exception {
    String name = "caf\u00e9";
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Npy.writeFloats(dir.resolve("d.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Npy.writeFloats(dir.resolve(name + ".npy"), new float[2 * 3 * 4], 2, 3, 4);
    Files.writeString(dir.resolve(name + ".txt"), "otters\n");
    Files.createDirectories(dir.resolve(name));
    Files.writeString(dir.resolve(name).resolve("a.txt"), "otters");
    String q = dir.resolve("q.npy").toString();
    String d = dir.resolve("d.npy").toString();
    String odd = dir.resolve(name).toString();
    String[][] cases = {
        {"--queries", "score", "--queries", odd + ".npy", "--docs", d, "--out", dir.resolve("s.npy").toString()},
        {"--doc-mask", "score", "--queries", q, "--docs", d, "--doc-mask", odd + ".npy", "--out", d + ".s.npy"},
        {"--out", "score", "--queries", q, "--docs", d, "--out", odd + ".s.npy"},
        {"--docs", "score", "--queries", q, "--docs", odd, "--top-k", "1", "--out-run", d + ".tsv"},
        {"--in", "quantize", "--in", odd + ".safetensors", "--to", "int8", "--out", d + ".safetensors"},
        {"--in", "encode", "--in", odd + ".txt", "--out", d + ".safetensors"},
        {"--dir", "index", "--dir", odd},
        {"--dir", "search", "--dir", odd, "--query", "otters"},
        {"--queries", "search", "--dir", dir.toString(), "--queries", odd + ".txt"},
        {"--candidates", "rerank", "--query", "otters", "--candidates", odd + ".txt"}};
    List<String> lines = inTheCLocale(Arrays.stream(cases).map(c -> Arrays.copyOfRange(c, 1, c.length))
        .toArray(String[][]::new));
    assertEquals(cases.length + 1, lines.size(), String.join("\n", lines));
    for (int i = 0; i < cases.length; i++) {
      String line = lines.get(i + 1);
      String what = String.join(" ", cases[i]) + " -> " + line;
      assertTrue(line.startsWith("1 maxsim4j: error: " + cases[i][0] + " "), what);
      assertTrue(line.contains("file system's encoding") && line.contains("UTF-8 locale"), what);
      assertTrue(!line.contains("|"), "one line: " + what);
    }
  }

  /**
   * Shards found by listing a --docs folder are read whatever their names: a non-ASCII name that the C locale's
   * encoding cannot spell stays the listed path, never a string turned back into one. Such shards were refused as
   * names the encoding cannot hold, though nobody typed them. Each one's scores are those read under UTF-8.
   */
  @Test
  void shardsOfNonAsciiNamesAreReadUnderTheCLocale() throws Exception {
    Random random = new Random(7);
    Path shards = Files.createDirectories(dir.resolve("shards"));
    Map<String, NdArray> first = new LinkedHashMap<>();
    first.put("embeddings", NdArray.ofFloats("e", new long[] {2, 3, 4}, floats(random, 2 * 3 * 4)));
    first.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {2, 3}, null, null,
        new boolean[] {true, true, true, true, true, false}));
    SafeTensors.write(shards.resolve("caf\u00e9-0.safetensors"), first);
    SafeTensors.write(shards.resolve("na\u00efve-1.safetensors"),
        Map.of("embeddings", NdArray.ofFloats("e", new long[] {3, 3, 4}, floats(random, 3 * 3 * 4))));
    Path q = dir.resolve("q.npy");
    Npy.writeFloats(q, floats(random, 2 * 3 * 4), 2, 3, 4);
    String[] matrix = {"score", "--queries", q.toString(), "--docs", shards.toString(), "--out", ""};
    String[] top = {"score", "--queries", q.toString(), "--docs", shards.toString(), "--top-k", "2", "--out-run", ""};
    List<String> lines = inTheCLocale(withOut(matrix, dir.resolve("c.npy")), withOut(top, dir.resolve("c.tsv")));
    assertEquals(3, lines.size(), String.join("\n", lines));
    for (String line : lines.subList(1, 3)) {
      assertTrue(line.startsWith("0 score: shard 1 of 2"), line);
    }
    assertEquals(0, Main.run(withOut(matrix, dir.resolve("u.npy")), new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(new ByteArrayOutputStream())));
    assertEquals(0, Main.run(withOut(top, dir.resolve("u.tsv")), new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(new ByteArrayOutputStream())));
    float[] scores = Npy.read(dir.resolve("c.npy")).floats();
    assertEquals(2 * 5, scores.length);
    assertArrayEquals(Npy.read(dir.resolve("u.npy")).floats(), scores);
    assertEquals(Files.readString(dir.resolve("u.tsv")), Files.readString(dir.resolve("c.tsv")));
  }

  /**
   * Shards are taken in the same order under the C locale as under UTF-8: there the names "caf\u00e8-b" and
   * "caf\u00e9-a" read alike up to their last letter ("caf??-b", "caf??-a") and were ordered by it, the other way
   * round, so each document had another index than in a UTF-8 run, silently.
   */
  @Test
  void shardsOfNonAsciiNamesKeepTheirOrderUnderTheCLocale() throws Exception {
    Random random = new Random(11);
    Path shards = Files.createDirectories(dir.resolve("ordered"));
    SafeTensors.write(shards.resolve("caf\u00e8-b.safetensors"),
        Map.of("embeddings", NdArray.ofFloats("e", new long[] {2, 3, 4}, floats(random, 2 * 3 * 4))));
    SafeTensors.write(shards.resolve("caf\u00e9-a.safetensors"),
        Map.of("embeddings", NdArray.ofFloats("e", new long[] {3, 3, 4}, floats(random, 3 * 3 * 4))));
    Path q = dir.resolve("q.npy");
    Npy.writeFloats(q, floats(random, 2 * 3 * 4), 2, 3, 4);
    String[] top = {"score", "--queries", q.toString(), "--docs", shards.toString(), "--top-k", "5", "--out-run", ""};
    List<String> lines = inTheCLocale(withOut(top, dir.resolve("c.tsv")));
    assertEquals(2, lines.size(), String.join("\n", lines));
    assertTrue(lines.get(1).startsWith("0 "), lines.get(1));
    assertEquals(0, Main.run(withOut(top, dir.resolve("u.tsv")), new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(new ByteArrayOutputStream())));
    assertEquals(Files.readString(dir.resolve("u.tsv")), Files.readString(dir.resolve("c.tsv")));
  }

  private static float[] floats(Random random, int n) {
    float[] out = new float[n];
    for (int i = 0; i < n; i++) {
      out[i] = random.nextFloat() - 0.5f;
    }
    return out;
  }

  /** {@code args}, its last value (the output) being {@code out}. */
  private static String[] withOut(String[] args, Path out) {
    String[] copy = args.clone();
    copy[copy.length - 1] = out.toString();
    return copy;
  }

  /**
   * A query whose non-ASCII characters the C locale's encoding cannot read arrives as U+FFFD: it is refused naming
   * the option and the way out, not searched for as text nobody typed.
   */
  @Test
  void queriesTheEncodingCannotReadAreRefusedNamingTheOption() throws Exception {
    Path candidates = Files.writeString(dir.resolve("c.txt"), "otters\ncaf\u00e9 au lait\n");
    List<String> lines = inTheCLocale(
        new String[] {"rerank", "--query", "caf\u00e9", "--candidates", candidates.toString()},
        new String[] {"search", "--dir", dir.toString(), "--query", "the caf\u00e9"});
    assertEquals(3, lines.size(), String.join("\n", lines));
    for (String line : lines.subList(1, 3)) {
      assertTrue(line.startsWith("2 maxsim4j: ") && line.contains(" --query holds characters this locale's encoding")
          && line.contains("UTF-8 locale") && !line.contains("|"), line);
    }
  }

  /**
   * An index holding a file of a non-ASCII name is read under the C locale, and every entry is reused there: files
   * are named by their bytes read as UTF-8, whatever the locale. The manifest's line naming it was refused as an
   * invalid path, and with it the whole index; then such a file was skipped and its entry dropped, so that a search
   * under the C locale (a cron job) rewrote the index without it and the next UTF-8 run encoded it again.
   */
  @Test
  void anIndexWithANonAsciiNameIsReusedUnderTheCLocale() throws Exception {
    Path notes = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(notes.resolve("a.txt"), "otters hold hands");
    Files.writeString(notes.resolve("caf\u00e9.txt"), "bees dance");
    CliRun first = CliRun.of("index", "--dir", notes.toString());
    assertTrue(first.out().contains("(2 encoded, 0 reused"), first.out());
    List<String> lines = inTheCLocale(new String[] {"index", "--dir", notes.toString()},
        new String[] {"search", "--dir", notes.toString(), "--query", "bees"});
    assertEquals(3, lines.size(), String.join("\n", lines));
    for (String line : lines.subList(1, 3)) {
      assertTrue(line.startsWith("0 ") && !line.contains("skipped") && !line.contains("rebuilding"), line);
    }
    CliRun again = CliRun.of("index", "--dir", notes.toString());
    assertTrue(again.out().contains("(0 encoded, 2 reused"), "the C locale's runs changed the index: " + again.out());
  }

  /**
   * Under a Latin-1 locale, which reads every byte, a name that is not UTF-8 (byte 0xA1) and the UTF-8 name it reads
   * like ("\u00a1" in two bytes) keep the index a UTF-8 run made: the first by its bytes with \\x escapes, the other
   * by its UTF-8. The Latin-1 run indexed the first under its reading, which a UTF-8 run (where it was no name)
   * dropped again, back and forth. Skipped where the system cannot make a Latin-1 locale (localedef).
   */
  @Test
  void anIndexIsTheSameUnderALatin1Locale() throws Exception {
    Path locales = Files.createDirectories(dir.resolve("locales"));
    Process make = new ProcessBuilder("localedef", "-i", "fr_FR", "-f", "ISO-8859-1",
        locales.resolve("fr_FR.ISO-8859-1").toString()).redirectErrorStream(true).start();
    make.getInputStream().readAllBytes();
    Assumptions.assumeTrue(make.waitFor() == 0, "localedef cannot make fr_FR.ISO-8859-1 here");
    Path notes = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(notes.resolve("a.txt"), "otters hold hands");
    Files.writeString(notes.resolve("\u00a1hola.txt"), "bees dance");
    // a path made from a URI holds its bytes as they are: 0xA1 alone is no UTF-8
    Files.writeString(Path.of(java.net.URI.create(notes.toUri() + "%A1hola.txt")), "moles dig");
    CliRun first = CliRun.of("index", "--dir", notes.toString());
    assertTrue(first.out().contains("(3 encoded, 0 reused, 0 skipped"), first.out());
    List<String> lines = inTheLocale(Map.of("LOCPATH", locales.toString(), "LC_ALL", "fr_FR.ISO-8859-1"),
        new String[] {"index", "--dir", notes.toString()}, new String[] {"search", "--dir", notes.toString(),
            "--query", "moles"});
    Assumptions.assumeTrue(lines.get(0).contains("8859-1"), lines.get(0));
    assertEquals(3, lines.size(), String.join("\n", lines));
    for (String line : lines.subList(1, 3)) {
      assertTrue(line.startsWith("0 ") && !line.contains("skipped") && !line.contains("rebuilding"), line);
    }
    CliRun again = CliRun.of("index", "--dir", notes.toString());
    assertTrue(again.out().contains("(0 encoded, 3 reused, 0 skipped"), "the Latin-1 run changed the index: "
        + again.out());
  }

  /**
   * A tensor name that the C locale cannot read arrives as U+FFFD: it is refused naming the option and the locale, as
   * --query is; it was looked up as '??mb' ("has no tensor", exit 1).
   */
  @Test
  void tensorNamesTheEncodingCannotReadAreRefusedNamingTheLocale() throws Exception {
    Path q = dir.resolve("q.npy");
    Npy.writeFloats(q, new float[2 * 3 * 4], 2, 3, 4);
    Path d = dir.resolve("d.safetensors");
    SafeTensors.write(d, Map.of("\u00e9mb", NdArray.ofFloats("e", new long[] {2, 3, 4}, new float[2 * 3 * 4])));
    List<String> lines = inTheCLocale(new String[] {"score", "--queries", q.toString(), "--docs", d.toString(),
        "--docs-tensor", "\u00e9mb", "--out", dir.resolve("s.npy").toString()});
    String line = lines.get(1);
    assertTrue(line.startsWith("2 maxsim4j: ") && line.contains("--docs-tensor") && line.contains("UTF-8 locale"),
        line);
  }

  /**
   * Runs each command line in one child JVM under LC_ALL=C; its lines: the encoding, then each command's status and
   * stderr. Skipped only where this system's C locale names files in UTF-8 (there is nothing to show there).
   */
  private static List<String> inTheCLocale(String[]... commands) throws IOException, InterruptedException {
    List<String> lines = inTheLocale(Map.of("LC_ALL", "C"), commands);
    Assumptions.assumeFalse(lines.get(0).contains("UTF-8"), "this system's C locale names files in UTF-8");
    return lines;
  }

  /** As {@link #inTheCLocale}, in the locale that {@code locale}'s variables give. */
  private static List<String> inTheLocale(Map<String, String> locale, String[]... commands)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-cp",
        System.getProperty("java.class.path"), Child.class.getName()));
    for (String[] c : commands) {
      command.add(String.join(SEPARATOR, c));
    }
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("LC_") || k.equals("LANG"));
    env.putAll(locale);
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS));
    return new String(out, StandardCharsets.UTF_8).lines().filter(l -> !l.startsWith("WARNING:")).toList();
  }
}
