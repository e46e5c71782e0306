package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.plan.KernelType;
import dev.maxsim4j.internal.cuda.plan.PairLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Integer codes the kernels read as enums: the Java side passes the code of the same meaning (a code out of place
 * would be a wrong layout or storage type, read silently).
 */
class KernelCodesTest {

  /** {@code enum NAME { A = 0, B = 1 }} of {@code file} (under src/main/cuda) as name to code. */
  private static Map<String, Integer> kernelEnum(String file, String name) throws IOException {
    String source = Files.readString(Path.of("src/main/cuda", file));
    Matcher m = Pattern.compile("enum " + name + " \\{([^}]*)}").matcher(source);
    assertTrue(m.find(), "enum " + name + " in " + file);
    Map<String, Integer> codes = new LinkedHashMap<>();
    for (String item : m.group(1).split(",")) {
      String[] nameCode = item.trim().split("\\s*=\\s*");
      codes.put(nameCode[0], Integer.parseInt(nameCode[1]));
    }
    return codes;
  }

  @Test
  void theLayoutsAreTheKernelsPairModes() throws IOException {
    Map<String, Integer> java = new LinkedHashMap<>();
    for (PairLayout layout : PairLayout.values()) {
      java.put(layout.name(), layout.mode());
    }
    assertEquals(kernelEnum("common/maxsim_common.cuh", "PairMode"), java);
  }

  @Test
  void everyTypeHasOneKernelType() {
    for (DType t : DType.values()) {
      assertEquals(t, KernelType.of(t).dtype());
    }
    assertEquals(DType.values().length, KernelType.values().length);
  }

  @Test
  void theFdeStorageCodesAreTheKernels() throws IOException {
    Map<String, Integer> java = new LinkedHashMap<>();
    for (KernelType t : KernelType.values()) {
      java.put("STORE_" + t.suffix().toUpperCase(Locale.ROOT), t.storageCode());
    }
    assertEquals(kernelEnum("fde/maxsim_fde.cu", "Storage"), java);
  }

  @Test
  void theGradientTypesAreTheKernels() throws IOException {
    Map<String, Integer> java = new LinkedHashMap<>();
    for (KernelType t : KernelType.values()) {
      if (t.dtype().isQuantized()) {
        assertThrows(IllegalStateException.class, t::gradientCode, t.name());
      } else {
        java.put("GRADIENT_" + t.suffix().toUpperCase(Locale.ROOT), t.gradientCode());
      }
    }
    assertEquals(kernelEnum("train/maxsim_backward.cu", "GradientType"), java);
  }
}
