package dev.maxsim4j.internal;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/**
 * The heap an array takes, as the JVM's collector lays it out: G1 puts an object of half a region or more in whole
 * regions of its own (an 800 KB row of a 64 MB heap takes a 1 MB region), so results of many large rows need up to
 * twice their bytes. Other collectors, and JVMs that do not say, take an array's bytes as they are.
 */
final class HeapRegions {
  /** G1's region size where the JVM collects with G1, else 0. */
  private static final long G1_REGION = g1Region();

  private HeapRegions() {}

  /** The heap an array of {@code bytes} (header included) takes: whole regions where G1 holds it apart. */
  static long footprint(long bytes) {
    if (G1_REGION == 0 || bytes < G1_REGION / 2) {
      return bytes;
    }
    long regions = bytes / G1_REGION + (bytes % G1_REGION == 0 ? 0 : 1);
    return regions > Long.MAX_VALUE / G1_REGION ? Long.MAX_VALUE : regions * G1_REGION;
  }

  private static long g1Region() {
    try {
      HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      if (vm == null || !Boolean.parseBoolean(vm.getVMOption("UseG1GC").getValue())) {
        return 0;
      }
      return Long.parseLong(vm.getVMOption("G1HeapRegionSize").getValue());
    } catch (RuntimeException | LinkageError unknown) { // a runtime without jdk.management, another JVM
      return 0;
    }
  }
}
