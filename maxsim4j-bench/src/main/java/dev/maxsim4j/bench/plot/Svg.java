package dev.maxsim4j.bench.plot;

import java.util.Locale;

/** Just enough SVG for the benchmark charts: text, lines, rectangles, readable on GitHub (no scripts, no CSS). */
final class Svg {
  private final StringBuilder body = new StringBuilder();
  private final int width;
  private final int height;

  Svg(int width, int height) {
    this.width = width;
    this.height = height;
  }

  Svg rect(double x, double y, double w, double h, String fill) {
    body.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>%n",
        x, y, w, h, fill));
    return this;
  }

  Svg line(double x1, double y1, double x2, double y2, String stroke, double strokeWidth) {
    body.append(String.format(Locale.ROOT,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"/>%n",
        x1, y1, x2, y2, stroke, strokeWidth));
    return this;
  }

  /** Text at (x, y); anchor start, middle or end. */
  Svg text(double x, double y, String text, int size, String anchor, String fill) {
    body.append(String.format(Locale.ROOT,
        "<text x=\"%.1f\" y=\"%.1f\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"%d\" text-anchor=\"%s\""
            + " fill=\"%s\">%s</text>%n", x, y, size, anchor, fill, escape(text)));
    return this;
  }

  /** Text as XML holds it: markup escaped, and characters XML 1.0 cannot hold (C0 controls but tab) as U+FFFD. */
  private static String escape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    s.codePoints().forEach(c -> {
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        default -> b.appendCodePoint(c < 0x20 && c != '\t' || c == 0xFFFE || c == 0xFFFF ? 0xFFFD : c);
      }
    });
    return b.toString();
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        + "viewBox=\"0 0 %d %d\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", width, height, width,
        height) + body + "</svg>\n";
  }
}
