package dev.maxsim4j.cli.text;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A handful of short paragraphs on unrelated topics that the demo searches (the tests use them too). */
public final class SampleTexts {
  /** One paragraph and its title. */
  public record Paragraph(String title, String text) {}

  private SampleTexts() {}

  /** The bundled paragraphs, in file order. */
  public static List<Paragraph> paragraphs() {
    try (InputStream in = SampleTexts.class.getResourceAsStream("sample-paragraphs.txt")) {
      if (in == null) {
        throw new IllegalStateException("sample-paragraphs.txt is missing from the maxsim4j-cli jar");
      }
      List<Paragraph> out = new ArrayList<>();
      String title = null;
      StringBuilder text = new StringBuilder();
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        if (line.startsWith("# ")) {
          title = line.substring(2).strip();
        } else if (!line.isBlank() && title != null) {
          text.append(line.strip());
          out.add(new Paragraph(title, text.toString()));
          text.setLength(0);
          title = null;
        }
      }
      return List.copyOf(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
