package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A pair's CPU score is the same bits whether its query and document are scored alone or among other rows, for
 * every type pair on awkward shapes (d = 1, 3, 33, 127, 513; one token; ragged rows; rows of no token), and
 * within fp32 rounding of the float64 reference. The one documented exception: float queries against 1-bit
 * documents, where the call's queries together choose tables or expansion (MaxSim's class comment), agree
 * within a few ulps.
 */
class BatchIndependenceTest {
  private static final DType[] TYPES = {DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16, DType.INT8,
      DType.FLOAT8_E4M3, DType.BINARY};

  @Test
  void aPairScoresAloneAsInItsBatch() {
    SplittableRandom r = new SplittableRandom(7);
    try (MaxSim reference = MaxSim.builder().backend("reference").threads(2).build();
        MaxSim scalar = MaxSim.builder().backend("scalar").threads(2).build();
        MaxSim vector = MaxSim.builder().backend("vector").threads(2).build()) {
      for (int d : new int[] {1, 3, 33, 127, 513}) {
        for (int shape = 0; shape < 3; shape++) {
          // one token each; ragged queries; 40 queries, whose 1-bit tables do not fit together
          int nq = shape == 2 ? 40 : 4;
          float[][][] qr = rows(r, nq, shape == 0 ? 1 : 40, d, shape == 1);
          float[][][] dr = rows(r, 6, shape == 0 ? 1 : 20, d, true);
          for (DType qt : TYPES) {
            for (DType dt : TYPES) {
              TokenBatch q = as(qr, qt);
              TokenBatch docs = as(dr, dt);
              float[][] exact = reference.scores(q, docs);
              for (MaxSim m : new MaxSim[] {scalar, vector}) {
                String where = m.backendName() + " d=" + d + " shape " + shape + " " + qt + " x " + dt;
                float[][] all = m.scores(q, docs);
                boolean tables = !qt.isQuantized() && dt == DType.BINARY && m == vector;
                for (int i = 0; i < nq; i++) {
                  float[] alone = qr[i].length == 0 ? all[i] : m.scores(as(new float[][][] {qr[i]}, qt), docs)[0];
                  for (int j = 0; j < dr.length; j++) {
                    String pair = where + " query " + i + " document " + j;
                    float tolerance = (float) (1e-4 * Math.sqrt(d) * (1 + Math.abs(exact[i][j])));
                    assertEquals(exact[i][j], all[i][j], tolerance, pair + " against the reference");
                    if (tables) {
                      assertEquals(alone[j], all[i][j], 8 * Math.ulp(Math.abs(all[i][j]) + 1) * d, pair + " alone");
                    } else {
                      assertEquals(Float.floatToIntBits(alone[j]), Float.floatToIntBits(all[i][j]),
                          pair + " alone " + alone[j] + ", in its batch " + all[i][j]);
                    }
                  }
                }
                for (int j = 0; j < dr.length; j++) {
                  if (dr[j].length == 0) {
                    assertTrue(all[0][j] == -1e9f, where + " document " + j + " holds no token");
                    continue;
                  }
                  float[][] alone = m.scores(q, as(new float[][][] {dr[j]}, dt));
                  for (int i = 0; i < nq; i++) {
                    assertEquals(Float.floatToIntBits(alone[i][0]), Float.floatToIntBits(all[i][j]),
                        where + " document " + j + " alone, query " + i);
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  private static float[][][] rows(SplittableRandom r, int n, int maxLength, int d, boolean ragged) {
    float[][][] x = new float[n][][];
    int fixed = 1 + r.nextInt(maxLength);
    for (int i = 0; i < n; i++) {
      int length = ragged ? r.nextInt(maxLength + 1) : fixed;
      x[i] = new float[length][d];
      for (int t = 0; t < length; t++) {
        for (int k = 0; k < d; k++) {
          x[i][t][k] = (float) r.nextGaussian();
        }
      }
    }
    return x;
  }

  private static TokenBatch as(float[][][] rows, DType type) {
    TokenBatch b = TokenBatch.of(rows);
    if (type == DType.FLOAT32) {
      return b;
    }
    if (type.isQuantized()) {
      return b.quantize(type);
    }
    float[] f = b.toFloatArray();
    short[] bits = new short[f.length];
    for (int i = 0; i < f.length; i++) {
      bits[i] = type == DType.FLOAT16 ? Float.floatToFloat16(f[i]) : (short) (Float.floatToRawIntBits(f[i]) >>> 16);
    }
    return b.isPacked() ? TokenBatch.packedHalfs(type, bits, b.offsets(), b.dim())
        : TokenBatch.ofHalfs(type, bits, b.size(), b.maxLength(), b.dim());
  }
}
