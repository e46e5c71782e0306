package dev.maxsim4j.cli.text;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/** Where the text commands find their texts: one per line of a file, or one per file of a folder. */
public final class TextFiles {
  private TextFiles() {}

  /** The .txt and .md files under {@code folder} (recursively, not the index folder), sorted by path. */
  public static List<Path> under(Path folder) throws IOException {
    if (!Files.isDirectory(folder)) {
      throw new NoSuchFileException(folder.toString());
    }
    try (Stream<Path> walk = Files.walk(folder)) {
      return walk.filter(Files::isRegularFile)
          .filter(p -> !p.startsWith(folder.resolve(TextIndex.FOLDER)))
          .filter(p -> {
            String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
            return name.endsWith(".txt") || name.endsWith(".md");
          })
          .sorted()
          .toList();
    }
  }

  /** The non-blank lines of a text file, stripped. */
  public static List<String> lines(Path file) throws IOException {
    List<String> out = new ArrayList<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      if (!line.isBlank()) {
        out.add(line.strip());
      }
    }
    return out;
  }

  public static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8);
  }

  /** The first {@code max} characters of a text on one line, for listings. */
  public static String snippet(String text, int max) {
    String flat = text.strip().replaceAll("\\s+", " ");
    return flat.length() <= max ? flat : flat.substring(0, max - 3) + "...";
  }
}
