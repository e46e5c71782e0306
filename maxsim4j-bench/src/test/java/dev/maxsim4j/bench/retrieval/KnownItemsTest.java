package dev.maxsim4j.bench.retrieval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.bench.retrieval.KnownItems.Item;
import dev.maxsim4j.bench.retrieval.KnownItems.Pin;
import dev.maxsim4j.cli.UsageException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The evaluation set: reading apt's lists, the two rules that drop packages, the order and the pinned list. */
class KnownItemsTest {
  @TempDir Path dir;

  private static final String TRANSLATIONS = """
      Package: alpha
      Description-md5: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
      Description-en: Image viewer
       A small program that shows pictures.
       .
       It starts fast.

      Package: beta
      Description-md5: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
      Description-en: transitional package
       This is a transitional package.

      Package: gamma
      Description-md5: cccccccccccccccccccccccccccccccc
      Description-en: transitional package
       This is a transitional package.

      Package: delta
      Description-md5: dddddddddddddddddddddddddddddddd
      Description-en: Mail client
       Delta is a MAIL CLIENT for the terminal.

      Package: epsilon
      Description-md5: eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee
      Description-en: Music player
       Plays music files from a library.
      """;

  private static final String PACKAGES = """
      Package: alpha
      Version: 1.0-1
      Description-md5: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa

      Package: beta
      Version: 2
      Description-md5: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb

      Package: gamma
      Version: 3
      Description-md5: cccccccccccccccccccccccccccccccc

      Package: delta
      Version: 4
      Description-md5: dddddddddddddddddddddddddddddddd

      Package: epsilon
      Version: 5:1.2
      Description-md5: eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee

      Package: zeta
      Version: 6
      Description-md5: ffffffffffffffffffffffffffffffff
      """;

  @Test
  void parsesStanzasJoiningParagraphs() throws IOException {
    List<KnownItems.Description> all = KnownItems.parseTranslations(stream(TRANSLATIONS));
    assertEquals(5, all.size());
    assertEquals("Image viewer", all.get(0).summary());
    assertEquals("A small program that shows pictures. It starts fast.", all.get(0).text());
    Map<String, String[]> versions = KnownItems.parsePackages(stream(PACKAGES));
    assertEquals(6, versions.size());
    assertEquals("5:1.2", versions.get("epsilon")[0]);
    assertEquals("ffffffffffffffffffffffffffffffff", versions.get("zeta")[1]);
  }

  @Test
  void dropsSharedDescriptionsAndOnesContainingTheirSummaryAndSortsByNameHash() throws IOException {
    List<Item> items = build();
    // beta and gamma share a long description; delta's contains "Mail client" (case aside); zeta has no text
    assertEquals(List.of("alpha", "epsilon").stream().sorted((a, b) -> KnownItems.order(a)
        .compareTo(KnownItems.order(b))).toList(), items.stream().map(Item::name).toList());
    Item epsilon = items.stream().filter(i -> i.name().equals("epsilon")).findFirst().orElseThrow();
    assertEquals("epsilon 5:1.2 eeeeeeeeeeee", epsilon.pinLine());
    assertEquals(KnownItems.order("x"), KnownItems.order("x"));
    assertTrue(!KnownItems.order("x").equals(KnownItems.order("y")));
  }

  @Test
  void pinnedPackagesAreFoundByTheirDescriptionAndMissingOnesRefused() throws IOException {
    List<Item> built = build();
    List<Pin> pins = KnownItems.readPins(stream(KnownItems.pinText(built)));
    List<Item> selected = KnownItems.select(write("t", TRANSLATIONS), pins);
    assertEquals(built, selected);
    List<Pin> absent = List.of(new Pin("omega", "1", "012345678901"));
    UsageException e = assertThrows(UsageException.class, () -> KnownItems.select(write("t", TRANSLATIONS), absent));
    assertTrue(e.getMessage().contains("lacks the description 012345678901 of the pinned package omega 1"),
        e.getMessage());
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
        () -> KnownItems.readPins(stream("a 1 abc\nb 2\n")));
    assertTrue(bad.getMessage().contains("line 2 is 'b 2'"), bad.getMessage());
  }

  @Test
  void theShippedListIsWellFormedAndItsNamesUnique() throws IOException {
    List<Pin> pins = KnownItems.readPins(stream(RetrievalCommand.pinned()));
    assertTrue(pins.size() > 50_000, "pinned " + pins.size());
    assertEquals(pins.size(), pins.stream().map(Pin::name).distinct().count());
    for (int i = 1; i < 1000; i++) {
      assertTrue(KnownItems.order(pins.get(i - 1).name()).compareTo(KnownItems.order(pins.get(i).name())) <= 0);
    }
  }

  private List<Item> build() throws IOException {
    return KnownItems.build(write("t", TRANSLATIONS), write("p", PACKAGES));
  }

  private Path write(String name, String text) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  private static ByteArrayInputStream stream(String s) {
    return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
  }
}
