package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fp8 tokens mapped from a file that shrinks under them: the JVM turns the fault of a read past the file's end into
 * an InternalError, but a byte so read was also the index of the e4m3 table, its bounds check compiled away, and the
 * stale register it held read wild memory: the JVM died (SIGSEGV) in the scalar kernel, quantize and l2Normalized.
 * Each runs compiled, in a JVM of its own, over a file cut to one page; the JVM must survive with an error.
 */
class HostileShrunkMappingTest {
  @TempDir Path dir;

  @Test
  void fp8TokensOfAShrunkFileFailWithoutKillingTheJvm() throws Exception {
    for (String call : new String[] {"scalar", "quantize", "l2Normalized"}) {
      // a JVM that dies writes its report here, not in the module's folder
      String out = ChildJvm.run(List.of("-XX:ErrorFile=" + dir.resolve("hs_err_%p.log")), Probe.class, 180,
          dir.resolve(call + ".bin").toString(), call);
      assertTrue(out.contains("survived: " + call), call + ": " + out);
    }
  }

  /** The child: compiles the call's path over the whole file, cuts the file to one page and calls again. */
  static final class Probe {
    public static void main(String[] args) throws Exception {
      int n = 2000;
      int length = 64;
      int dim = 128;
      long bytes = (long) n * length * dim;
      byte[] codes = new byte[(int) bytes];
      new SplittableRandom(1).nextBytes(codes);
      for (int i = 0; i < codes.length; i++) {
        if ((codes[i] & 0x7f) == 0x7f) {
          codes[i] = 0x10; // no NaN code
        }
      }
      Path file = Files.write(Path.of(args[0]), codes);
      String call = args[1];
      TokenBatch q = TokenBatch.ofFloats(new float[8 * dim], 1, 8, dim);
      try (Arena arena = Arena.ofShared();
          FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
          MaxSim scalar = MaxSim.builder().backend("scalar").threads(1).build()) {
        MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes, arena);
        TokenBatch docs = TokenBatch.fromMemorySegment(mapped, DType.FLOAT8_E4M3, n, length, dim);
        for (int warm = 0; warm < 12; warm++) {
          run(call, scalar, q, docs);
        }
        ch.truncate(4096);
        try {
          run(call, scalar, q, docs);
          System.out.println("survived: " + call + " without an error");
        } catch (InternalError | RuntimeException e) {
          System.out.println("survived: " + call + " with " + e);
        }
      }
    }

    private static void run(String call, MaxSim scalar, TokenBatch q, TokenBatch docs) {
      switch (call) {
        case "scalar" -> scalar.scores(q, docs);
        case "quantize" -> docs.quantize(DType.INT8);
        default -> docs.l2Normalized();
      }
    }
  }
}
