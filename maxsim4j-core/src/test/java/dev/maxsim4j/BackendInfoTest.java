package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.BackendSelector;
import org.junit.jupiter.api.Test;

/** backendInfo() names the backend, its threads and why faster ones were passed over. */
class BackendInfoTest {

  /** Fails when the test JVM lacks --add-modules jdk.incubator.vector (the pom's argLine adds it). */
  @Test
  void theFastCpuPathIsPresentInTheTestJvm() {
    assertTrue(MaxSim.vectorApiAvailable(), "the test JVM must run with --add-modules jdk.incubator.vector");
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
      assertEquals("vector", m.backendName());
    }
  }

  @Test
  void infoNamesTheBackendThreadsAndWhatWasPassedOver() {
    boolean noGpu = BackendSelector.cudaUnavailableReason().isPresent();
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(3).build()) {
      String info = m.backendInfo();
      assertTrue(info.startsWith("vector (Vector API, "), info);
      assertTrue(info.contains("-bit float lanes, 3 threads)"), info);
      assertTrue(info.contains("; cuda not used: "
          + (noGpu ? BackendSelector.cudaUnavailableReason().get() : "backend 'cpu' was asked for")), info);
    }
    try (MaxSim m = MaxSim.builder().backend("scalar").threads(1).build()) {
      String info = m.backendInfo();
      assertTrue(info.startsWith("scalar (plain Java loops in fp32, 1 thread)"), info);
      assertTrue(info.contains("; vector not used: backend 'scalar' was asked for"), info);
    }
  }
}
