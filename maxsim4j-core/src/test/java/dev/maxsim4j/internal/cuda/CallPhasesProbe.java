package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.ResidentBatch;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A diagnostic for the GPU host, not a test: where the time of one {@code scores} call goes beyond the
 * kernel. Prints the median wall time of the driver operations a call makes (each followed by a stream
 * synchronisation), then of whole calls with host and with resident queries. Run with the test classes on
 * the class path: {@code java -cp ...:lib/test-classes/maxsim4j-core dev.maxsim4j.internal.cuda.CallPhasesProbe}
 * ({@code calls} as the argument: the whole calls only; {@code direct}: the steps of the direct-to-host call
 * path, then the whole calls).
 */
public final class CallPhasesProbe {
  private static final int WARMUP = 500;
  private static final int RUNS = 2000;

  public static void main(String[] args) {
    String mode = args.length == 0 ? "all" : args[0];
    if (mode.equals("direct")) {
      CudaDevice device = new CudaDevice(0);
      pinnedReads(device);
      for (int[] s : new int[][] {{1, 1000, 32, 300, 128}, {1, 10000, 32, 300, 128}, {128, 128, 32, 300, 128},
          {32, 32, 32, 300, 128}}) {
        directPhases(device, s);
      }
      device.close();
    } else if (!mode.equals("calls")) {
      driverAndKernelPhases();
    }
    wholeCalls();
  }

  private static void driverAndKernelPhases() {
    CudaDevice device = new CudaDevice(0);
    long buffer = device.allocate(4L << 20);
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
    hostReads(device, buffer);
    int[][] shapes = {{1, 1000, 32, 300, 128}, {1, 5000, 32, 300, 128}, {1, 10000, 32, 300, 128},
        {128, 128, 32, 300, 128}, {32, 32, 32, 300, 128}, {1, 1000, 1024, 1024, 128}};
    for (int[] s : shapes) {
      phases(device, s);
    }
    device.close();
  }

  /** Whole {@code scores} calls through the public API, with host and with resident queries. */
  private static void wholeCalls() {
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

  /**
   * Java copies out of host memory: pinned memory after the device wrote it, and ordinary native memory.
   */
  private static void hostReads(CudaDevice device, long buffer) {
    for (int bytes : new int[] {4_000, 40_000, 65_536, 1 << 20}) {
      float[] out = new float[bytes / 4];
      MemorySegment pinned = Driver.mallocHost(bytes);
      try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
        MemorySegment plain = arena.allocate(bytes, 4096);
        report("copy out of cuMemAllocHost " + bytes + " B", () -> {
          Driver.copyToHost(pinned, buffer, bytes, device.stream);
          Driver.synchronize(device.stream);
          MemorySegment.copy(pinned, ValueLayout.JAVA_FLOAT, 0, out, 0, bytes / 4);
        });
        report("copy out of plain native " + bytes + " B", () ->
            MemorySegment.copy(plain, ValueLayout.JAVA_FLOAT, 0, out, 0, bytes / 4));
        report("new float[" + bytes / 4 + "]", () -> {
          float[] f = new float[bytes / 4];
          sink += f.length;
        });
      }
      Driver.freeHost(pinned);
    }
  }

  private static long sink;

  /**
   * Only the Java copy of 64 KB (16384 scores) into a float[] (or 128 rows of 128), timed alone after its
   * source was written by: the CPU (plain native and pinned memory), a device-to-host copy, or the GPU
   * through the mapping (cuMemsetD32 on the pinned buffer's device address, as the kernel writes scores).
   * Each case is run 3000 times before it is timed, so the copy is compiled code.
   */
  private static void pinnedReads(CudaDevice device) {
    int n = 16384;
    long bytes = 4L * n;
    MemorySegment pinned = device.pinned(bytes).asSlice(0, bytes);
    long mapped = device.deviceAddress(pinned);
    long buffer = device.allocate(bytes);
    MemorySegment plain = java.lang.foreign.Arena.global().allocate(bytes, 4096);
    float[] flat = new float[n];
    float[][] rows = new float[128][128];
    Runnable toFlat = () -> MemorySegment.copy(pinned, ValueLayout.JAVA_FLOAT, 0, flat, 0, n);
    Runnable toRows = () -> {
      for (int i = 0; i < 128; i++) {
        MemorySegment.copy(pinned, ValueLayout.JAVA_FLOAT, 512L * i, rows[i], 0, 128);
      }
    };
    timeCopy("plain native, CPU-written -> float[]", () -> plain.fill((byte) 1),
        () -> MemorySegment.copy(plain, ValueLayout.JAVA_FLOAT, 0, flat, 0, n));
    timeCopy("pinned, CPU-written -> float[]", () -> pinned.fill((byte) 1), toFlat);
    timeCopy("pinned, DMA-written -> float[]", () -> {
      Driver.copyToHost(pinned, buffer, bytes, device.stream);
      Driver.synchronize(device.stream);
    }, toFlat);
    Runnable gpuWrite = () -> {
      Driver.fill32(mapped, 0x3f800000, n, device.stream);
      Driver.synchronize(device.stream);
    };
    timeCopy("pinned, GPU-written via mapping -> float[]", gpuWrite, toFlat);
    timeCopy("pinned, GPU-written via mapping -> 128 rows", gpuWrite, toRows);
    timeCopy("pinned, CPU-written -> 128 rows", () -> pinned.fill((byte) 1), toRows);
  }

  private static void timeCopy(String what, Runnable prepare, Runnable copy) {
    long[] t = new long[3000];
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < t.length; i++) {
        prepare.run();
        long t0 = System.nanoTime();
        copy.run();
        t[i] = System.nanoTime() - t0;
      }
    }
    System.out.printf(Locale.ROOT, "%-48s median %6.2f us  p10 %6.2f  p90 %6.2f%n", what, median(t) / 1e3,
        percentile(t, 0.1) / 1e3, percentile(t, 0.9) / 1e3);
  }

  private static double percentile(long[] v, double p) {
    long[] c = v.clone();
    Arrays.sort(c);
    return c[(int) (c.length * p)];
  }

  /**
   * One call's steps by hand (poison fill, launch, download, synchronise, copy out), timed on the host
   * around each step and on the device by events: the kernel alone back to back, the kernel alone
   * isolated, and the device span of the whole call.
   */
  private static void phases(CudaDevice device, int[] s) {
    Uploaded u = Uploaded.of(device, s);
    String shape = u.shape();
    int pairs = s[0] * s[1];
    long scores = device.scratch(ScratchSlot.SCORES, 4L * pairs);
    MemorySegment pinned = device.pinned(4L * pairs);
    Runnable launch = u.allPairsInto(scores);
    Driver.Event e0 = Driver.createEvent();
    Driver.Event e1 = Driver.createEvent();
    int n = 400;
    double[] backToBack = new double[n / 20];
    double[] isolated = new double[n];
    double[] span = new double[n];
    long[] enqueue = new long[n];
    long[] waitSync = new long[n];
    long[] copyOut = new long[n];
    long[] total = new long[n];
    for (int round = 0; round < 2; round++) { // round 0 warms up
      kernelTimes(device, launch, e0, e1, backToBack, isolated);
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        Driver.record(e0, device.stream);
        Driver.fill32(scores, 0x7fc00001, pairs, device.stream);
        launch.run();
        Driver.copyToHost(pinned, scores, 4L * pairs, device.stream);
        Driver.record(e1, device.stream);
        long t1 = System.nanoTime();
        Driver.synchronize(device.stream);
        long t2 = System.nanoTime();
        float[] out = new float[pairs];
        MemorySegment.copy(pinned, ValueLayout.JAVA_FLOAT, 0, out, 0, pairs);
        long t3 = System.nanoTime();
        enqueue[i] = t1 - t0;
        waitSync[i] = t2 - t1;
        copyOut[i] = t3 - t2;
        total[i] = t3 - t0;
        span[i] = Driver.elapsedMillis(e0, e1) * 1e3;
      }
    }
    System.out.printf(Locale.ROOT, "%-22s kernel b2b %7.1f us  isolated %7.1f  call span %7.1f | host: enqueue %6.1f"
        + "  wait %7.1f  copy-out %5.1f  total %7.1f%n", shape, median(backToBack), median(isolated), median(span),
        median(enqueue) / 1e3, median(waitSync) / 1e3, median(copyOut) / 1e3, median(total) / 1e3);
    Driver.destroyEvent(e0);
    Driver.destroyEvent(e1);
    u.close();
  }

  /**
   * The steps of one inference call on the direct path (CudaBackend.score: scores written by the kernel
   * into pinned host memory), each timed on the host: poison, launch, synchronise, copy out, one row per
   * query; and the kernel between events, isolated and back to back.
   */
  private static void directPhases(CudaDevice device, int[] s) {
    Uploaded u = Uploaded.of(device, s);
    String shape = u.shape();
    int pairs = s[0] * s[1];
    MemorySegment out = device.pinned(4L * pairs).asSlice(0, 4L * pairs);
    Runnable launch = u.allPairsInto(device.deviceAddress(out));
    Driver.Event e0 = Driver.createEvent();
    Driver.Event e1 = Driver.createEvent();
    int n = 400;
    double[] backToBack = new double[n / 20];
    double[] isolated = new double[n];
    long[][] steps = new long[6][n];
    for (int round = 0; round < 2; round++) { // round 0 warms up
      kernelTimes(device, launch, e0, e1, backToBack, isolated);
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        out.fill((byte) -1);
        long t1 = System.nanoTime();
        launch.run();
        long t2 = System.nanoTime();
        Driver.synchronize(device.stream);
        long t3 = System.nanoTime();
        float[] flat = new float[pairs];
        MemorySegment.copy(out, ValueLayout.JAVA_FLOAT, 0, flat, 0, pairs);
        long t4 = System.nanoTime();
        float[][] rows = new float[s[0]][];
        for (int r = 0; r < s[0]; r++) {
          rows[r] = Arrays.copyOfRange(flat, r * s[1], (r + 1) * s[1]);
        }
        long t5 = System.nanoTime();
        sink += rows.length;
        long[] t = {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0};
        for (int k = 0; k < t.length; k++) {
          steps[k][i] = t[k];
        }
      }
    }
    System.out.printf(Locale.ROOT, "%-22s kernel b2b %7.1f us  isolated %7.1f | host: poison %5.1f  launch %5.1f"
        + "  sync %7.1f  copy-out %5.1f  rows %5.1f  total %7.1f%n", shape, median(backToBack), median(isolated),
        median(steps[0]) / 1e3, median(steps[1]) / 1e3, median(steps[2]) / 1e3, median(steps[3]) / 1e3,
        median(steps[4]) / 1e3, median(steps[5]) / 1e3);
    Driver.destroyEvent(e0);
    Driver.destroyEvent(e1);
    u.close();
  }

  /**
   * Microseconds per launch between events: {@code backToBack[i]} over a series of 20 launches,
   * {@code isolated[i]} for one launch alone.
   */
  private static void kernelTimes(CudaDevice device, Runnable launch, Driver.Event e0, Driver.Event e1,
      double[] backToBack, double[] isolated) {
    for (int i = 0; i < backToBack.length; i++) {
      Driver.record(e0, device.stream);
      for (int j = 0; j < 20; j++) {
        launch.run();
      }
      Driver.record(e1, device.stream);
      backToBack[i] = Driver.elapsedMillis(e0, e1) / 20 * 1e3;
    }
    for (int i = 0; i < isolated.length; i++) {
      Driver.record(e0, device.stream);
      launch.run();
      Driver.record(e1, device.stream);
      isolated[i] = Driver.elapsedMillis(e0, e1) * 1e3;
    }
  }

  /**
   * One probe shape {@code s} (Nq, Nd, Lq, Ld, d): random bf16 queries and documents on the device, and the
   * launcher its launches go through; close frees them.
   */
  private record Uploaded(CudaDevice device, int[] s, String shape, DeviceTokens q, long qBytes, DeviceTokens d,
      long dBytes, Launcher launcher) implements AutoCloseable {
    static Uploaded of(CudaDevice device, int[] s) {
      Tokens qt = tokens(s[0], s[2], s[4], 1);
      Tokens dt = tokens(s[1], s[3], s[4], 2);
      long qBytes = DeviceTokens.bytesFor(qt);
      long dBytes = DeviceTokens.bytesFor(dt);
      return new Uploaded(device, s, s[0] + "x" + s[1] + "x" + s[2] + "x" + s[3] + "x" + s[4],
          DeviceTokens.upload(device, qt, device.allocate(qBytes)), qBytes,
          DeviceTokens.upload(device, dt, device.allocate(dBytes)), dBytes, new Launcher(device));
    }

    /** One all-pairs forward launch of this shape, by the backend's rules, writing its scores to {@code scores}. */
    Runnable allPairsInto(long scores) {
      ForwardKernels forward = new ForwardKernels(device, launcher, ForwardKernels.RULES);
      return () -> forward.launch(q, d, ForwardKernels.Pairs.all(s[0], s[2], s[1], 0), scores);
    }

    @Override
    public void close() {
      device.release(q.data(), qBytes); // the data sits at the start of its upload
      device.release(d.data(), dBytes);
      launcher.close();
    }
  }

  private static double median(double[] v) {
    double[] c = v.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }

  private static double median(long[] v) {
    long[] c = v.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }

  private static Tokens tokens(int n, int length, int dim, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    short[] bits = new short[n * length * dim];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = DType.BFLOAT16.narrow((float) rnd.nextGaussian());
    }
    int[] start = new int[n];
    int[] len = new int[n];
    for (int i = 0; i < n; i++) {
      start[i] = i * length;
      len[i] = length;
    }
    return new Tokens(DType.BFLOAT16, dim, length, start, len, n * length, null, null, bits, null);
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
