package dev.maxsim4j.bench.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.cuda.LaunchArguments;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class GeneratedCorpusTest {

  /** Each parameter of maxsim_fill_bf16 as (name, width): i64 for a pointer or a 64-bit integer, f32, i32. */
  private static List<String> signature() throws IOException {
    String source = Files.readString(Path.of("src/main/cuda/maxsim_fill.cu"));
    Matcher m = Pattern.compile("void maxsim_fill_bf16\\(([^)]*)\\)").matcher(source);
    assertTrue(m.find(), "maxsim_fill_bf16's signature in maxsim_fill.cu");
    List<String> parameters = new ArrayList<>();
    for (String p : m.group(1).split(",")) {
      String[] words = p.trim().split("\\s+");
      String name = words[words.length - 1];
      String type = String.join(" ", Arrays.copyOf(words, words.length - 1));
      String width = type.endsWith("*") || type.endsWith("long long") ? "i64" : type.equals("float") ? "f32"
          : type.equals("int") ? "i32" : "unknown type " + type;
      parameters.add(name.replace("*", "") + " " + (name.startsWith("*") ? "i64" : width));
    }
    return parameters;
  }

  @Test
  void theFillsArgumentsMirrorItsSignature() throws IOException {
    List<String> widths = new ArrayList<>();
    List<Number> values = new ArrayList<>();
    LaunchArguments recorder = new LaunchArguments() {
      @Override
      public LaunchArguments i64(long value) {
        widths.add("i64");
        values.add(value);
        return this;
      }

      @Override
      public LaunchArguments i32(int value) {
        widths.add("i32");
        values.add((long) value);
        return this;
      }

      @Override
      public LaunchArguments f32(float value) {
        widths.add("f32");
        values.add((long) value);
        return this;
      }
    };
    new GeneratedCorpus.FillArguments(1, 2, 3, 4).writeTo(recorder);
    assertEquals(List.of(1L, 2L, 3L, 4L), values, "written in the order of the components");
    List<String> mirrored = new ArrayList<>();
    RecordComponent[] components = GeneratedCorpus.FillArguments.class.getRecordComponents();
    assertEquals(components.length, widths.size(), "one argument written per component");
    for (int i = 0; i < components.length; i++) {
      mirrored.add(components[i].getName() + " " + widths.get(i));
    }
    assertEquals(signature(), mirrored);
  }

  /** The fill hashes {@code seed * M + i}: a shard's seed must continue the whole corpus's sequence. */
  @Test
  void aShardsSeedContinuesTheWholeCorpus() {
    long m = 0x9e3779b97f4a7c15L;
    assertEquals(1L, m * GeneratedCorpus.inverse(m));
    for (long seed : new long[] {0, 1, 42, -7, Long.MAX_VALUE}) {
      for (long first : new long[] {0, 1, 38_400, 1_000_000L * 300 * 128, Long.MAX_VALUE / 3}) {
        assertEquals(seed * m + first, GeneratedCorpus.seedFrom(seed, first) * m, seed + " from " + first);
      }
    }
  }
}
