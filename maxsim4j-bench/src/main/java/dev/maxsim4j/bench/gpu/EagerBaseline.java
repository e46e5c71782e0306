package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.bench.Shapes;
import dev.maxsim4j.cli.io.MiniJson;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The PyTorch eager baseline that {@code --compare} names (maxsim4j-bench/python/torch_eager_baseline.py), read whole
 * and checked before any GPU work: an object of {@code "Nq,Nd,Lq,Ld,d"} keys whose values are eager's milliseconds
 * (inference) or {@code {"ms": .., "mib": ..}} (training, {@code --train}), null where eager ran out of memory.
 */
final class EagerBaseline {
  private static final Pattern SIZE = Pattern.compile("[1-9][0-9]{0,9}");

  private EagerBaseline() {}

  /**
   * Per shape, by its five sizes: {ms} (inference, NaN for null) or {ms, mib} (training, NaN for null); one line
   * naming the file where it is not such a baseline, or holds none of {@code shapes}.
   */
  static Map<List<Integer>, double[]> read(Path file, boolean training, List<String> shapes) {
    String expected = "; expected " + (training ? "{\"Nq,Nd,Lq,Ld,d\": {\"ms\": M, \"mib\": B}, ...}"
        : "{\"Nq,Nd,Lq,Ld,d\": M, ...}") + " as torch_eager_baseline.py" + (training ? " --train" : "") + " writes it";
    String name = "--compare " + file;
    Object parsed;
    try {
      if (!Files.isRegularFile(file)) {
        throw new IllegalArgumentException(name + " is not a regular file" + expected);
      }
      parsed = MiniJson.parse(Files.readString(file));
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(name + " is not UTF-8 text" + expected);
    } catch (IOException e) {
      throw new IllegalArgumentException(name + " cannot be read (" + e.getMessage() + ")" + expected);
    } catch (IllegalArgumentException e) {
      throw e.getMessage().startsWith(name) ? e : new IllegalArgumentException(name + ": " + e.getMessage() + expected);
    }
    if (!(parsed instanceof Map<?, ?> object) || object.isEmpty()) {
      throw new IllegalArgumentException(name + " is not a non-empty JSON object" + expected);
    }
    Map<List<Integer>, double[]> baseline = new HashMap<>();
    for (Map.Entry<?, ?> e : object.entrySet()) {
      String key = (String) e.getKey();
      List<Integer> shape = shape(key);
      if (shape == null) {
        throw new IllegalArgumentException(name + " has the key \"" + key + "\"" + expected
            + " (five whole sizes from 1)");
      }
      String where = name + " at \"" + key + "\"";
      if (training) {
        if (!(e.getValue() instanceof Map<?, ?> m) || !m.containsKey("ms") || !m.containsKey("mib")) {
          throw new IllegalArgumentException(where + " holds " + e.getValue() + expected);
        }
        baseline.put(shape, new double[] {value(where + " \"ms\"", m.get("ms"), expected),
            value(where + " \"mib\"", m.get("mib"), expected)});
      } else {
        baseline.put(shape, new double[] {value(where, e.getValue(), expected)});
      }
    }
    List<List<Integer>> run = new ArrayList<>();
    for (String s : shapes) {
      run.add(key(s));
    }
    if (run.stream().noneMatch(baseline::containsKey)) {
      throw new IllegalArgumentException(name + " holds none of the run's shapes (" + String.join(" ", shapes)
          + "); expected the baseline of these shapes");
    }
    return baseline;
  }

  /** The key of a shape the run was given (checked by {@link Shapes#parse}, which allows spaces around sizes). */
  static List<Integer> key(String runShape) {
    return Arrays.stream(Shapes.parse("gpu", runShape)).boxed().toList();
  }

  /** The five sizes of {@code text}, {@code "Nq,Nd,Lq,Ld,d"}; null where it is not written so. */
  static List<Integer> shape(String text) {
    String[] parts = text.split(",", -1);
    if (parts.length != 5) {
      return null;
    }
    List<Integer> sizes = new ArrayList<>(5);
    for (String p : parts) {
      if (!SIZE.matcher(p).matches() || Long.parseLong(p) > Integer.MAX_VALUE) {
        return null;
      }
      sizes.add(Integer.parseInt(p));
    }
    return sizes;
  }

  /** A time or size: a positive finite number, or null (NaN: eager ran out of memory). */
  private static double value(String where, Object v, String expected) {
    if (v == null) {
      return Double.NaN;
    }
    double d = v instanceof Number n ? n.doubleValue() : Double.NaN;
    if (!(d > 0) || Double.isInfinite(d)) {
      throw new IllegalArgumentException(where + " holds " + v + expected + " (a positive number, or null)");
    }
    return d;
  }
}
