package dev.maxsim4j.internal.cpu;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/**
 * How many vector registers the JIT compiles the kernels for: 32 with AVX-512 (also when the vectors are capped at
 * 256 bits) and on ARM, 16 with AVX2. The blocks hold as many accumulators as fit: a loop that needs one more
 * register than there are stores and reloads one on every step.
 */
final class VectorRegisters {
  private VectorRegisters() {}

  /** 32 or 16; 16 where the JVM does not say (a runtime without jdk.management, another JVM). */
  static int count(int vectorBits) {
    if (vectorBits >= 512 || System.getProperty("os.arch", "").equals("aarch64")) {
      return 32;
    }
    try {
      HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      // UseAVX 3 is the EVEX encoding, which with AVX512VL (every AVX-512 server core) reaches registers 16 to 31
      // at 256 bits too
      return vm != null && Integer.parseInt(vm.getVMOption("UseAVX").getValue()) >= 3 ? 32 : 16;
    } catch (RuntimeException | LinkageError unknown) {
      return 16;
    }
  }
}
