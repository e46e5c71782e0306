package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.CliRun;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Indexes whose checksums match but whose values no encoder gives (a forged or re-checksummed file): a scale or a
 * token that is not finite. They are rebuilt with a warning, as a damaged index is, never scored or copied on.
 */
class ForgedIndexTest {
  @TempDir Path dir;

  private Path folder() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(folder.resolve("a.txt"), "otters hold hands while they sleep");
    Files.writeString(folder.resolve("b.txt"), "the moon pulls the tides twice a day");
    return folder;
  }

  private static Path tokensFile(Path folder) throws IOException {
    try (Stream<Path> s = Files.list(folder.resolve(TextIndex.FOLDER))) {
      return s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).findFirst().orElseThrow();
    }
  }

  /** Rewrites the index with {@code value} at element 3 of tensor {@code tensor}, its manifest's checksum made to match. */
  private static void forge(Path folder, Store store, String tensor, float value) throws IOException {
    Path manifest = folder.resolve(TextIndex.FOLDER).resolve("manifest.tsv");
    Manifest.Contents c = Manifest.read(manifest);
    Path file = tokensFile(folder);
    StoredTokens read = StoredTokens.read(file, store, c.tokens(), 384);
    StoredTokens copy = StoredTokens.allocate(store, read.tokens(), 384);
    read.copyTo(0, copy, 0, read.tokens());
    NdArray target = copy.tensors().get(tensor);
    if (store == Store.BF16) {
      target.segment().set(NdArray.LE_SHORT, 6, dev.maxsim4j.DType.BFLOAT16.narrow(value));
    } else {
      target.segment().set(ValueLayout.JAVA_FLOAT_UNALIGNED, 12, value);
    }
    SafeTensors.write(file, copy.tensors());
    Files.writeString(manifest, Manifest.format(store, c.tokensFile(), c.tokens(), copy.checksum(), c.entries()));
  }

  /**
   * A consistent index written before manifests carried their list's checksum, listing its files out of path order
   * (b before a, its tokens so too), is ranked right, by the index rebuilt in its place: an update once wrote its
   * files in the listing's order over the old tokens file, and every later search scored each file's passages
   * against another's tokens, under a valid checksum.
   */
  @Test
  void aLegacyIndexOutOfPathOrderStaysRightAfterItsUpdate() throws IOException {
    Path folder = folder();
    assertEquals(0, CliRun.of("index", "--dir", folder.toString()).status());
    String baseline = ranking(CliRun.of("search", "--dir", folder.toString(), "--query", "otters", "--exact"));
    Path manifest = folder.resolve(TextIndex.FOLDER).resolve("manifest.tsv");
    Manifest.Contents c = Manifest.read(manifest);
    TextIndex.Entry a = c.entries().get(0);
    TextIndex.Entry b = c.entries().get(1);
    Path file = tokensFile(folder);
    StoredTokens read = StoredTokens.read(file, Store.BF16, c.tokens(), 384);
    StoredTokens swapped = StoredTokens.allocate(Store.BF16, read.tokens(), 384);
    int aTokens = (int) a.tokens();
    int bTokens = (int) b.tokens();
    read.copyTo(aTokens, swapped, 0, bTokens);
    read.copyTo(0, swapped, bTokens, aTokens);
    SafeTensors.write(file, swapped.tensors());
    String legacy = Manifest.format(Store.BF16, c.tokensFile(), c.tokens(), swapped.checksum(), List.of(b, a))
        .replaceFirst("(\ntokens\t[^\t]+\t[0-9]+\t[0-9a-f]{8})\t[0-9a-f]{8}\n", "$1\n");
    Files.writeString(manifest, legacy);
    for (int run = 0; run < 3; run++) {
      CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "otters", "--exact");
      assertEquals(baseline, ranking(search), "run " + run + ": " + search.err());
    }
    CliRun again = CliRun.of("index", "--dir", folder.toString());
    assertTrue(again.out().contains("(0 encoded, 2 reused, 0 skipped)") && again.err().isEmpty(),
        again.out() + again.err());
  }

  /** A search's ranked lines, without its timings. */
  private static String ranking(CliRun search) {
    return String.join("\n", search.out().lines().filter(l -> l.contains(".txt:")).toList());
  }

  @Test
  void nonFiniteScalesOrTokensWithAMatchingChecksumAreRebuilt() throws IOException {
    Object[][] cases = {{Store.INT8, "scales", Float.NaN}, {Store.INT8, "scales", Float.POSITIVE_INFINITY},
        {Store.BINARY, "scales", Float.NEGATIVE_INFINITY}, {Store.BF16, "tokens", Float.NaN},
        {Store.BF16, "tokens", Float.POSITIVE_INFINITY}};
    for (Object[] k : cases) {
      Store store = (Store) k[0];
      Path folder = folder();
      CliRun built = CliRun.of("index", "--dir", folder.toString(), "--store", store.toString());
      assertEquals(0, built.status(), built.err());
      forge(folder, store, (String) k[1], (float) k[2]);
      String what = store + " " + k[1] + " " + k[2];
      CliRun search = CliRun.of("search", "--dir", folder.toString(), "--query", "otters", "--exact");
      assertEquals(0, search.status(), what + ": " + search.err());
      assertTrue(search.err().contains("cannot be used (") && search.err().contains("rebuilding it"),
          what + ": " + search.out() + search.err());
      assertFalse(search.err().contains("Exception") || search.out().contains("NaN")
          || search.out().contains("Infinity"), what + ": " + search.out() + search.err());
      CliRun again = CliRun.of("index", "--dir", folder.toString());
      assertTrue(again.out().contains("(0 encoded, 2 reused, 0 skipped)") && again.err().isEmpty(),
          what + ": " + again.out() + again.err());
      deleteAll(folder);
    }
  }

  /** Each bf16 lane of the four-at-a-time check, the largest finite values passing and every non-finite one refused. */
  @Test
  void everyBf16PositionIsChecked() throws IOException {
    Path file = dir.resolve("t.safetensors");
    short[] finite = {0x7f7f, (short) 0xff7f, 0x0080, (short) 0x8001, 0x3f80, 0, 0x7f00, (short) 0xc000, 0x4000};
    for (int at = 0; at < finite.length; at++) {
      for (short bad : new short[] {0x7fc0, 0x7f80, (short) 0xff80, (short) 0xffff, 0x7f81}) {
        short[] values = finite.clone();
        write(file, values);
        assertEquals(3, StoredTokens.read(file, Store.BF16, 3, 3).tokens());
        values[at] = bad;
        write(file, values);
        int token = at / 3;
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> StoredTokens.read(file, Store.BF16, 3, 3));
        assertEquals("its tokens hold a value that is not finite at token " + token + "; expected finite values",
            e.getMessage());
      }
    }
  }

  private static void write(Path file, short[] bf16) throws IOException {
    SafeTensors.write(file, java.util.Map.of("tokens", NdArray.ofSegment("tokens", NdArray.ElementType.BF16,
        new long[] {3, 3}, java.lang.foreign.MemorySegment.ofArray(bf16))));
  }

  private static void deleteAll(Path folder) throws IOException {
    try (Stream<Path> s = Files.walk(folder)) {
      for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
