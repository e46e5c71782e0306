package dev.maxsim4j.bench.quality;

import dev.maxsim4j.bench.debian.Deb822;
import dev.maxsim4j.bench.debian.Lz4;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Debian's package descriptions, read from an apt {@code Translation-en} list: per package its one-line
 * summary and its long description joined into one paragraph of plain text.
 */
final class DebianDescriptions {
  /** Where {@code apt-get -o Acquire::Languages=en update} leaves the lists. */
  static final Path APT_LISTS = Path.of("/var/lib/apt/lists");

  record Description(String name, String summary, String text) {}

  private DebianDescriptions() {}

  /** The largest {@code *_main_i18n_Translation-en*} list under {@link #APT_LISTS}, or null if there is none. */
  static Path findTranslations() {
    if (!Files.isDirectory(APT_LISTS)) {
      return null;
    }
    try (Stream<Path> files = Files.list(APT_LISTS)) {
      return files.filter(p -> p.getFileName().toString().contains("_main_i18n_Translation-en"))
          .max((a, b) -> Long.compare(size(a), size(b))).orElse(null);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static long size(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      return -1;
    }
  }

  /** Every package of {@code file} (plain text, or lz4-compressed as apt stores it, through the lz4 program). */
  static Map<String, Description> read(Path file) throws IOException {
    try (InputStream in = Lz4.open("--translations", file, "an apt Translation-en list")) {
      return parse(in);
    }
  }

  /** Per package of a Translation list: its {@code Description-en} summary and long description. */
  static Map<String, Description> parse(InputStream in) throws IOException {
    Map<String, Description> all = new HashMap<>();
    Deb822.read(in, stanza -> {
      String name = stanza.get("Package");
      String summary = stanza.get("Description-en");
      if (name != null && summary != null) {
        all.putIfAbsent(name, new Description(name, summary, stanza.text("Description-en")));
      }
    });
    return all;
  }
}
