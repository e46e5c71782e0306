package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.bench.Timing;
import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.CudaBackend;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code gpu-scale --devices 0,1}: exact top-k over a bf16 corpus split across several GPUs, each shard generated on
 * its device as the part of the one corpus of the seed that it holds (so the shards together equal the corpus one
 * device would generate). Every shard is scored at once, one thread per device, and the parts merged by
 * {@link TopK#merge}, as the library's sharded backend does. First the largest corpus one device holds, on one
 * device and then split, for the speed-up and the equality of the results; then the corpus of {@code --documents}
 * split, against the floor of the devices' copy bandwidths added up.
 */
final class GpuShardedScaleBench {
  private static final int QUERY_TOKENS = 32;
  private static final long GIB = 1L << 30;

  /** One line of the table. */
  private record Row(String mode, int devices, int queries, int documents, double gigabytes, double ms,
      double floorMs, double tensorFloorMs, String exact, double speedup) {}

  private GpuShardedScaleBench() {}

  static int run(GpuScaleBench.Settings s, int[] ordinals, int singleDocuments, String json, PrintStream out)
      throws IOException {
    List<CudaBackend> devices = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(ordinals.length);
    List<Row> rows = new ArrayList<>();
    try {
      for (int ordinal : ordinals) {
        devices.add(new CudaBackend(Runtime.getRuntime().availableProcessors(), ordinal));
      }
      double[] gbps = new double[devices.size()];
      for (int i = 0; i < devices.size(); i++) {
        gbps[i] = CopyBandwidth.deviceToDevice(devices.get(i), 2 * GIB, 10);
        out.printf(Locale.ROOT, "GPU %d: %s, device copy bandwidth %.0f GB/s (2 GiB copies, read + written)%n",
            ordinals[i], devices.get(i).deviceDescription(), gbps[i]);
      }
      out.println("bf16 documents of " + s.length() + " x " + s.dim() + ", queries of " + QUERY_TOKENS
          + " tokens, top-" + s.k());
      Map<Integer, Tokens> queries = new HashMap<>();
      for (int nq : s.batches()) {
        TokenBatch q = Synthetic.store(DType.BFLOAT16, Synthetic.fastUnitValues(s.seed() * 31 + nq,
            nq * QUERY_TOKENS, s.dim()), nq, QUERY_TOKENS, s.dim());
        queries.put(nq, Internals.tokens(q));
      }
      if (singleDocuments > 0) {
        scaling(devices, pool, s, singleDocuments, queries, gbps, rows, out);
      }
      if (s.resident()) {
        try (Sharded corpus = Sharded.generate(devices, s, s.documents(), out)) {
          for (int nq : s.batches()) {
            Tokens q = queries.get(nq);
            double ms = time(() -> corpus.topK(q, s.k(), pool), s.repeat());
            rows.add(new Row("split", devices.size(), nq, s.documents(), corpus.gigabytes(), ms,
                corpus.gigabytes() * 1e3 / sum(gbps), tensorFloorMs(nq, s.documents(), s) / devices.size(), "-", 0));
            out.printf(Locale.ROOT, "  %2d queries over %d documents on %d devices: %.2f ms per batch%n", nq,
                s.documents(), devices.size(), ms);
          }
        }
      }
    } finally {
      pool.shutdown();
      for (CudaBackend d : devices) {
        d.close();
      }
    }
    printTable(rows, out);
    if (json != null) {
      writeJson(Path.of(json), s, rows);
    }
    return 0;
  }

  /** The same corpus on the first device alone and split over all: time, speed-up, and equal results. */
  private static void scaling(List<CudaBackend> devices, ExecutorService pool, GpuScaleBench.Settings s,
      int documents, Map<Integer, Tokens> queries, double[] gbps, List<Row> rows, PrintStream out) {
    Map<Integer, TopKResult> single = new HashMap<>();
    Map<Integer, Double> singleMs = new HashMap<>();
    CudaBackend first = devices.get(0);
    double gigabytes;
    try (GeneratedCorpus corpus = GeneratedCorpus.generate(first, documents, s.length(), s.dim(), s.seed())) {
      gigabytes = corpus.dataBytes() / 1e9;
      out.printf(Locale.ROOT, "one device: %d documents (%.1f GB)%n", documents, gigabytes);
      for (int nq : s.batches()) {
        Tokens q = queries.get(nq);
        single.put(nq, corpus.topK(q, s.k()));
        double ms = time(() -> corpus.topK(q, s.k()), s.repeat());
        singleMs.put(nq, ms);
        rows.add(new Row("one", 1, nq, documents, gigabytes, ms, gigabytes * 1e3 / gbps[0],
            tensorFloorMs(nq, documents, s), "-", 1));
        out.printf(Locale.ROOT, "  %2d queries: %.2f ms per batch%n", nq, ms);
      }
    }
    try (Sharded corpus = Sharded.generate(devices, s, documents, out)) {
      for (int nq : s.batches()) {
        Tokens q = queries.get(nq);
        String exact = GpuScaleBench.sameResult(single.get(nq), corpus.topK(q, s.k(), pool));
        double ms = time(() -> corpus.topK(q, s.k(), pool), s.repeat());
        rows.add(new Row("split", devices.size(), nq, documents, gigabytes, ms, gigabytes * 1e3 / sum(gbps),
            tensorFloorMs(nq, documents, s) / devices.size(), exact, singleMs.get(nq) / ms));
        out.printf(Locale.ROOT, "  %2d queries on %d devices: %.2f ms per batch, %.2fx one device, %s the one-device"
            + " run%n", nq, devices.size(), ms, singleMs.get(nq) / ms, exact.equals("yes") ? "equal to"
            : "NOT equal to (" + exact + ")");
      }
    }
  }

  /** A corpus split over the devices, shard {@code i} generated on device {@code i}. */
  private record Sharded(List<GeneratedCorpus> shards, int[] first) implements AutoCloseable {

    /** Shards of whole documents, equal where they fit each device's free memory, else in proportion to it. */
    static Sharded generate(List<CudaBackend> devices, GpuScaleBench.Settings s, int documents, PrintStream out) {
      long[] free = new long[devices.size()];
      long perDocument = 2L * s.length() * s.dim() + 12; // bf16 tokens and the row's metadata
      boolean equalFits = true;
      double total = 0;
      for (int i = 0; i < free.length; i++) {
        free[i] = devices.get(i).freeBytes();
        total += free[i];
        equalFits &= (long) Math.ceil((double) documents / free.length) * perDocument <= free[i];
      }
      int[] first = new int[devices.size() + 1];
      double share = 0;
      for (int i = 0; i < free.length; i++) {
        share += equalFits ? 1 : free[i];
        double whole = equalFits ? free.length : total;
        first[i + 1] = i == free.length - 1 ? documents : (int) Math.round(documents * (share / whole));
      }
      for (int i = 0; i < free.length; i++) {
        if (first[i + 1] == first[i]) { // a device allocates no memory of 0 bytes
          throw new IllegalArgumentException("gpu-scale: GPU " + devices.get(i).ordinal() + "'s share of the "
              + documents + " documents, in proportion to its " + free[i] + " free bytes, rounds to none; expected"
              + " a share of at least one document on every GPU named");
        }
      }
      long t0 = System.nanoTime();
      List<GeneratedCorpus> shards = new ArrayList<>();
      try {
        for (int i = 0; i < free.length; i++) {
          shards.add(GeneratedCorpus.generate(devices.get(i), first[i + 1] - first[i], s.length(), s.dim(), s.seed(),
              first[i]));
        }
      } catch (RuntimeException e) {
        shards.forEach(GeneratedCorpus::close);
        throw e;
      }
      Sharded sharded = new Sharded(shards, first);
      out.printf(Locale.ROOT, "split: %d documents (%.1f GB) generated as %d shards in %.2f s%n", documents,
          sharded.gigabytes(), shards.size(), (System.nanoTime() - t0) / 1e9);
      return sharded;
    }

    double gigabytes() {
      return shards.stream().mapToLong(GeneratedCorpus::dataBytes).sum() / 1e9;
    }

    /** Every shard's top-k at once, one thread per device, merged exactly. */
    TopKResult topK(Tokens queries, int k, ExecutorService pool) {
      List<Future<TopKResult>> parts = new ArrayList<>();
      for (int i = 0; i < shards.size(); i++) {
        int shard = i;
        parts.add(pool.submit(() -> shards.get(shard).topK(queries, k)));
      }
      List<TopK> merged = new ArrayList<>();
      IllegalStateException failure = null;
      boolean interrupted = false;
      for (Future<TopKResult> f : parts) { // every shard is waited for, so none runs on past a failure into close
        while (true) {
          try {
            TopKResult r = f.get();
            merged.add(new TopK(r.scores(), r.indices()));
            break;
          } catch (InterruptedException e) {
            interrupted = true; // the shard still runs: wait for it, then restore the flag
          } catch (ExecutionException e) {
            if (failure == null) {
              failure = new IllegalStateException("a shard's top-k failed: " + e.getCause().getMessage(), e.getCause());
            } else {
              failure.addSuppressed(e.getCause());
            }
            break;
          }
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      if (failure != null) {
        throw failure;
      }
      TopK all = TopK.merge(k, merged, java.util.Arrays.copyOf(first, shards.size()));
      return new TopKResult(all.scores(), all.indices());
    }

    @Override
    public void close() {
      shards.forEach(GeneratedCorpus::close);
    }
  }

  /** Median ms of {@code repeat} calls after two unmeasured ones. */
  private static double time(Runnable call, int repeat) {
    call.run();
    call.run();
    return Timing.timedMedianMillis(call, repeat);
  }

  private static double sum(double[] values) {
    double s = 0;
    for (double v : values) {
      s += v;
    }
    return s;
  }

  /** 2 x Nq x Lq x Nd x Ld x d FLOPs at one device's tensor-core peak. */
  private static double tensorFloorMs(int nq, int documents, GpuScaleBench.Settings s) {
    return 2.0 * nq * QUERY_TOKENS * documents * s.length() * s.dim() / GpuBench.PEAK_FLOPS * 1e3;
  }

  private static void printTable(List<Row> rows, PrintStream out) {
    out.println();
    out.printf(Locale.ROOT, "%-6s %4s %4s %10s %8s %11s %8s %10s %8s %12s %6s %8s %s%n", "mode", "GPUs", "Nq",
        "documents", "GB", "ms/batch", "GB/s", "floor ms", "% floor", "tc floor ms", "% tc", "speedup", "exact");
    for (Row r : rows) {
      out.printf(Locale.ROOT, "%-6s %4d %4d %10d %8.1f %11.2f %8.0f %10.2f %7.0f%% %12.2f %5.0f%% %8s %s%n", r.mode(),
          r.devices(), r.queries(), r.documents(), r.gigabytes(), r.ms(), r.gigabytes() / r.ms() * 1e3, r.floorMs(),
          100 * r.floorMs() / r.ms(), r.tensorFloorMs(), 100 * r.tensorFloorMs() / r.ms(),
          r.speedup() > 0 ? String.format(Locale.ROOT, "%.2fx", r.speedup()) : "-", r.exact());
    }
    out.println("floor: the bytes at the devices' copy bandwidths added up; tc floor: the FLOPs at "
        + (long) (GpuBench.PEAK_FLOPS / 1e12) + " TFLOP/s per device; speedup: one device's time over the split"
        + " run's on the same corpus; exact: the split run's ids and scores the same bits as one device's");
  }

  private static void writeJson(Path file, GpuScaleBench.Settings s, List<Row> rows) throws IOException {
    StringBuilder json = new StringBuilder("[\n");
    for (Row r : rows) {
      json.append(String.format(Locale.ROOT, "  {\"mode\": \"%s\", \"devices\": %d, \"queries\": %d, \"documents\":"
          + " %d, \"length\": %d, \"dim\": %d, \"k\": %d, \"gigabytes\": %.3f, \"ms\": %.4f, \"floor_ms\": %.4f,"
          + " \"tensor_floor_ms\": %.4f, \"speedup\": %.3f, \"exact\": \"%s\"},\n", r.mode(), r.devices(), r.queries(),
          r.documents(), s.length(), s.dim(), s.k(), r.gigabytes(), r.ms(), r.floorMs(), r.tensorFloorMs(),
          r.speedup(), r.exact()));
    }
    GpuBench.writeJsonArray(file, json);
  }
}
