package dev.maxsim4j.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/** Under G1 an array of half a region or more takes whole regions; smaller ones, and other collectors, their bytes. */
class HeapRegionsTest {
  @Test
  void largeArraysTakeWholeRegionsUnderG1() {
    HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    boolean g1 = Boolean.parseBoolean(vm.getVMOption("UseG1GC").getValue());
    long region = Long.parseLong(vm.getVMOption("G1HeapRegionSize").getValue());
    assertEquals(100, HeapRegions.footprint(100));
    assertEquals(region / 2 - 1, HeapRegions.footprint(region / 2 - 1));
    assertEquals(g1 ? region : region / 2, HeapRegions.footprint(region / 2));
    assertEquals(g1 ? 2 * region : region + 1, HeapRegions.footprint(region + 1));
    assertEquals(g1 ? Long.MAX_VALUE : Long.MAX_VALUE - 1, HeapRegions.footprint(Long.MAX_VALUE - 1));
  }
}
