package dev.maxsim4j.bench.debian;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Apt's lists (Translation-en, Packages) as deb822 stanzas: fields {@code Name: value}, a field's indented
 * continuation lines, stanzas separated by an empty line. The one reader both evaluations parse them with.
 */
public final class Deb822 {
  private Deb822() {}

  /** One stanza: its fields' first-line values and the continuation lines of each. */
  public record Stanza(Map<String, String> fields, Map<String, List<String>> continuations) {
    /** The value of {@code field}, stripped, or null. */
    public String get(String field) {
      return fields.get(field);
    }

    /**
     * The continuation lines of {@code field} joined by spaces into one paragraph of text: each line stripped,
     * deb822's {@code " ."} paragraph separators dropped.
     */
    public String text(String field) {
      List<String> lines = new ArrayList<>();
      for (String line : continuations.getOrDefault(field, List.of())) {
        String text = line.strip();
        if (!text.isEmpty() && !text.equals(".")) {
          lines.add(text);
        }
      }
      return String.join(" ", lines);
    }
  }

  /** Calls {@code each} with every stanza of {@code in} (UTF-8), in order. */
  public static void read(InputStream in, Consumer<Stanza> each) throws IOException {
    BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    Map<String, String> fields = new HashMap<>();
    Map<String, List<String>> continuations = new HashMap<>();
    String last = null;
    for (String line = r.readLine(); ; line = r.readLine()) {
      if (line == null || line.isEmpty()) {
        if (!fields.isEmpty()) {
          each.accept(new Stanza(fields, continuations));
          fields = new HashMap<>();
          continuations = new HashMap<>();
        }
        last = null;
        if (line == null) {
          return;
        }
      } else if (line.startsWith(" ") || line.startsWith("\t")) {
        if (last != null) {
          continuations.computeIfAbsent(last, f -> new ArrayList<>()).add(line);
        }
      } else {
        int colon = line.indexOf(':');
        if (colon > 0) {
          last = line.substring(0, colon);
          fields.putIfAbsent(last, line.substring(colon + 1).strip());
        }
      }
    }
  }
}
