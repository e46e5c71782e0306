package dev.maxsim4j.internal.cuda.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The jar's kernel modules named in Java are exactly the .cu files build.sh compiles into it. Runs on the CPU. */
class KernelModuleTest {

  @Test
  void theShippedModulesAreTheKernelSources() throws IOException {
    Set<String> sources;
    try (Stream<Path> files = Files.walk(Path.of("src/main/cuda"), 2)) {
      sources = files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".cu"))
          .map(n -> n.substring(0, n.length() - 3)).collect(Collectors.toCollection(TreeSet::new));
    }
    Set<String> named = KernelModule.SHIPPED.stream().map(KernelModule::name)
        .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(sources, named);
    assertEquals(KernelModule.SHIPPED.size(), named.size(), "a module listed twice");
  }

  @Test
  void aModuleNamesItsFatbinAndNothingElse() {
    assertEquals("/dev/maxsim4j/cuda/maxsim_topk.fatbin", KernelModule.TOPK.resource());
    assertEquals("maxsim_merge", KernelModule.MERGE.toString());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new KernelModule("../maxsim_forward"));
    assertTrue(e.getMessage().contains("\"../maxsim_forward\""), e.getMessage());
  }
}
