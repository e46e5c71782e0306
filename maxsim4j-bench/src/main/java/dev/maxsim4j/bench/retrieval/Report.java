package dev.maxsim4j.bench.retrieval;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The rows a run prints as a table and, with {@code --json}, writes as JSON. */
final class Report {
  /** One method on one corpus: quality, time per query (NaN: not timed), and free-form facts. */
  record Row(String corpus, String method, String fde, int candidates, double recallAt1, double recallAt10,
      double mrrAt10, double overlapAt10, double msPerQuery, String note) {}

  private final PrintStream out;
  private final List<Row> rows = new ArrayList<>();
  private final List<String> facts = new ArrayList<>();

  Report(PrintStream out) {
    this.out = out;
  }

  void header() {
    out.printf(Locale.ROOT, "  %-36s %-18s %6s %8s %8s %8s %9s %10s  %s%n", "method", "fde", "cand", "R@1",
        "R@10", "MRR@10", "top10 ov", "ms/query", "note");
  }

  void add(String corpus, String method, String fde, int candidates, Ranking r, double msPerQuery, String note) {
    Row row = new Row(corpus, method, fde, candidates, r.recallAt1(), r.recallAt10(), r.mrrAt10(), r.overlapAt10(),
        msPerQuery, note);
    rows.add(row);
    out.printf(Locale.ROOT, "  %-36s %-18s %6s %7.1f%% %7.1f%% %8.3f %8.1f%% %10s  %s%n", method, fde,
        candidates > 0 ? Integer.toString(candidates) : "-", 100 * row.recallAt1(), 100 * row.recallAt10(),
        row.mrrAt10(), 100 * row.overlapAt10(), Double.isNaN(msPerQuery) ? "-"
            : String.format(Locale.ROOT, "%.2f", msPerQuery), note);
  }

  /** A line of context (corpus, load, index size) printed now and kept for the JSON. */
  void fact(String line) {
    facts.add(line);
    out.println(line);
  }

  String toJson() {
    StringBuilder b = new StringBuilder("{\n  \"facts\": [\n");
    for (int i = 0; i < facts.size(); i++) {
      b.append("    \"").append(escape(facts.get(i))).append(i + 1 < facts.size() ? "\",\n" : "\"\n");
    }
    b.append("  ],\n  \"rows\": [\n");
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.get(i);
      b.append(String.format(Locale.ROOT, "    {\"corpus\": \"%s\", \"method\": \"%s\", \"fde\": \"%s\", "
              + "\"candidates\": %d, \"recall_at_1\": %.4f, \"recall_at_10\": %.4f, \"mrr_at_10\": %.4f, "
              + "\"overlap_at_10\": %.4f, \"ms_per_query\": %s, \"note\": \"%s\"}", escape(r.corpus()),
          escape(r.method()), r.fde(), r.candidates(), r.recallAt1(), r.recallAt10(), r.mrrAt10(), r.overlapAt10(),
          Double.isNaN(r.msPerQuery()) ? "null" : String.format(Locale.ROOT, "%.3f", r.msPerQuery()),
          escape(r.note())));
      b.append(i + 1 < rows.size() ? ",\n" : "\n");
    }
    return b.append("  ]\n}\n").toString();
  }

  private static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  /** The 1-minute load average, for the record of how busy the shared machine was. */
  static String load() {
    try {
      return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ")[0];
    } catch (java.io.IOException | RuntimeException e) {
      return "?";
    }
  }
}
