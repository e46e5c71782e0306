package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Main;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.cli.io.SafeTensorsLayout;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** index / search --store: int8 and 1-bit tokens with scales, as TokenBatch.quantize makes them; a change rebuilds. */
class TextIndexStoreTest {
  private static final String[] TEXTS = {"otters hold hands while they sleep so that they do not drift apart",
      "the moon pulls the tides twice a day", "bread rises because yeast makes carbon dioxide"};

  @TempDir Path dir;

  private record Run(int status, String out, String err) {}

  private static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private Path folder() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("notes"));
    for (int i = 0; i < TEXTS.length; i++) {
      Files.writeString(folder.resolve("f" + i + ".txt"), TEXTS[i]);
    }
    return folder;
  }

  private static Path tokensFile(Path folder) throws IOException {
    try (Stream<Path> s = Files.list(folder.resolve(TextIndex.FOLDER))) {
      return s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).findFirst().orElseThrow();
    }
  }

  private static double mib(String out) {
    Matcher m = Pattern.compile("\\((\\d+(?:\\.\\d)?) (B|KiB|MiB), (bf16|int8|binary) tokens\\)").matcher(out);
    assertTrue(m.find(), out);
    double v = Double.parseDouble(m.group(1));
    return m.group(2).equals("B") ? v / 1024 / 1024 : m.group(2).equals("KiB") ? v / 1024 : v;
  }

  @Test
  void storesQuantizedTokensAndRebuildsOnAChangeOfStore() throws IOException {
    Path folder = folder();
    Run bf16 = run("index", "--dir", folder.toString());
    assertEquals(0, bf16.status(), bf16.err());
    assertTrue(bf16.out().contains("bf16 tokens)"), bf16.out());
    double bf16Size = mib(bf16.out());

    for (Store store : new Store[] {Store.INT8, Store.BINARY}) {
      Run r = run("index", "--dir", folder.toString(), "--store", store.toString());
      assertEquals(0, r.status(), r.err());
      assertTrue(r.err().contains("tokens; rebuilding it with " + store + " tokens (--store " + store + ")"), r.err());
      assertTrue(r.out().contains("(3 encoded, 0 reused, 0 skipped)") && r.out().contains(store + " tokens)"),
          r.out());
      assertTrue(mib(r.out()) < bf16Size, r.out());

      // the stored codes and scales are what TokenBatch.quantize makes of the encoder's tokens
      NdArray codes = SafeTensors.read(tokensFile(folder), "tokens");
      float[] scales = SafeTensors.read(tokensFile(folder), "scales").floats();
      assertEquals(store == Store.INT8 ? NdArray.ElementType.I8 : NdArray.ElementType.U8, codes.type());
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load()) {
        List<String> passages = Stream.of(TEXTS).map(t -> Passages.of(t).get(0).text()).toList();
        TokenBatch expected = encoder.encode(passages).quantize(store.dtype());
        TokenBatch stored = TokenBatch.packedBytes(store.dtype(), codes.bytes(), scales, expected.offsets(),
            MiniLmTokenEncoder.DIM);
        assertArrayEquals(expected.scales(), scales, 0f);
        assertArrayEquals(expected.toFloatArray(), stored.toFloatArray(), 0f);
      }

      Run again = run("search", "--dir", folder.toString(), "--query", "sleeping otters", "--k", "1");
      assertEquals(0, again.status(), again.err());
      assertFalse(again.err().contains("rebuilding"), "no --store keeps the index's store: " + again.err());
      assertTrue(again.out().contains("0 files encoded now") && again.out().contains(store + " tokens)"),
          again.out());
      assertTrue(again.out().contains("f0.txt:1"), again.out());
    }
    Run back = run("search", "--dir", folder.toString(), "--query", "tides", "--store", "bf16", "--k", "1");
    assertEquals(0, back.status(), back.err());
    assertTrue(back.err().contains("stores binary tokens; rebuilding it with bf16 tokens"), back.err());
    assertTrue(back.out().contains("f1.txt:1") && back.out().contains("bf16 tokens)"), back.out());
    assertEquals(List.of("tokens"), SafeTensors.names(tokensFile(folder)), "bf16 tokens need no scales");
  }

  /**
   * A manifest whose first line is damaged no longer names its store: the rebuild takes its tokens file's type, where
   * bf16 would make a binary index 14 times larger. Found by a hostile tester.
   */
  @Test
  void aManifestWithoutItsStoreLineIsRebuiltInItsTokensType() throws Exception {
    Path folder = folder();
    assertEquals(0, run("index", "--dir", folder.toString(), "--store", "binary").status());
    Path manifest = folder.resolve(TextIndex.FOLDER).resolve("manifest.tsv");
    String text = Files.readString(manifest);
    Files.writeString(manifest, "# damaged" + text.substring(text.indexOf('\n')));
    // a pipe named as a tokens file is passed over, not read (which would wait for a writer forever)
    Path pipe = manifest.resolveSibling("tokens-0.safetensors");
    assertEquals(0, new ProcessBuilder("mkfifo", pipe.toString()).start().waitFor());
    Run rebuilt = assertTimeoutPreemptively(Duration.ofMinutes(2),
        () -> run("search", "--dir", folder.toString(), "--query", "otters", "--k", "1"));
    assertEquals(0, rebuilt.status(), rebuilt.err());
    assertTrue(rebuilt.err().contains("rebuilding it with binary tokens, as it stored them"), rebuilt.err());
    assertTrue(rebuilt.out().contains("binary tokens)"), rebuilt.out());
    assertEquals(List.of("scales", "tokens"), SafeTensors.names(tokensFile(folder)));
    SafeTensorsLayout.assertAligned(tokensFile(folder));
  }

  /**
   * An index whose tokens file is mapped (1 MiB and more) updated in place: the run removes the old tokens file it
   * read, which is no input modified under it. A check of changed inputs once failed every such update and search.
   */
  @Test
  void anUpdateOfAMappedIndexRemovesItsOldTokensAndSucceeds() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("long"));
    for (int i = 0; i < 4; i++) {
      StringBuilder text = new StringBuilder();
      for (int line = 0; line < 120; line++) {
        text.append("Note ").append(i).append('.').append(line).append(": ").append(TEXTS[line % TEXTS.length])
            .append('\n');
      }
      Files.writeString(folder.resolve("f" + i + ".txt"), text);
    }
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    assertTrue(Files.size(tokensFile(folder)) >= 1 << 20, "the tokens file is mapped: " + Files.size(
        tokensFile(folder)));
    Files.writeString(folder.resolve("f0.txt"), "One more line about otters.\n", StandardOpenOption.APPEND);
    Path before = tokensFile(folder);
    Run updated = run("index", "--dir", folder.toString());
    assertEquals(0, updated.status(), updated.err());
    assertFalse(Files.exists(before), "the old tokens file is swept");
    // a search brings the index up to date too, and sweeps the file it read
    Files.writeString(folder.resolve("f1.txt"), "And one about beavers.\n", StandardOpenOption.APPEND);
    before = tokensFile(folder);
    Run searched = run("search", "--dir", folder.toString(), "--query", "otters", "--k", "1");
    assertEquals(0, searched.status(), searched.err());
    assertFalse(Files.exists(before), "the old tokens file is swept");
    assertTrue(Files.size(tokensFile(folder)) >= 1 << 20);
  }

  @Test
  void aDamagedQuantizedIndexIsRebuiltAndABadStoreIsAUsageError() throws IOException {
    Path folder = folder();
    assertEquals(0, run("index", "--dir", folder.toString(), "--store", "int8").status());
    byte[] valid = Files.readAllBytes(tokensFile(folder));
    valid[(int) SafeTensorsLayout.bytesOf(valid, "scales")[1] - 2] ^= 0x10; // one bit of the last scale
    Files.write(tokensFile(folder), valid);
    Run flipped = run("search", "--dir", folder.toString(), "--query", "otters");
    assertEquals(0, flipped.status(), flipped.err());
    assertTrue(flipped.err().contains("do not match their checksum); rebuilding it"), flipped.err());
    assertTrue(flipped.out().contains("int8 tokens)"), "a rebuilt index keeps the store it had: " + flipped.out());
    Run bad = run("index", "--dir", folder.toString(), "--store", "int4");
    assertEquals(2, bad.status());
    assertEquals("maxsim4j: index: --store = int4; expected bf16, int8 or binary\n", bad.err());
  }
}
