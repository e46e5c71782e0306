package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.BackendSelector;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * An unknown backend name from the system property maxsim4j.backend names that property, as maxsim4j.threads does:
 * MaxSim.create() said "backend 'gpu' is unknown", naming an argument its caller never passed. A known name the
 * property forces where its backend cannot run names the property too.
 */
class HostileBackendPropertyTest {
  @Test
  void anUnknownNameFromThePropertyNamesTheProperty() {
    String old = System.getProperty(BackendSelector.PROPERTY);
    try {
      System.setProperty(BackendSelector.PROPERTY, "gpu");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, MaxSim::create);
      assertEquals("system property maxsim4j.backend = 'gpu'; expected one of auto, cpu, cuda, reference, scalar,"
          + " vector (or call backend(name) on the builder)", e.getMessage());
      // a name given to the builder replaces the property's, and is the one an error names
      try (MaxSim m = MaxSim.builder().backend("reference").threads(1).build()) {
        assertEquals("reference", m.backendName());
      }
      assertEquals("backend 'fast' is unknown; expected one of auto, cpu, cuda, reference, scalar, vector",
          assertThrows(IllegalArgumentException.class, () -> MaxSim.builder().backend("fast").build()).getMessage());
      System.setProperty(BackendSelector.PROPERTY, " Reference ");
      try (MaxSim m = MaxSim.builder().threads(1).build()) {
        assertEquals("reference", m.backendName());
      }
    } finally {
      if (old == null) {
        System.clearProperty(BackendSelector.PROPERTY);
      } else {
        System.setProperty(BackendSelector.PROPERTY, old);
      }
    }
  }

  @Test
  void anUnavailableBackendFromThePropertyNamesTheProperty() {
    Assumptions.assumeTrue(BackendSelector.cudaUnavailableReason().isPresent(), "CUDA runs here");
    String old = System.getProperty(BackendSelector.PROPERTY);
    try {
      System.setProperty(BackendSelector.PROPERTY, "cuda");
      IllegalStateException e = assertThrows(IllegalStateException.class, MaxSim::create);
      assertTrue(e.getMessage().startsWith("the CUDA backend is unavailable: "), e.getMessage());
      assertTrue(e.getMessage().endsWith("(backend 'cuda' from system property maxsim4j.backend; unset it for auto,"
          + " or call backend(name) on the builder)"), e.getMessage());
      IllegalStateException asked = assertThrows(IllegalStateException.class,
          () -> MaxSim.builder().backend("cuda").build());
      assertFalse(asked.getMessage().contains("system property"), asked.getMessage());
    } finally {
      if (old == null) {
        System.clearProperty(BackendSelector.PROPERTY);
      } else {
        System.setProperty(BackendSelector.PROPERTY, old);
      }
    }
  }
}
