package dev.maxsim4j;

import java.util.ArrayList;
import java.util.List;

/**
 * On the GPU host: rule 21's expanded documents scored again and again against the float64 reference, by the
 * forced kernel where every block takes one item (2 queries of 520 tokens against 9 documents: each pair is some
 * block's first, the case that once scored NaN) and by the rules (groups of 8 short queries; one query of 700
 * tokens), int8, e4m3 and 1-bit documents. Each case takes a pool of inputs in turn for a given time, so each call's
 * data differs from the call before it and a read of what an earlier call left (expanded rows, partials, scales)
 * shows as a wrong score. Prints a {@code ROW} per case (label, case, type, scores, NaN where the reference is
 * finite, wrong beyond {@link Oracle#tolerance}) and the first few wrong scores. With another build's fatbins first
 * on the class path it checks that build (docs/design/kernel-selection.md, rule 21).
 *
 * <pre>ExpandedReplay LABEL INPUTS SECONDS_PER_CASE</pre>
 */
public final class ExpandedReplay {
  private record Case(String name, DType queryType, DType documentType, int queries, int queryLength, int documents,
      int documentLength, int dim, int masking, boolean forced) {}

  private ExpandedReplay() {}

  public static void main(String[] args) {
    String label = args[0];
    int inputs = Integer.parseInt(args[1]);
    double seconds = Double.parseDouble(args[2]);
    List<Case> cases = new ArrayList<>();
    DType[] types = {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
    for (DType t : types) {
      cases.add(new Case("2x520 x 9x129 d64 ragged", DType.BFLOAT16, t, 2, 520, 9, 129, 64, 2, true));
    }
    for (DType t : types) {
      cases.add(new Case("2x520 x 9x129 d64 masked f16", DType.FLOAT16, t, 2, 520, 9, 129, 64, 1, true));
      cases.add(new Case("24x32 x 60x140 d64 rules", DType.BFLOAT16, t, 24, 32, 60, 140, 64, 2, false));
      cases.add(new Case("1x700 x 40x300 d128 rules", DType.BFLOAT16, t, 1, 700, 40, 300, 128, 2, false));
    }
    long wrongInAll = 0;
    try (MaxSim reference = MaxSim.builder().backend("reference").threads(16).build();
        MaxSim rules = MaxSim.builder().backend("cuda").build();
        MaxSim forced = CudaParityTest.withVariant("expanded")) {
      for (Case c : cases) {
        TokenBatch[] queries = new TokenBatch[inputs];
        TokenBatch[] documents = new TokenBatch[inputs];
        float[][][] expected = new float[inputs][][];
        for (int in = 0; in < inputs; in++) {
          RandomBatches r = new RandomBatches();
          queries[in] = CudaCompressedTest.batch(r, c.queryType(), c.queries(), c.queryLength(), c.dim(), 1);
          documents[in] = CudaCompressedTest.batch(r, c.documentType(), c.documents(), c.documentLength(), c.dim(),
              c.masking());
          expected[in] = reference.scores(queries[in], documents[in]);
        }
        MaxSim m = c.forced() ? forced : rules;
        long scored = 0;
        long nan = 0;
        long wrong = 0;
        long until = System.nanoTime() + (long) (seconds * 1e9);
        for (int call = 0; System.nanoTime() < until; call++) {
          int in = call % inputs;
          float[][] e = expected[in];
          float[][] got = m.scores(queries[in], documents[in]);
          for (int i = 0; i < e.length; i++) {
            for (int j = 0; j < e[i].length; j++) {
              scored++;
              boolean gotNan = Float.isNaN(got[i][j]);
              boolean bad = gotNan != Float.isNaN(e[i][j])
                  || !gotNan && Math.abs(got[i][j] - e[i][j]) > Oracle.tolerance(queries[in], i, documents[in], j);
              if (!bad) {
                continue;
              }
              if (gotNan) {
                nan++;
              } else {
                wrong++;
              }
              if (nan + wrong <= 3) {
                System.out.printf("WRONG %s %s %s call %d [%d][%d]: got %s (bits 0x%08x), expected %s%n", label,
                    c.name(), c.documentType(), call, i, j, got[i][j], Float.floatToRawIntBits(got[i][j]), e[i][j]);
              }
            }
          }
        }
        wrongInAll += nan + wrong;
        System.out.printf("ROW %-12s %-30s %-12s %9d %6d %6d%n", label, c.name(), c.documentType(), scored, nan,
            wrong);
        System.out.flush();
      }
    }
    System.out.println("REPLAY " + label + " wrong " + wrongInAll);
  }
}
