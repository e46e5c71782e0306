package dev.maxsim4j.langchain4j;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/** The demo's paragraphs on unrelated topics (a copy of the CLI's), each under its title, for these tests. */
final class SampleTexts {
  record Paragraph(String title, String text) {}

  private SampleTexts() {}

  /** The paragraphs in file order: blocks of a "# title" line and one line of text. */
  static List<Paragraph> paragraphs() {
    try (InputStream in = SampleTexts.class.getResourceAsStream("sample-paragraphs.txt")) {
      String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return Arrays.stream(all.strip().split("\n\\s*\n"))
          .map(block -> block.strip().split("\n", 2))
          .map(lines -> new Paragraph(lines[0].substring(2).strip(), lines[1].strip()))
          .toList();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
