package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.bench.debian.Deb822;
import dev.maxsim4j.bench.debian.Lz4;
import dev.maxsim4j.cli.UsageException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The known-item evaluation set from Debian's package lists: a package's one-line description is a query and
 * its long description the one document that answers it. Packages whose long description is shared with
 * another package (one query would have several right answers) or contains the one-line description verbatim
 * (the query would be a substring of its answer) are left out.
 */
final class KnownItems {
  /** One package: its name, version, description md5 (from the Packages list) and its two texts. */
  record Item(String name, String version, String md5, String summary, String text) {
    /** Its line in the pinned list: name, version and the first 12 hex digits of the description md5. */
    String pinLine() {
      return name + " " + version + " " + prefix(md5);
    }
  }

  /** A package of the pinned list. */
  record Pin(String name, String version, String md5Prefix) {
    static Pin parse(String line, int number) {
      String[] f = line.strip().split(" ");
      if (f.length != 3) {
        throw new IllegalArgumentException("pinned list line " + number + " is '" + line
            + "'; expected 'name version md5-prefix'");
      }
      return new Pin(f[0], f[1], f[2]);
    }
  }

  /** A description stanza of the Translation-en list. */
  record Description(String md5, String summary, String text) {}

  private KnownItems() {}

  /**
   * Every usable package of the lists, in evaluation order: by the SHA-256 of its name, so that any prefix is
   * a uniform sample that stays put when packages come or go.
   */
  static List<Item> build(Path translations, Path packages) throws IOException {
    Map<String, Description> byMd5 = new HashMap<>();
    try (InputStream in = Lz4.open("--translations", translations, "an apt list")) {
      for (Description d : parseTranslations(in)) {
        byMd5.putIfAbsent(d.md5(), d);
      }
    }
    Map<String, String[]> versions;
    try (InputStream in = Lz4.open("--packages", packages, "an apt list")) {
      versions = parsePackages(in);
    }
    List<Item> all = new ArrayList<>();
    for (Map.Entry<String, String[]> e : versions.entrySet()) {
      Description d = byMd5.get(e.getValue()[1]);
      if (d != null && !d.text().isEmpty()) {
        all.add(new Item(e.getKey(), e.getValue()[0], d.md5(), d.summary(), d.text()));
      }
    }
    return filter(all);
  }

  /** Drops shared long descriptions and those containing their one-line description; sorts by name hash. */
  static List<Item> filter(List<Item> all) {
    Map<String, Integer> textCount = new HashMap<>();
    for (Item i : all) {
      textCount.merge(i.text(), 1, Integer::sum);
    }
    List<Item> kept = new ArrayList<>();
    for (Item i : all) {
      boolean contains = i.text().toLowerCase(Locale.ROOT).contains(i.summary().toLowerCase(Locale.ROOT));
      if (textCount.get(i.text()) == 1 && !contains) {
        kept.add(i);
      }
    }
    kept.sort(Comparator.comparing((Item i) -> order(i.name())).thenComparing(Item::name));
    return kept;
  }

  /**
   * The pinned packages looked up in {@code translations}: each must be there with the same description md5
   * prefix (the texts are Debian's, so a changed description is a different evaluation set).
   */
  static List<Item> select(Path translations, List<Pin> pins) throws IOException {
    Map<String, Description> byPrefix = new HashMap<>();
    try (InputStream in = Lz4.open("--translations", translations, "an apt list")) {
      for (Description d : parseTranslations(in)) {
        byPrefix.putIfAbsent(prefix(d.md5()), d);
      }
    }
    List<Item> items = new ArrayList<>(pins.size());
    for (Pin p : pins) {
      Description d = byPrefix.get(p.md5Prefix());
      if (d == null) {
        throw new UsageException("--translations " + translations + " lacks the description " + p.md5Prefix()
            + " of the pinned package " + p.name() + " " + p.version() + "; expected Debian bookworm's main list");
      }
      items.add(new Item(p.name(), p.version(), d.md5(), d.summary(), d.text()));
    }
    return items;
  }

  static String prefix(String md5) {
    return md5.substring(0, Math.min(12, md5.length()));
  }

  /** Sorting key of a package name: its SHA-256, hex. */
  static String order(String name) {
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < 8; i++) {
        b.append(String.format(Locale.ROOT, "%02x", h[i]));
      }
      return b.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The stanzas of a Translation-en list: {@code Description-md5}, {@code Description-en} and its indented
   * lines joined into one paragraph ({@code " ."} lines, deb822's paragraph breaks, dropped).
   */
  static List<Description> parseTranslations(InputStream in) throws IOException {
    List<Description> all = new ArrayList<>();
    Deb822.read(in, stanza -> {
      String md5 = stanza.get("Description-md5");
      String summary = stanza.get("Description-en");
      if (md5 != null && summary != null) {
        all.add(new Description(md5, summary, stanza.text("Description-en")));
      }
    });
    return all;
  }

  /** Per package of a Packages list (its first stanza), {version, description md5}. */
  static Map<String, String[]> parsePackages(InputStream in) throws IOException {
    Map<String, String[]> all = new LinkedHashMap<>();
    Deb822.read(in, stanza -> {
      String name = stanza.get("Package");
      String version = stanza.get("Version");
      String md5 = stanza.get("Description-md5");
      if (name != null && version != null && md5 != null) {
        all.putIfAbsent(name, new String[] {version, md5});
      }
    });
    return all;
  }

  /** The pinned list: one {@link Item#pinLine} per line. */
  static List<Pin> readPins(InputStream in) throws IOException {
    List<String> lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank())
        .toList();
    List<Pin> pins = new ArrayList<>(lines.size());
    for (int i = 0; i < lines.size(); i++) {
      pins.add(Pin.parse(lines.get(i), i + 1));
    }
    return pins;
  }

  static String pinText(List<Item> items) {
    StringBuilder b = new StringBuilder();
    for (Item i : items) {
      b.append(i.pinLine()).append('\n');
    }
    return b.toString();
  }
}
