package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.bench.Timing;
import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.CudaBackend;
import dev.maxsim4j.internal.cuda.PinnedHostMemory;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * {@code gpu-scale}: exact top-k over a bf16 corpus generated on the device (resident), and over a corpus in pinned
 * host memory streamed in chunks under a device memory cap. Floors: the device's copy bandwidth (read and written,
 * measured here by CUDA events), the tensor cores' 790 TFLOP/s (GpuBench's peak), and for the streamed runs the
 * pinned host-to-device bandwidth measured here.
 */
final class GpuScaleBench {
  static final int QUERY_TOKENS = 32;
  private static final long GIB = 1L << 30;

  record Settings(int documents, int length, int dim, int[] batches, int k, int repeat, int checkDocuments,
      int streamDocuments, long streamCapBytes, long seed, boolean resident, boolean stream) {}

  /** One line of the table: a query batch over a corpus, resident or streamed. */
  private record Row(String mode, int queries, int documents, double gigabytes, double ms, double forwardMs,
      double floorMs, double tensorFloorMs, String exact) {
    double gigabytesPerSecond() {
      return gigabytes / ms * 1e3;
    }
  }

  private GpuScaleBench() {}

  static int run(Settings s, String json, PrintStream out) throws IOException {
    List<Row> rows = new ArrayList<>();
    try (MaxSim maxSim = MaxSim.builder().backend("cuda").threads(Runtime.getRuntime().availableProcessors())
        .build()) {
      CudaBackend cuda = (CudaBackend) Internals.backend(maxSim);
      out.println("device: " + cuda.deviceDescription() + "; bf16 documents of " + s.length() + " x " + s.dim()
          + ", queries of " + QUERY_TOKENS + " tokens, top-" + s.k());
      double deviceGbps = CopyBandwidth.deviceToDevice(cuda, 2 * GIB, 10);
      out.printf(Locale.ROOT, "device copy bandwidth: %.0f GB/s (2 GiB copies, read + written)%n", deviceGbps);
      Map<Integer, TokenBatch> queries = new HashMap<>();
      for (int nq : s.batches()) {
        queries.put(nq, Synthetic.store(DType.BFLOAT16, Synthetic.fastUnitValues(s.seed() * 31 + nq,
            nq * QUERY_TOKENS, s.dim()), nq, QUERY_TOKENS, s.dim()));
      }
      if (s.resident()) {
        resident(cuda, s, queries, deviceGbps, rows, out);
        if (s.checkDocuments() > 0) {
          checkAgainstFullRanking(maxSim, cuda, s, out);
        }
      }
      if (s.stream()) {
        streamed(maxSim, cuda, s, queries, deviceGbps, rows, out);
      }
    }
    printTable(rows, out);
    if (json != null) {
      writeJson(Path.of(json), s, rows);
    }
    return 0;
  }

  /** Documents of the small corpus whose calls warm the host's code before the large corpus is timed. */
  static final int WARM_DOCUMENTS = 1000;
  /** Calls of each kind that warm it: enough for the JIT to compile the call's Java path (thousands of calls). */
  static final int WARM_CALLS = 5000;

  /**
   * Runs each batch's top-k call and forward {@link #WARM_CALLS} times over a small corpus: the large corpus's calls
   * are too few (tens at 17 ms) for the JIT, and the host's part of a call, interpreted, took a quarter of a
   * millisecond where compiled it takes a fraction of that. A server that serves such calls runs them compiled.
   */
  private static void warmHostPath(CudaBackend cuda, Settings s, Map<Integer, TokenBatch> queries, PrintStream out) {
    long t0 = System.nanoTime();
    int documents = Math.min(WARM_DOCUMENTS, s.documents());
    try (GeneratedCorpus corpus = GeneratedCorpus.generate(cuda, documents, s.length(), s.dim(), s.seed() + 1)) {
      for (int nq : s.batches()) {
        Tokens q = Internals.tokens(queries.get(nq));
        for (int i = 0; i < WARM_CALLS; i++) {
          corpus.topK(q, Math.min(s.k(), documents));
        }
        corpus.forwardMillis(q, WARM_CALLS);
      }
    }
    out.printf(Locale.ROOT, "host path warmed: %d top-k calls and forwards a batch over %d documents in %.1f s%n",
        WARM_CALLS, documents, (System.nanoTime() - t0) / 1e9);
  }

  private static void resident(CudaBackend cuda, Settings s, Map<Integer, TokenBatch> queries, double deviceGbps,
      List<Row> rows, PrintStream out) {
    warmHostPath(cuda, s, queries, out);
    long t0 = System.nanoTime();
    try (GeneratedCorpus corpus = GeneratedCorpus.generate(cuda, s.documents(), s.length(), s.dim(), s.seed())) {
      out.printf(Locale.ROOT, "resident: %d documents (%.1f GB) generated on the device in %.2f s%n", s.documents(),
          corpus.dataBytes() / 1e9, (System.nanoTime() - t0) / 1e9);
      for (int nq : s.batches()) {
        Tokens q = Internals.tokens(queries.get(nq));
        Runnable call = () -> corpus.topK(q, s.k());
        call.run();
        call.run();
        double ms = Timing.timedMedianMillis(call, s.repeat());
        double forwardMs = corpus.forwardMillis(q, s.repeat());
        rows.add(new Row("resident", nq, s.documents(), corpus.dataBytes() / 1e9, ms, forwardMs,
            corpus.dataBytes() / (deviceGbps * 1e6), tensorFloorMs(nq, s.documents(), s), "-"));
        out.printf(Locale.ROOT, "  %2d queries: %.2f ms per batch, the forward alone %.2f%n", nq, ms, forwardMs);
      }
    }
  }

  /** 2 x Nq x Lq x Nd x Ld x d FLOPs at the tensor cores' peak. */
  private static double tensorFloorMs(int nq, int documents, Settings s) {
    return 2.0 * nq * QUERY_TOKENS * documents * s.length() * s.dim() / GpuBench.PEAK_FLOPS * 1e3;
  }

  /** One query's top-k over a small generated corpus against the full ranking of its scores (score, then index). */
  private static void checkAgainstFullRanking(MaxSim maxSim, CudaBackend cuda, Settings s, PrintStream out) {
    int n = s.checkDocuments();
    int k = Math.min(s.k(), n);
    TokenBatch q = Synthetic.store(DType.BFLOAT16, Synthetic.fastUnitValues(s.seed() + 7, QUERY_TOKENS, s.dim()), 1,
        QUERY_TOKENS, s.dim());
    try (GeneratedCorpus corpus = GeneratedCorpus.generate(cuda, n, s.length(), s.dim(), s.seed() + 1);
        PinnedHostMemory host = cuda.withDevice(d -> d.allocatePinned(corpus.dataBytes()))) {
      TopKResult top = corpus.topK(Internals.tokens(q), k);
      corpus.copyToHost(host.segment());
      float[] scores = maxSim.scores(q, TokenBatch.fromMemorySegment(host.segment(), DType.BFLOAT16, n, s.length(),
          s.dim()))[0];
      Integer[] order = IntStream.range(0, n).boxed().toArray(Integer[]::new);
      Arrays.sort(order, Comparator.<Integer>comparingDouble(i -> -scores[i]).thenComparingInt(i -> i));
      int differ = 0;
      double maxDiff = 0;
      for (int r = 0; r < k; r++) {
        int expected = order[r];
        if (top.indices()[0][r] != expected
            || Float.floatToIntBits(top.scores()[0][r]) != Float.floatToIntBits(scores[expected])) {
          differ++;
        }
        maxDiff = Math.max(maxDiff, Math.abs(top.scores()[0][r] - scores[expected]));
      }
      out.printf(Locale.ROOT, "check: top-%d of one query over %d documents %s the full ranking of its scores"
          + " (%d of %d ranks differ, largest score difference %.3g)%n", k, n, differ == 0 ? "equals" : "DIFFERS FROM",
          differ, k, maxDiff);
    }
  }

  private static void streamed(MaxSim maxSim, CudaBackend cuda, Settings s, Map<Integer, TokenBatch> queries,
      double deviceGbps, List<Row> rows, PrintStream out) {
    Map<Integer, TopKResult> reference = new HashMap<>();
    long t0 = System.nanoTime();
    PinnedHostMemory host = null;
    try {
      long bytes;
      try (GeneratedCorpus corpus = GeneratedCorpus.generate(cuda, s.streamDocuments(), s.length(), s.dim(),
          s.seed() + 2)) {
        bytes = corpus.dataBytes();
        out.printf(Locale.ROOT, "streamed: %d documents (%.1f GB) generated on the device in %.2f s%n",
            s.streamDocuments(), bytes / 1e9, (System.nanoTime() - t0) / 1e9);
        for (int nq : s.batches()) {
          Tokens q = Internals.tokens(queries.get(nq));
          reference.put(nq, corpus.topK(q, s.k()));
          Runnable call = () -> corpus.topK(q, s.k());
          call.run();
          double ms = Timing.timedMedianMillis(call, s.repeat());
          rows.add(new Row("resident", nq, s.streamDocuments(), bytes / 1e9, ms, Double.NaN,
              bytes / (deviceGbps * 1e6), tensorFloorMs(nq, s.streamDocuments(), s), "-"));
        }
        t0 = System.nanoTime();
        host = cuda.withDevice(d -> d.allocatePinned(bytes));
        double allocS = (System.nanoTime() - t0) / 1e9;
        t0 = System.nanoTime();
        corpus.copyToHost(host.segment());
        out.printf(Locale.ROOT, "  pinned host memory allocated in %.2f s, filled from the device at %.1f GB/s%n",
            allocS, bytes / ((System.nanoTime() - t0) / 1e9) / 1e9);
      }
      double hostGbps = CopyBandwidth.hostToDevice(cuda, host, GIB, 16);
      out.printf(Locale.ROOT, "  host-to-device bandwidth from pinned memory: %.1f GB/s (16 copies of 1 GiB)%n",
          hostGbps);
      TokenBatch documents = TokenBatch.fromMemorySegment(host.segment(), DType.BFLOAT16, s.streamDocuments(),
          s.length(), s.dim());
      cuda.limitMemory(s.streamCapBytes());
      try {
        for (int nq : s.batches()) {
          TokenBatch q = queries.get(nq);
          CudaBackend.ChunkCounts before = cuda.streamedChunks();
          String exact = sameResult(reference.get(nq), maxSim.topK(q, documents, s.k()));
          CudaBackend.ChunkCounts after = cuda.streamedChunks();
          // an odd count of a few calls, each reading the whole corpus over the host's link
          int calls = Math.max(3, s.repeat() / 2) | 1;
          double ms = Timing.timedMedianMillis(() -> maxSim.topK(q, documents, s.k()), calls);
          rows.add(new Row(String.format(Locale.ROOT, "stream %.0fG", s.streamCapBytes() / 1e9), nq,
              s.streamDocuments(), bytes / 1e9, ms, Double.NaN, bytes / (hostGbps * 1e6),
              tensorFloorMs(nq, s.streamDocuments(), s), exact));
          out.printf(Locale.ROOT, "  %2d queries streamed: %.1f ms per batch in %d chunks (%d copied from page-locked"
              + " memory where they lie, %d through staging), %s the resident run%n", nq, ms,
              after.fromPageLocked() + after.staged() - before.fromPageLocked() - before.staged(),
              after.fromPageLocked() - before.fromPageLocked(), after.staged() - before.staged(),
              exact.equals("yes") ? "equal to" : "NOT equal to (" + exact + ")");
        }
      } finally {
        cuda.limitMemory(0);
      }
    } finally {
      if (host != null) {
        host.close();
      }
    }
  }

  /** As below, for a result of the backend's own type. */
  static String sameResult(TopKResult expected, TopKResult actual) {
    return sameResult(expected, new dev.maxsim4j.TopK(actual.scores(), actual.indices()));
  }

  /** "yes" when every query's ids and scores are the same bits, else how many ranks differ. */
  static String sameResult(TopKResult expected, dev.maxsim4j.TopK actual) {
    int differ = 0;
    int total = 0;
    for (int i = 0; i < expected.indices().length; i++) {
      for (int r = 0; r < expected.indices()[i].length; r++) {
        total++;
        if (expected.indices()[i][r] != actual.indices()[i][r]
            || Float.floatToIntBits(expected.scores()[i][r]) != Float.floatToIntBits(actual.scores()[i][r])) {
          differ++;
        }
      }
    }
    return differ == 0 ? "yes" : differ + " of " + total + " ranks differ";
  }

  private static void printTable(List<Row> rows, PrintStream out) {
    out.println();
    out.printf(Locale.ROOT, "%-10s %4s %10s %8s %11s %8s %11s %10s %8s %12s %6s %s%n", "mode", "Nq", "documents",
        "GB", "ms/batch", "GB/s", "forward ms", "floor ms", "% floor", "tc floor ms", "% tc", "exact");
    for (Row r : rows) {
      String forward = Double.isNaN(r.forwardMs()) ? "-" : String.format(Locale.ROOT, "%.2f", r.forwardMs());
      out.printf(Locale.ROOT, "%-10s %4d %10d %8.1f %11.2f %8.0f %11s %10.2f %7.0f%% %12.2f %5.0f%% %s%n", r.mode(),
          r.queries(), r.documents(), r.gigabytes(), r.ms(), r.gigabytesPerSecond(), forward, r.floorMs(),
          100 * r.floorMs() / r.ms(), r.tensorFloorMs(), 100 * r.tensorFloorMs() / r.ms(), r.exact());
    }
    out.println("floor: resident rows the bytes at the device copy bandwidth, stream rows at the pinned"
        + " host-to-device bandwidth; tc floor: the FLOPs at " + (long) (GpuBench.PEAK_FLOPS / 1e12) + " TFLOP/s;"
        + " forward ms: the forward kernel alone over every document in one launch (device time), where the call"
        + " adds the top-k and its own work");
  }

  private static void writeJson(Path file, Settings s, List<Row> rows) throws IOException {
    StringBuilder json = new StringBuilder("[\n");
    for (Row r : rows) {
      json.append(String.format(Locale.ROOT, "  {\"mode\": \"%s\", \"queries\": %d, \"documents\": %d, \"length\": %d,"
          + " \"dim\": %d, \"k\": %d, \"gigabytes\": %.3f, \"ms\": %.4f, \"forward_ms\": %s,"
          + " \"gigabytes_per_second\": %.1f,"
          + " \"floor_ms\": %.4f, \"tensor_floor_ms\": %.4f, \"exact\": \"%s\"},\n", r.mode(), r.queries(),
          r.documents(), s.length(), s.dim(), s.k(), r.gigabytes(), r.ms(),
          Double.isNaN(r.forwardMs()) ? "null" : String.format(Locale.ROOT, "%.4f", r.forwardMs()),
          r.gigabytesPerSecond(), r.floorMs(),
          r.tensorFloorMs(), r.exact()));
    }
    GpuBench.writeJsonArray(file, json);
  }
}
