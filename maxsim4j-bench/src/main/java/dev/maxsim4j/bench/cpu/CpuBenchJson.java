package dev.maxsim4j.bench.cpu;

import java.util.List;
import java.util.Locale;

/** The {@code --json} output of {@code bench cpu}: one object per shape, null for what was not measured. */
final class CpuBenchJson {
  private CpuBenchJson() {}

  static String of(List<CpuBench.Case> cases) {
    StringBuilder b = new StringBuilder("[\n");
    for (int i = 0; i < cases.size(); i++) {
      CpuBench.Case c = cases.get(i);
      int[] s = c.shape();
      b.append(String.format(Locale.ROOT,
          "  {\"shape\": [%d, %d, %d, %d, %d], \"dtype\": \"%s\", \"query_dtype\": \"%s\", \"device\": \"cpu\", "
              + "\"backend\": \"%s\", \"threads\": %d, \"fused_ms\": %.4f, \"fp32_ms\": %s, \"naive_ms\": %s, "
              + "\"speedup\": %s, \"gflops\": %.2f, \"gbps\": %.3f, \"sgemm_pairs_ms\": %s, \"sgemm_all_ms\": %s, "
              + "\"fused_vs_sgemm\": %s}",
          s[0], s[1], s[2], s[3], s[4], name(c.docType()), name(c.queryType()), c.backend(), c.threads(),
          c.fusedMs(), number(c.fp32Ms()), number(c.naiveMs()), number(c.naiveMs() / c.fusedMs()), c.gflops(),
          c.gbps(), number(c.sgemmPairsMs()), number(c.sgemmAllMs()), number(c.sgemmBestMs() / c.fusedMs())));
      b.append(i + 1 < cases.size() ? ",\n" : "\n");
    }
    return b.append("]\n").toString();
  }

  private static String name(dev.maxsim4j.DType t) {
    return t.name().toLowerCase(Locale.ROOT);
  }

  private static String number(double v) {
    return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.4f", v);
  }
}
