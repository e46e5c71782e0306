package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every {@link KernelArgs} record mirrors its kernels' {@code extern "C"} signatures, parsed from the .cu
 * sources (src/main/cuda and its folders, src/test/cuda): the same parameters in the same order, by name, kind and width,
 * and writes its components in that order. Runs on the CPU: a mismatch here would be memory corruption on
 * the GPU.
 */
class KernelSignatureTest {
  private static final Path MAIN = Path.of("src/main/cuda");
  private static final Path TEST = Path.of("src/test/cuda");

  /** Each record and the signatures it mirrors: file, then the entry's name as written (in its macro). */
  private static final Map<Class<?>, List<String>> MIRRORS = new LinkedHashMap<>();

  static {
    mirror(KernelArgs.Ffma.class, "main/maxsim_forward.cu MAXSIM_FORWARD_ENTRY:NAME");
    mirror(KernelArgs.FfmaScaled.class, "main/maxsim_forward_scaled.cu MAXSIM_SCALED_ENTRY:NAME");
    mirror(KernelArgs.Quant.class, "main/maxsim_forward_quant.cu MAXSIM_QUANT_ENTRY:NAME",
        "main/maxsim_forward_quant_wgmma.cu MAXSIM_QW_ENTRY:NAME", "main/maxsim_forward_quant_tma.cu MAXSIM_QT_ENTRY:NAME");
    mirror(KernelArgs.QuantTiled.class, "main/maxsim_forward_quant_tma_wide.cu MAXSIM_QT_TILED_ENTRY:NAME");
    mirror(KernelArgs.Block.class, "main/maxsim_forward_mma.cu MAXSIM_MMA_ENTRY:NAME");
    mirror(KernelArgs.BlockGroups.class, "main/maxsim_forward_mma.cu MAXSIM_GROUP_ENTRY:NAME");
    mirror(KernelArgs.Stream.class, "main/maxsim_forward_stream.cu MAXSIM_STREAM_ENTRY:NAME");
    mirror(KernelArgs.Wgmma.class, "main/maxsim_forward_wgmma.cu MAXSIM_WGMMA_ENTRY:NAME");
    mirror(KernelArgs.WgmmaWs.class, "main/maxsim_forward_wgmma_ws.cu MAXSIM_WGMMA_WS_ENTRY:NAME");
    mirror(KernelArgs.Expand.class, "main/maxsim_expand.cu MAXSIM_EXPAND_ENTRY:NAME");
    mirror(KernelArgs.Merge.class, "main/maxsim_merge.cu maxsim_merge_slices");
    mirror(KernelArgs.TopKFromScores.class, "main/maxsim_topk.cu maxsim_topk_from_scores");
    mirror(KernelArgs.TopKFromKeys.class, "main/maxsim_topk.cu maxsim_topk_from_keys");
    mirror(KernelArgs.BackwardQueries.class,
        "main/maxsim_backward.cu MAXSIM_BACKWARD_ENTRIES:maxsim_backward_dq_##SUFFIX");
    mirror(KernelArgs.BackwardDocumentsOwned.class,
        "main/maxsim_backward.cu MAXSIM_BACKWARD_ENTRIES:maxsim_backward_dd_owned_##SUFFIX");
    mirror(KernelArgs.BackwardDocumentsAtomic.class,
        "main/maxsim_backward.cu MAXSIM_BACKWARD_ENTRIES:maxsim_backward_dd_atomic_##SUFFIX");
    mirror(KernelArgs.CrossEntropy.class, "main/maxsim_loss.cu maxsim_loss_cross_entropy");
    mirror(KernelArgs.KlDivergence.class, "main/maxsim_loss.cu maxsim_loss_kl");
    mirror(KernelArgs.MarginMse.class, "main/maxsim_loss.cu maxsim_loss_margin_mse");
    mirror(KernelArgs.LinearForward.class, "main/maxsim_linear.cu maxsim_linear_forward");
    mirror(KernelArgs.LinearWeightGradient.class, "main/maxsim_linear.cu maxsim_linear_weight_gradient");
    mirror(KernelArgs.FdeGather.class, "main/maxsim_fde.cu maxsim_fde_gather");
    mirror(KernelArgs.FdeProducts.class, "main/maxsim_fde.cu maxsim_fde_products");
    mirror(KernelArgs.FdePartitions.class, "main/maxsim_fde.cu maxsim_fde_partitions");
    mirror(KernelArgs.FdeSketch.class, "main/maxsim_fde.cu maxsim_fde_sketch");
  }

  private static void mirror(Class<?> record, String... signatures) {
    MIRRORS.put(record, List.of(signatures));
  }

  /** A kernel parameter as the record must mirror it: name, kind (pointer, int, float, map) and bytes. */
  record Param(String name, String kind, int bytes) {
    @Override
    public String toString() {
      return name + ":" + kind + bytes;
    }
  }

  @Test
  void everyRecordMatchesItsKernelsInCountOrderNameAndWidth() {
    Map<String, List<Param>> signatures = signatures();
    for (Map.Entry<Class<?>, List<String>> e : MIRRORS.entrySet()) {
      List<Param> record = params(e.getKey());
      for (String signature : e.getValue()) {
        List<Param> kernel = signatures.get(signature);
        assertNotNull(kernel, "no extern \"C\" signature " + signature + " in the .cu sources");
        assertEquals(kernel, asKernelSees(record, kernel), e.getKey().getSimpleName() + " against " + signature);
      }
    }
  }

  @Test
  void everyKernelHasARecordAndEveryRecordIsChecked() {
    Set<String> mirrored = new TreeSet<>();
    MIRRORS.values().forEach(mirrored::addAll);
    Set<String> unmirrored = new TreeSet<>(signatures().keySet());
    unmirrored.removeAll(mirrored);
    assertEquals(Set.of(), unmirrored, "kernels without a KernelArgs record");
    assertEquals(Set.of(KernelArgs.class.getPermittedSubclasses()), MIRRORS.keySet(), "records checked here");
  }

  /** writeTo hands the components to the sink in declaration order, each as its own kind. */
  @Test
  void everyRecordWritesItsComponentsInOrder() throws ReflectiveOperationException {
    for (Class<?> type : KernelArgs.class.getPermittedSubclasses()) {
      RecordComponent[] components = type.getRecordComponents();
      Object[] values = new Object[components.length];
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < components.length; i++) {
        long v = 1000 + i;
        Class<?> t = components[i].getType();
        values[i] = t == long.class ? (Object) v : t == int.class ? (Object) (int) v : t == float.class
            ? (Object) (float) v : t == KernelArgs.Scratch.class
            ? new KernelArgs.Scratch(ScratchSlot.SCORES, v, false)
            : new DeviceTokens(dev.maxsim4j.DType.BFLOAT16, 128, 1, 1, 1, v, 0, 0, 0, 0);
        expected.add(kind(t) + v);
      }
      Constructor<?> c = type.getDeclaredConstructor(Arrays.stream(components).map(RecordComponent::getType)
          .toArray(Class<?>[]::new));
      List<String> written = new ArrayList<>();
      ((KernelArgs) c.newInstance(values)).writeTo(new KernelArgs.Sink() {
        @Override
        public KernelArgs.Sink i64(long value) {
          written.add("i64" + value);
          return this;
        }

        @Override
        public KernelArgs.Sink i32(int value) {
          written.add("i32" + value);
          return this;
        }

        @Override
        public KernelArgs.Sink f32(float value) {
          written.add("f32" + (long) value);
          return this;
        }

        @Override
        public KernelArgs.Sink scratch(KernelArgs.Scratch buffer) {
          written.add("scratch" + buffer.bytes());
          return this;
        }

        @Override
        public KernelArgs.Sink tensorMap(DeviceTokens documents) {
          written.add("map" + documents.data());
          return this;
        }
      });
      assertEquals(expected, written, type.getSimpleName());
    }
  }

  /** The parser reads what the kernels declare: a sample of known signatures, spelled out. */
  @Test
  void theParserReadsKnownSignatures() {
    Map<String, List<Param>> all = signatures();
    assertEquals(List.of(new Param("in", "pointer", 8), new Param("inStride", "int", 8),
        new Param("count", "int", 8), new Param("k", "int", 4), new Param("out", "pointer", 8),
        new Param("outStride", "int", 8)), all.get("main/maxsim_topk.cu maxsim_topk_from_keys"));
    List<Param> ws = all.get("main/maxsim_forward_wgmma_ws.cu MAXSIM_WGMMA_WS_ENTRY:NAME");
    assertEquals(new Param("documents", "map", 128), ws.get(ws.size() - 1));
    assertEquals(new Param("temperature", "float", 4),
        all.get("main/maxsim_loss.cu maxsim_loss_kl").get(4));
    assertEquals(16, all.get("main/maxsim_forward.cu MAXSIM_FORWARD_ENTRY:NAME").size());
    assertTrue(all.size() >= 17, "signatures found: " + all.keySet());
  }

  // ------------------------------------------------------------------------------ the record side

  private static List<Param> params(Class<?> record) {
    List<Param> out = new ArrayList<>();
    for (RecordComponent c : record.getRecordComponents()) {
      Class<?> t = c.getType();
      String kind = t == long.class ? "long" : t == int.class ? "int" : t == float.class ? "float"
          : t == KernelArgs.Scratch.class ? "scratch" : t == DeviceTokens.class ? "map" : "?" + t;
      int bytes = t == int.class || t == float.class ? 4 : t == DeviceTokens.class ? 128 : 8;
      out.add(new Param(c.getName(), kind, bytes));
    }
    return out;
  }

  /**
   * The record's parameters with each kind the kernel's where they agree: a long is a pointer or a 64-bit
   * integer, a Scratch a pointer, an int a 32-bit integer, a float a float, DeviceTokens the tensor map.
   */
  private static List<Param> asKernelSees(List<Param> record, List<Param> kernel) {
    List<Param> out = new ArrayList<>();
    for (int i = 0; i < record.size(); i++) {
      Param r = record.get(i);
      String kind = r.kind();
      if (i < kernel.size()) {
        String k = kernel.get(i).kind();
        boolean agree = switch (r.kind()) {
          case "long" -> k.equals("pointer") || k.equals("int") && kernel.get(i).bytes() == 8;
          case "scratch" -> k.equals("pointer");
          default -> k.equals(r.kind());
        };
        kind = agree ? k : r.kind();
      }
      out.add(new Param(r.name(), kind, r.bytes()));
    }
    return out;
  }

  private static String kind(Class<?> t) {
    return t == long.class ? "i64" : t == int.class ? "i32" : t == float.class ? "f32"
        : t == KernelArgs.Scratch.class ? "scratch" : "map";
  }

  // ------------------------------------------------------------------------------ the kernel side

  private static final Pattern EXTERN = Pattern.compile("extern\\s+\"C\"\\s+__global__\\s+void\\s+");

  /** Every extern "C" kernel of the .cu sources by "main|test/file [MACRO:]name", its parameters in order. */
  static Map<String, List<Param>> signatures() {
    Map<String, List<Param>> out = new LinkedHashMap<>();
    for (Path dir : List.of(MAIN, TEST)) {
      assertTrue(Files.isDirectory(dir), dir.toAbsolutePath() + " (the test runs in the module's directory)");
      try (Stream<Path> files = Files.walk(dir, 2)) {
        for (Path file : files.filter(f -> f.toString().endsWith(".cu") || f.toString().endsWith(".cuh")).sorted()
            .toList()) {
          String prefix = (dir == MAIN ? "main/" : "test/") + file.getFileName() + " ";
          parse(Files.readString(file)).forEach((k, v) -> {
            assertFalse(out.containsKey(prefix + k), "two signatures named " + prefix + k);
            out.put(prefix + k, v);
          });
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }

  /** The kernels of one source: continued lines joined, comments dropped, then each extern "C" read. */
  static Map<String, List<Param>> parse(String source) {
    String text = source.replaceAll("\\\\\\r?\\n", " ").replaceAll("(?s)/\\*.*?\\*/", " ")
        .replaceAll("//[^\\n]*", "");
    Map<String, List<Param>> out = new LinkedHashMap<>();
    Matcher m = EXTERN.matcher(text);
    while (m.find()) {
      int at = m.end();
      while (text.startsWith("__launch_bounds__", at) || text.startsWith("__maxnreg__", at)) {
        at = skipParens(text, text.indexOf('(', at)) + 1;
        while (Character.isWhitespace(text.charAt(at))) {
          at++;
        }
      }
      int open = text.indexOf('(', at);
      String name = text.substring(at, open).trim();
      int close = skipParens(text, open);
      String line = text.substring(text.lastIndexOf('\n', m.start()) + 1, m.start()).trim();
      Matcher define = Pattern.compile("^#\\s*define\\s+(\\w+)").matcher(line);
      String key = define.find() ? define.group(1) + ":" + name : name;
      List<Param> params = new ArrayList<>();
      for (String p : text.substring(open + 1, close).split(",")) {
        params.add(param(p.trim(), key));
      }
      out.put(key, params);
    }
    return out;
  }

  private static int skipParens(String text, int open) {
    int depth = 0;
    for (int i = open; i < text.length(); i++) {
      char c = text.charAt(i);
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (depth == 0) {
        return i;
      }
    }
    throw new IllegalArgumentException("unbalanced parentheses after offset " + open);
  }

  private static Param param(String declaration, String kernel) {
    Matcher m = Pattern.compile("^(.*?)\\s*\\b(\\w+)$").matcher(declaration.replaceAll("\\s+", " "));
    assertTrue(m.find(), kernel + ": cannot read parameter '" + declaration + "'");
    String type = (" " + m.group(1) + " ").replaceAll(" (const|__restrict__|__grid_constant__|volatile) ", " ")
        .replaceAll(" (const|__restrict__|__grid_constant__|volatile) ", " ").trim();
    if (type.contains("*")) {
      return new Param(m.group(2), "pointer", 8);
    }
    return switch (type) {
      case "int", "unsigned", "unsigned int", "int32_t", "uint32_t" -> new Param(m.group(2), "int", 4);
      case "float" -> new Param(m.group(2), "float", 4);
      case "long long", "unsigned long long", "int64_t", "uint64_t", "size_t" -> new Param(m.group(2), "int", 8);
      case "TensorMap" -> new Param(m.group(2), "map", 128);
      default -> throw new AssertionError(kernel + ": parameter '" + declaration + "' has a type this test does not "
          + "know; expected a pointer, int, float, long long or TensorMap");
    };
  }
}
