package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.cli.Args;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.internal.BackendSelector;
import dev.maxsim4j.internal.cuda.CudaDevices;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/** {@code gpu-scale}: exact top-k over a corpus generated on the GPU and over one streamed from pinned host memory. */
public final class GpuScaleCommand {
  public static final String USAGE = """
      gpu-scale [--documents N] [--length L] [--dim D] [--batches 1,8,32] [--k K] [--repeat R] [--check-documents N]
                [--stream-documents N] [--stream-cap-gb G] [--skip-resident] [--skip-stream] [--seed S] [--json FILE]
                [--devices 0,1 [--single-documents N]]
        exact top-k at scale on the GPU, bf16 documents and queries of 32 tokens. Resident: a corpus of N x L x D
        (default 1000000 x 300 x 128, 76.8 GB) generated on the device, the median wall time per query batch of
        each size (--repeat calls, top-k included), GB/s, % of the device copy bandwidth measured in the same run
        and % of the tensor-core floor; the top-k of one query over --check-documents documents against a full
        ranking of their scores. Streamed: a corpus of --stream-documents (default 530000, 40.7 GB) in pinned
        host memory, device memory capped at --stream-cap-gb (default 4), the median time per batch of an odd
        count of calls, half of --repeat and at least 3, against the pinned
        host-to-device bandwidth measured in the same run, results against the same corpus resident. One GPU
        (ordinal 0) unless --devices names several: then the corpus of --documents is split across them, each shard
        generated on its device, after --single-documents (default 1000000) on the first device alone and split,
        for the speed-up and the equality of the results (0 skips it); the floor is the devices' copy bandwidths
        added up; nothing is streamed.""";

  private GpuScaleCommand() {}

  public static int run(String[] argv, PrintStream out) throws IOException {
    Args a = new Args("maxsim4j bench", "gpu-scale", argv, 1,
        Set.of("--documents", "--length", "--dim", "--batches", "--k", "--repeat", "--check-documents",
            "--stream-documents", "--stream-cap-gb", "--seed", "--json", "--devices", "--single-documents"),
        Set.of("--skip-resident", "--skip-stream"));
    GpuScaleBench.Settings s = new GpuScaleBench.Settings(a.intValue("--documents", 1_000_000, 1),
        a.intValue("--length", 300, 1), a.intValue("--dim", 128, 1), batches(a.getOr("--batches", "1,8,32")),
        a.intValue("--k", 100, 1), a.intValue("--repeat", 5, 1, 100_000), a.intValue("--check-documents", 20_000, 0),
        a.intValue("--stream-documents", 530_000, 1), capBytes(a.positiveNumber("--stream-cap-gb", 4)),
        a.intValue("--seed", 1, 0), !a.has("--skip-resident"), !a.has("--skip-stream"));
    for (int[] sized : new int[][] {{s.documents(), s.length()}, {s.streamDocuments(), s.length()},
        {s.checkDocuments(), s.length()}}) {
      if ((long) sized[0] * sized[1] > Integer.MAX_VALUE) {
        throw new UsageException("gpu-scale: " + sized[0] + " documents of " + sized[1] + " tokens is "
            + (long) sized[0] * sized[1] + " tokens; expected at most " + Integer.MAX_VALUE);
      }
    }
    int[] devices = devices(a.getOr("--devices", "0"));
    // read with the others, before the GPU check and the corpus, so a bad value is named as such
    int singleDocuments = a.intValue("--single-documents", 1_000_000, 0);
    unread(a, devices.length > 1);
    for (int nq : s.batches()) {
      // the queries are generated as one fp32 array on the host
      // divided, not multiplied: a batch and a dimension near 2^31 each wrapped their product past a long
      if (nq > (Integer.MAX_VALUE - 8) / ((long) GpuScaleBench.QUERY_TOKENS * s.dim())) {
        throw new UsageException("gpu-scale: a batch of " + Counts.of(nq, "query", "queries") + " of "
            + GpuScaleBench.QUERY_TOKENS + " x " + s.dim() + " values is more than one Java array holds; expected at"
            + " most " + Counts.of((Integer.MAX_VALUE - 8) / ((long) GpuScaleBench.QUERY_TOKENS * s.dim()), "query",
            "queries") + " per batch");
      }
    }
    for (String option : devices.length > 1 ? List.of("--documents", "--single-documents") : List.<String>of()) {
      int documents = option.equals("--documents") ? s.documents() : singleDocuments;
      if (documents > 0 && documents < devices.length) {
        throw new UsageException("gpu-scale: " + option + " " + documents + " split across " + devices.length
            + " GPUs; expected at least one document a GPU");
      }
    }
    if (a.get("--json") != null) {
      AtomicOutput.check("--json", AtomicOutput.target("--json", a.get("--json")), List.of());
    }
    Optional<String> noGpu = BackendSelector.cudaUnavailableReason();
    if (noGpu.isPresent()) {
      throw new IllegalArgumentException("gpu-scale: no usable GPU here (" + noGpu.get() + "); expected one");
    }
    for (int d : devices) {
      if (d >= CudaDevices.visible()) {
        throw new IllegalArgumentException("gpu-scale: --devices names GPU " + d + "; expected one of the "
            + CudaDevices.visible() + " the driver reports");
      }
    }
    if (devices.length > 1) {
      return GpuShardedScaleBench.run(s, devices, singleDocuments, a.get("--json"), out);
    }
    oneDevice(devices[0]);
    return GpuScaleBench.run(s, a.get("--json"), out);
  }

  /** Refuses options the chosen run would not read, and skips that would leave nothing to run. */
  private static void unread(Args a, boolean sharded) {
    List<String> notRead = sharded ? List.of("--check-documents", "--stream-documents", "--stream-cap-gb",
        "--skip-stream") : List.of("--single-documents");
    for (String option : notRead) {
      if (a.get(option) != null || a.has(option)) {
        throw new UsageException("gpu-scale: " + option + (sharded ? " is not read with --devices naming several"
            + " GPUs (nothing is streamed there)" : " is read only with --devices naming several GPUs")
            + "; expected it left out");
      }
    }
    if (!sharded && a.has("--skip-resident") && a.has("--skip-stream")) {
      throw new UsageException("gpu-scale: --skip-resident and --skip-stream leave nothing to run; expected one at"
          + " most");
    }
  }

  /**
   * Keeps a single-device measurement on {@code ordinal}, whatever the host has: the library would otherwise
   * shard over every visible GPU. A device list set by the caller's system property stays.
   */
  static void oneDevice(int ordinal) {
    if (System.getProperty(CudaDevices.PROPERTY) == null) {
      System.setProperty(CudaDevices.PROPERTY, Integer.toString(ordinal));
    }
  }

  /** "0,1" -> {0, 1}: distinct ordinals. */
  static int[] devices(String list) {
    try {
      int[] d = Arrays.stream(list.split(",", -1)).map(String::strip).mapToInt(Args::parseInt).toArray();
      if (d.length > 0 && Arrays.stream(d).allMatch(n -> n >= 0) && Arrays.stream(d).distinct().count() == d.length) {
        return d;
      }
    } catch (NumberFormatException e) {
      // the message below says what was expected
    }
    throw new UsageException("gpu-scale: --devices = '" + list + "'; expected distinct GPU ordinals separated by"
        + " commas, e.g. 0,1");
  }

  /** The device memory cap in bytes; one that rounds to 0 bytes would read as "no cap" and stream nothing. */
  static long capBytes(double gigabytes) {
    double bytes = gigabytes * 1e9;
    if (bytes < 1 || bytes >= Long.MAX_VALUE) {
      throw new UsageException("gpu-scale: --stream-cap-gb = " + gigabytes + " is " + (bytes < 1 ? (long) bytes
          : String.format(Locale.ROOT, "%.3g", bytes)) + " bytes; expected at least 1 byte and below 2^63");
    }
    return (long) bytes;
  }

  /** "1,8,32" -> {1, 8, 32}. */
  static int[] batches(String list) {
    try {
      int[] b = Arrays.stream(list.split(",", -1)).map(String::strip).mapToInt(Args::parseInt).toArray();
      if (b.length > 0 && Arrays.stream(b).allMatch(n -> n >= 1)) {
        return b;
      }
    } catch (NumberFormatException e) {
      // the message below says what was expected
    }
    throw new UsageException("gpu-scale: --batches = '" + list + "'; expected query counts >= 1 separated by commas,"
        + " e.g. 1,8,32");
  }
}
