package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.ResidentBatch;
import dev.maxsim4j.TokenBatch;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A diagnostic for the GPU host, not a test: where the time of one {@code scores} call goes beyond the
 * kernel. Prints the median wall time of the driver operations a call makes (each followed by a stream
 * synchronisation), then of whole calls with host and with resident queries. Run with the test classes on
 * the class path: {@code java -cp ...:lib/test-classes/maxsim4j-core dev.maxsim4j.internal.cuda.CallPhasesProbe}.
 */
public final class CallPhasesProbe {
  private static final int WARMUP = 500;
  private static final int RUNS = 2000;

  public static void main(String[] args) {
    CudaDevice device = new CudaDevice(0);
    long buffer = device.scratch("probe", 4L << 20);
    MemorySegment pinned = device.pinned(4L << 20);
    report("stream synchronise (idle)", () -> Driver.synchronize(device.stream));
    report("memset 4 B + sync", () -> {
      Driver.fill32(buffer, 0, 1, device.stream);
      Driver.synchronize(device.stream);
    });
    for (long bytes : new long[] {4_000, 40_000, 65_536, 1 << 20}) {
      report("device->host " + bytes + " B + sync", () -> {
        Driver.copyToHost(pinned, buffer, bytes, device.stream);
        Driver.synchronize(device.stream);
      });
      report("host->device " + bytes + " B + sync", () -> {
        Driver.copyToDevice(buffer, pinned, bytes, device.stream);
        Driver.synchronize(device.stream);
      });
    }
    device.close();

    try (MaxSim maxSim = MaxSim.builder().backend("cuda").build()) {
      for (int[] s : new int[][] {{1, 1000, 32, 300, 128}, {1, 10000, 32, 300, 128}, {128, 128, 32, 300, 128}}) {
        TokenBatch q = random(s[0], s[2], s[4], 1);
        TokenBatch d = random(s[1], s[3], s[4], 2);
        String shape = s[0] + "x" + s[1] + "x" + s[2] + "x" + s[3] + "x" + s[4];
        try (ResidentBatch rd = maxSim.upload(d)) {
          report(shape + " scores(host q, resident d)", () -> maxSim.scores(q, rd));
          try (ResidentBatch rq = maxSim.upload(q)) {
            report(shape + " scores(resident q, resident d)", () -> maxSim.scores(q, rd));
          }
        }
      }
    }
  }

  private static TokenBatch random(int n, int length, int dim, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    short[] bits = new short[n * length * dim];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = DType.BFLOAT16.narrow((float) rnd.nextGaussian());
    }
    return TokenBatch.ofHalfs(DType.BFLOAT16, bits, n, length, dim);
  }

  private static void report(String what, Runnable op) {
    for (int i = 0; i < WARMUP; i++) {
      op.run();
    }
    long[] t = new long[RUNS];
    for (int i = 0; i < RUNS; i++) {
      long t0 = System.nanoTime();
      op.run();
      t[i] = System.nanoTime() - t0;
    }
    Arrays.sort(t);
    System.out.printf(Locale.ROOT, "%-48s median %8.1f us  p10 %8.1f  p90 %8.1f%n", what, t[RUNS / 2] / 1e3,
        t[RUNS / 10] / 1e3, t[RUNS * 9 / 10] / 1e3);
  }
}
