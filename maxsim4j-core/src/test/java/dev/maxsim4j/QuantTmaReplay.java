package dev.maxsim4j;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * On the GPU host: rule 20's bulk-copy kernel, forced with and without the fp16 copy of the queries, on one bf16
 * query against thousands of masked, ragged int8 and e4m3 documents (d = 48, 64, 128 and 256, as
 * {@link CudaCompressedTest}'s many-documents test makes them), one whole fp16 query of 32 tokens and (d <= 128) one
 * of the documents' own type against the same documents, called again and again; prints the pairs scored
 * wrong against the float64 reference and one {@code REPLAY} line with their count. With another build's fatbins
 * first on the class path it checks that build: scripts/quant-tma-perturbed.py makes ones whose producer and
 * consumers are put out of step on purpose (docs/design/kernel-selection.md, rule 20).
 *
 * <pre>QuantTmaReplay LABEL CALLS [SEEDS]</pre>
 */
public final class QuantTmaReplay {
  /** The seed of the build that once scored blocks' first pairs wrong, then two more. */
  private static final long[] SEEDS = {-2691343717431574641L, 11L, 12L};
  private static final String[] KERNELS = {"quant_tma", "quant_tma_bf16"};

  private QuantTmaReplay() {}

  public static void main(String[] args) {
    String label = args[0];
    int calls = Integer.parseInt(args[1]);
    long[] seeds = Arrays.copyOf(SEEDS, args.length > 2 ? Integer.parseInt(args[2]) : SEEDS.length);
    int wrong = 0;
    long scored = 0;
    try (MaxSim reference = MaxSim.builder().backend("reference").threads(16).build()) {
      MaxSim[] forced = new MaxSim[KERNELS.length];
      for (int i = 0; i < KERNELS.length; i++) {
        forced[i] = CudaParityTest.withVariant(KERNELS[i]);
      }
      for (long seed : seeds) {
        for (DType type : new DType[] {DType.FLOAT8_E4M3, DType.INT8}) {
          for (int dim : new int[] {128, 64, 48, 256}) {
            RandomBatches r = new RandomBatches(seed);
            TokenBatch d = CudaCompressedTest.batch(r, type, dim == 256 ? 1000 : 3000, 40, dim, 2);
            TokenBatch masked = CudaCompressedTest.batch(r, DType.BFLOAT16, 1, 32, dim, 1);
            TokenBatch whole = CudaCompressedTest.batch(r, DType.FLOAT16, 1, 32, dim, 0);
            TokenBatch own = CudaCompressedTest.batch(r, type, 1, 32, dim, 0);
            for (int k = 0; k < KERNELS.length + 2; k++) {
              // then one whole fp16 query of 32 tokens on the fp16 entries (the case that exposed the first-pair
              // defect, kernel-selection.md rule 20) and one of the documents' type, on their entries at d <= 128
              if (k == KERNELS.length + 1 && dim > 128) {
                continue;
              }
              TokenBatch q = k < KERNELS.length ? masked : k == KERNELS.length ? whole : own;
              float[] expected = reference.scores(q, d)[0];
              MaxSim kernel = forced[k < KERNELS.length ? k : 0];
              int wrongHere = 0;
              double worst = 0;
              List<Integer> pairs = new ArrayList<>();
              for (int c = 0; c < calls; c++) {
                float[] got = kernel.scores(q, d)[0];
                for (int j = 0; j < got.length; j++) {
                  double e = expected[j];
                  double error = Math.abs(got[j] - e) / Math.max(1, Math.abs(e));
                  if (Double.isNaN(e) ? !Float.isNaN(got[j]) : !(error <= 1e-4)) {
                    wrongHere++;
                    worst = Math.max(worst, Double.isNaN(error) ? Double.POSITIVE_INFINITY : error);
                    if (pairs.size() < 12 && !pairs.contains(j)) {
                      pairs.add(j);
                    }
                  }
                }
                scored += got.length;
              }
              wrong += wrongHere;
              if (wrongHere > 0) {
                String kind = k < KERNELS.length ? KERNELS[k]
                    : k == KERNELS.length ? "fp16 queries" : type + " queries";
                System.out.printf("  %s seed=%d %s d=%d %s: %d wrong of %d x %d calls, worst relative error %.3g,"
                    + " pairs %s%n", label, seed, type, dim, kind, wrongHere, expected.length, calls, worst, pairs);
              }
            }
          }
        }
      }
      for (MaxSim m : forced) {
        m.close();
      }
    }
    System.out.printf("REPLAY %-34s wrong %d of %d pair scores%n", label, wrong, scored);
  }
}
