package dev.maxsim4j.bench.plot;

import static java.util.Objects.requireNonNullElse;

import dev.maxsim4j.bench.gpu.GpuBench;
import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.MiniJson;
import dev.maxsim4j.cli.io.PathArgument;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@code plot}: SVG charts from the benchmark JSON the bench commands write, for docs/benchmarks.md.
 * {@code speedup}: fused vs naive per shape (from {@code cpu --json} or {@code gpu --json}); {@code memory}: op
 * memory against batch size, maxsim4j vs PyTorch eager (from {@code gpu --train --json}); {@code goals}: each
 * call against its shape's per-call goal (from {@code gpu --json}).
 */
public final class PlotCommand {
  public static final String USAGE = """
      plot speedup --in BENCH.json --out CHART.svg [--title TEXT]
      plot memory --in TRAIN.json --out CHART.svg [--lq 48] [--ld 300] [--title TEXT]
      plot goals --in GPU.json --out CHART.svg [--title TEXT]
        SVG charts from the JSON of cpu --json or gpu --json (speedup of the fused kernel over the naive
        path, per shape), gpu --train --json (peak op memory against batch size, maxsim4j vs eager) and
        gpu --json (time per call against the shape's per-call goal).""";

  private static final String FUSED = "#2f6db3";
  private static final String NAIVE = "#c8553d";
  private static final String GRID = "#dddddd";
  private static final String INK = "#222222";

  private PlotCommand() {}

  public static int run(String[] argv, PrintStream out) throws IOException {
    if (argv.length < 2 || !Set.of("speedup", "memory", "goals").contains(argv[1])) {
      throw new UsageException(
          "plot: expected 'plot speedup', 'plot memory' or 'plot goals' (see ./maxsim4j bench help)");
    }
    Args a = new Args("maxsim4j bench", "plot", argv, 2, Set.of("--in", "--out", "--title", "--lq", "--ld"), Set.of());
    for (String option : List.of("--lq", "--ld")) {
      if (!argv[1].equals("memory") && a.get(option) != null) {
        // only the memory chart picks rows by Lq and Ld: elsewhere the option would be ignored
        throw new UsageException("plot: " + option + " is read only by plot memory; expected it left out of plot "
            + argv[1]);
      }
    }
    Path in = PathArgument.of("--in", a.require("--in"));
    if (!Files.isRegularFile(in)) { // "no such file: x.json" named neither --in nor what it takes
      throw new IllegalArgumentException("plot: --in " + in + (Files.isDirectory(in) ? " is a directory"
          : Files.exists(in) ? " is not a regular file" : ": no such file") + "; expected the JSON that cpu --json, gpu"
          + " --json or gpu --train --json writes");
    }
    Path target = AtomicOutput.target("--out", a.require("--out"));
    AtomicOutput.check("--out", target, List.of(in));
    List<Map<String, Object>> rows = rows(in);
    String source = in.getFileName().toString();
    int lq = a.intValue("--lq", 48, 1);
    int ld = a.intValue("--ld", 300, 1);
    // read as a label: under a locale that cannot decode it, non-ASCII text arrives as U+FFFD, refused here
    String title = a.label("--title");
    String svg;
    try {
      svg = switch (argv[1]) {
        case "speedup" -> speedup(rows, requireNonNullElse(title, "Fused MaxSim vs the naive grid path"), source);
        case "memory" -> memory(rows, lq, ld,
            requireNonNullElse(title, "Peak memory of the MaxSim op, forward + backward"), source);
        default -> goals(rows, requireNonNullElse(title, "Time per call against the per-call goals"), source);
      };
    } catch (IllegalArgumentException e) {
      // the rows are the file's: name it, and the chart that read them
      throw new IllegalArgumentException("plot " + argv[1] + ": --in " + in + ": " + e.getMessage(), e);
    }
    AtomicOutput.writeString("--out", target, List.of(in), svg);
    out.println("wrote " + target);
    return 0;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> rows(Path in) throws IOException {
    String expected = "; expected a JSON array of benchmark rows (cpu --json and gpu --json write one)";
    if (Files.isDirectory(in)) {
      throw new IllegalArgumentException(in + " is a directory" + expected);
    }
    if (Files.exists(in) && !Files.isRegularFile(in)) {
      // the rows are read whole: a pipe would block until a writer came, a device such as /dev/zero never end
      throw new IllegalArgumentException(in + " is not a regular file (a pipe, device or socket)" + expected);
    }
    Object parsed;
    try {
      parsed = MiniJson.parse(Files.readString(in));
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(in + " is not UTF-8 text" + expected);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(in + ": " + e.getMessage() + expected);
    }
    if (!(parsed instanceof List<?> list) || list.isEmpty()) {
      throw new IllegalArgumentException(in + " is not a non-empty JSON array" + expected);
    }
    for (int i = 0; i < list.size(); i++) {
      // every chart reads each row's shape, so a row without a proper one is refused here, by its index
      if (!(list.get(i) instanceof Map<?, ?> row) || !(row.get("shape") instanceof List<?> shape) || shape.size() != 5
          || !shape.stream().allMatch(x -> x instanceof Number)) {
        throw new IllegalArgumentException(in + ": row " + i + " has no \"shape\" of five numbers" + expected);
      }
      List<Long> sizes = new ArrayList<>(5);
      for (Object x : shape) {
        // charts label and pick rows by their sizes, which only whole numbers name (1e400 parses as Infinity)
        double v = ((Number) x).doubleValue();
        if (!(x instanceof Long n ? n >= 1 && n <= Integer.MAX_VALUE
            : v >= 1 && v <= Integer.MAX_VALUE && v == Math.rint(v))) {
          throw new IllegalArgumentException(in + ": row " + i + " has the shape entry " + x
              + (Double.isInfinite(v) ? " (a number past the range of a double)" : "") + " in " + shape
              + "; expected whole numbers from 1 to " + Integer.MAX_VALUE + " (Nq, Nd, Lq, Ld, d)");
        }
        sizes.add(((Number) x).longValue());
      }
      // written as whole numbers from here on: 1000.0 and 1e3 label and match a goal as the 1000 they are
      ((Map<String, Object>) list.get(i)).put("shape", sizes);
    }
    return (List<Map<String, Object>>) list;
  }

  private static double number(Map<String, Object> row, String key) {
    Object v = row.get(key);
    return v instanceof Number n ? n.doubleValue() : Double.NaN;
  }

  /** A time or ratio a chart can draw: a zero or negative one made the speedup axis loop forever. */
  private static boolean positive(double v) {
    return v > 0 && v < Double.POSITIVE_INFINITY;
  }

  private static String shape(Map<String, Object> row) {
    List<?> s = (List<?>) row.get("shape");
    StringBuilder b = new StringBuilder();
    for (Object x : s) {
      b.append(b.isEmpty() ? "" : "×").append(x);
    }
    return b.toString();
  }

  /** Horizontal bars: naive ms / fused ms per shape, with the ratio written at the end of each bar. */
  static String speedup(List<Map<String, Object>> rows, String title, String source) {
    List<String> labels = new ArrayList<>();
    List<Double> values = new ArrayList<>();
    for (Map<String, Object> r : rows) {
      double naive = number(r, "naive_ms");
      double fused = number(r, "fused_ms");
      if (positive(naive) && positive(fused)) {
        if (!positive(naive / fused)) {
          // named rather than left out: both times are there, so "no row has both" would send the user astray
          throw new IllegalArgumentException("row " + shape(r) + " has naive_ms " + r.get("naive_ms") + " and fused_ms "
              + r.get("fused_ms") + ", a speedup of " + naive / fused + " (past the range of a double); expected"
              + " times whose ratio is a finite number above 0");
        }
        labels.add(shape(r));
        values.add(naive / fused);
      }
    }
    if (values.isEmpty()) {
      throw new IllegalArgumentException("no row has both fused_ms and naive_ms, each a positive time");
    }
    int left = 190;
    int barH = 18;
    int top = 60;
    int plotW = 460;
    int height = top + labels.size() * (barH + 6) + 50;
    double max = Math.ceil(values.stream().mapToDouble(Double::doubleValue).max().orElse(1) / 5) * 5;
    Svg svg = new Svg(left + plotW + 70, height);
    svg.text(12, 24, title, 16, "start", INK);
    svg.text(12, 42, "speedup over naive (einsum grid + amax + sum); Nq×Nd×Lq×Ld×d; source: " + source, 11, "start",
        "#555555");
    for (double t = 0; t <= max; t += max / 5) {
      double x = left + plotW * t / max;
      svg.line(x, top - 4, x, height - 40, GRID, 1);
      svg.text(x, height - 24, String.format(Locale.ROOT, "%.0f×", t), 11, "middle", INK);
    }
    for (int i = 0; i < labels.size(); i++) {
      double y = top + i * (barH + 6);
      double w = plotW * values.get(i) / max;
      svg.text(left - 8, y + barH - 5, labels.get(i), 12, "end", INK);
      svg.rect(left, y, w, barH, FUSED);
      svg.text(left + w + 6, y + barH - 5, String.format(Locale.ROOT, "%.1f×", values.get(i)), 11, "start", INK);
    }
    return svg.toString();
  }

  /**
   * Per shape, two bars: a call awaited at once and a call kept in flight (resident queries), each as a
   * fraction of the shape's goal ({@link GpuBench#PER_CALL_GOALS}); a line marks the goal (1.0).
   */
  static String goals(List<Map<String, Object>> rows, String title, String source) {
    List<String> labels = new ArrayList<>();
    List<double[]> values = new ArrayList<>();
    for (Map<String, Object> r : rows) {
      Double goal = GpuBench.PER_CALL_GOALS.get(shape(r).replace('×', ','));
      double awaited = number(r, "call_resident_queries_ms");
      double inFlight = number(r, "async_resident_queries_ms");
      if (goal != null && positive(awaited) && positive(inFlight)) {
        labels.add(shape(r));
        values.add(new double[] {awaited / goal, inFlight / goal});
      }
    }
    if (values.isEmpty()) {
      throw new IllegalArgumentException("no row of a shape with a per-call goal has call_resident_queries_ms and "
          + "async_resident_queries_ms, each a positive time (gpu --json writes them)");
    }
    int left = 190;
    int barH = 9;
    int rowH = 2 * barH + 8;
    int top = 60;
    int plotW = 460;
    int height = top + labels.size() * rowH + 70;
    double max = 2.0;
    Svg svg = new Svg(left + plotW + 70, height);
    svg.text(12, 24, title, 16, "start", INK);
    svg.text(12, 42, "time per call / goal (left of the line: met); Nq×Nd×Lq×Ld×d; source: " + source, 11,
        "start", "#555555");
    for (double t = 0; t <= max + 1e-9; t += 0.5) {
      double x = left + plotW * t / max;
      svg.line(x, top - 4, x, height - 60, t == 1.0 ? INK : GRID, t == 1.0 ? 2 : 1);
      svg.text(x, height - 44, String.format(Locale.ROOT, "%.1f", t), 11, "middle", INK);
    }
    for (int i = 0; i < labels.size(); i++) {
      double y = top + i * rowH;
      svg.text(left - 8, y + barH + 4, labels.get(i), 12, "end", INK);
      for (int k = 0; k < 2; k++) {
        double v = values.get(i)[k];
        double w = plotW * Math.min(v, max) / max;
        svg.rect(left, y + k * barH, w, barH - 1, k == 0 ? NAIVE : FUSED);
        svg.text(left + w + 4, y + k * barH + barH - 1, String.format(Locale.ROOT, "%.2f", v), 9, "start", INK);
      }
    }
    double ly = height - 18;
    svg.rect(left, ly - 10, 12, 12, NAIVE).text(left + 18, ly, "call awaited at once", 11, "start", INK);
    svg.rect(left + 170, ly - 10, 12, 12, FUSED).text(left + 188, ly, "call kept in flight (scoresAsync)", 11, "start",
        INK);
    return svg.toString();
  }

  /** Grouped bars on a log scale: maxsim4j op MiB vs eager peak MiB per batch size (B×B pairs). */
  static String memory(List<Map<String, Object>> rows, int lq, int ld, String title, String source) {
    List<Map<String, Object>> picked = new ArrayList<>();
    for (Map<String, Object> r : rows) {
      List<?> s = (List<?>) r.get("shape");
      if (s.get(2).equals((long) lq) && s.get(3).equals((long) ld) && s.get(0).equals(s.get(1))) {
        picked.add(r);
      }
    }
    if (picked.isEmpty()) {
      throw new IllegalArgumentException("no B×B row with Lq = " + lq + " and Ld = " + ld + " (--lq, --ld); expected"
          + " the JSON that gpu --train --json writes, with rows of as many queries as documents");
    }
    for (Map<String, Object> r : picked) {
      // the op's memory is what the chart is of; eager's is absent where --compare did not run, null where it ran
      // out of memory, else a size
      if (!positive(number(r, "op_mib"))) {
        throw new IllegalArgumentException("row " + shape(r) + " has op_mib " + r.get("op_mib")
            + "; expected a positive number of MiB (a training row of bench gpu --train --json)");
      }
      if (r.get("eager_mib") != null && !positive(number(r, "eager_mib"))) {
        throw new IllegalArgumentException("row " + shape(r) + " has eager_mib " + r.get("eager_mib")
            + "; expected a positive number of MiB, or null where eager ran out of memory");
      }
    }
    List<?> first = (List<?>) picked.get(0).get("shape");
    Object dtype = picked.get(0).getOrDefault("dtype", "bf16");
    for (Map<String, Object> r : picked) {
      // the subtitle names one d and one type for every bar: rows of another would be drawn under the wrong one
      if (!((List<?>) r.get("shape")).get(4).equals(first.get(4))
          || !Objects.equals(r.getOrDefault("dtype", "bf16"), dtype)) {
        throw new IllegalArgumentException("rows " + shape(picked.get(0)) + " (" + dtype + ") and " + shape(r) + " ("
            + r.getOrDefault("dtype", "bf16") + ") both have Lq = " + lq + " and Ld = " + ld + "; expected one d and"
            + " one dtype among the rows a chart draws (a file of one gpu --train run)");
      }
    }
    int left = 100;
    int top = 60;
    int plotH = 260;
    int group = 110;
    int width = left + picked.size() * group + 40;
    int height = top + plotH + 80;
    double decades = 6; // 1 MiB .. 10^6 MiB
    Svg svg = new Svg(Math.max(width, 680), height);
    svg.text(12, 24, title, 16, "start", INK);
    svg.text(12, 42, "B queries × B documents, Lq = " + lq + ", Ld = " + ld + ", d = " + first.get(4) + ", " + dtype
        + "; log scale; source: " + source, 11, "start", "#555555");
    for (int e = 0; e <= decades; e++) {
      double y = top + plotH - plotH * e / decades;
      svg.line(left, y, left + picked.size() * group, y, GRID, 1);
      svg.text(left - 6, y + 4, String.format(Locale.ROOT, "%,.0f MiB", Math.pow(10, e)).replace(',', ' '), 10, "end",
          INK);
    }
    for (int i = 0; i < picked.size(); i++) {
      Map<String, Object> r = picked.get(i);
      double x = left + i * group + 15;
      double ours = number(r, "op_mib");
      bar(svg, x, top, plotH, decades, ours, FUSED);
      if (r.get("eager_mib") instanceof Number eager) {
        bar(svg, x + 40, top, plotH, decades, eager.doubleValue(), NAIVE);
      } else if (r.containsKey("eager_mib")) { // null: eager ran out of memory
        svg.text(x + 58, top + plotH - 8, "OOM", 12, "middle", NAIVE);
      }
      svg.text(x + 38, top + plotH + 18, "B = " + ((List<?>) r.get("shape")).get(0), 12, "middle", INK);
    }
    double ly = top + plotH + 44;
    svg.rect(left, ly - 10, 12, 12, FUSED)
        .text(left + 18, ly, "maxsim4j (allocator high-water mark)", 11, "start", INK);
    svg.rect(left + 240, ly - 10, 12, 12, NAIVE).text(left + 258, ly, "PyTorch eager (max_memory_allocated)",
        11, "start", INK);
    return svg.toString();
  }

  private static void bar(Svg svg, double x, double top, double plotH, double decades, double mib, String fill) {
    // the axis ends at 10^decades MiB: a larger bar stops at its top, its label still telling the size
    double h = plotH * Math.min(decades, Math.max(0, Math.log10(Math.max(mib, 1)))) / decades;
    svg.rect(x, top + plotH - h, 36, h, fill);
    svg.text(x + 18, top + plotH - h - 4, mib >= 1024 ? String.format(Locale.ROOT, "%.1f GiB", mib / 1024)
        : String.format(Locale.ROOT, "%.0f MiB", mib), 10, "middle", INK);
  }
}
