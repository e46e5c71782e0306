package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The vector kernel with 256-bit lanes, as it runs on AVX2 machines and where the JVM keeps AVX-512 machines to 256
 * bits ({@code -XX:MaxVectorSize=32}), and with AVX2's 16 registers ({@code -XX:UseAVX=2}): the other tests run
 * with this machine's widest lanes, so the blocks of 8-lane vectors (four vectors of query tokens, two, one) run
 * only here, in a JVM of their own, against the float64 reference over query lengths that reach each block, with
 * the training forward's argmax. And with 64-bit lanes ({@code -XX:MaxVectorSize=8}), the narrowest species the
 * Vector API prefers, where no vector of V shorts exists.
 *
 * <p>With 32 registers the four-vector block scores three document tokens a step, with 16 two; the two 256-bit runs
 * draw the same batches, so their scores and argmax must agree bit for bit (on a machine without AVX-512 both runs
 * take two tokens and the comparison holds trivially). Every dtype pair gives the same bits at 256 and 128 bits as at
 * this machine's widest lanes.
 */
class NarrowLanesTest {

  @Test
  void twoAndThreeTokenBlocksMatchTheReferenceAndEachOtherBitForBit() throws Exception {
    String seed = String.valueOf(new RandomBatches().seed);
    String wide = probe("-XX:MaxVectorSize=32", 256, seed);
    String avx2 = probe("-XX:UseAVX=2", 256, seed);
    if (!wide.contains("narrower lanes") && !avx2.contains("narrower lanes")) {
      assertEquals(digest(wide), digest(avx2), "32 and 16 vector registers, seed " + seed);
    }
  }

  @Test
  void the64BitKernelMatchesTheReference() throws Exception {
    probe("-XX:MaxVectorSize=8", 64, String.valueOf(new RandomBatches().seed));
  }

  @Test
  void everyDtypePairScoresTheSameBitsAtEveryLaneWidth() throws Exception {
    // the same call on an AVX2 machine and on an AVX-512 one: the kernels sum in an order that does not depend on
    // the lanes, and the choice between them (the 1-bit documents' tables) must not depend on them either
    long seed = new RandomBatches().seed;
    String here = Bits.digest(seed);
    for (String flag : new String[] {"-XX:MaxVectorSize=32", "-XX:MaxVectorSize=16"}) {
      String output = ChildJvm.run(List.of(flag), Bits.class, 120, String.valueOf(seed));
      String line = output.lines().filter(l -> l.startsWith("bits: ")).findFirst().orElse(output);
      assertEquals("bits: " + here, line, flag + ", seed " + seed);
    }
  }

  /** Runs the probe in a JVM of its own and returns its line, failing unless every case matched the reference. */
  private static String probe(String flag, int bits, String seed) throws Exception {
    String output = ChildJvm.run(List.of(flag), Probe.class, 120, String.valueOf(bits), seed);
    String line = output.lines().filter(l -> l.startsWith("probe: ")).findFirst().orElse(output);
    // a CPU without AVX2 has no 256-bit lanes to test
    assertTrue(line.startsWith("probe: " + bits + "-bit lanes, every case matched") || line.contains("narrower lanes"),
        flag + ": " + line);
    return line;
  }

  private static String digest(String line) {
    int at = line.indexOf("digest ");
    assertTrue(at >= 0, line);
    return line.substring(at, line.indexOf(';', at));
  }

  /** The child JVM: the vector backend against the reference, every shape, dtype and masking below. */
  static final class Probe {
    public static void main(String[] args) {
      String lanes = args[0] + "-bit";
      try (MaxSim reference = MaxSim.builder().backend("reference").threads(1).build();
          MaxSim vector = MaxSim.builder().backend("cpu").threads(2).build()) {
        String info = vector.backendInfo();
        if (!info.contains(lanes)) {
          System.out.println("probe: narrower lanes here: " + info);
          return;
        }
        RandomBatches r = new RandomBatches(Long.parseLong(args[1]));
        long digest = 17;
        int cases = 0;
        // query lengths around the blocks of 4, 2 and 1 vectors of 8 lanes; awkward and common d
        for (int lq : new int[] {1, 7, 8, 17, 24, 32, 33, 40, 56, 64, 65, 97}) {
          for (int dim : new int[] {1, 3, 33, 127, 128}) {
            for (DType type : new DType[] {DType.FLOAT32, DType.BFLOAT16, DType.INT8, DType.FLOAT8_E4M3,
                DType.BINARY}) {
              int masking = cases % 3;
              // compressed queries too (scales on both sides), where the documents are compressed
              TokenBatch q = r.padded(type == DType.INT8 && cases % 2 == 0 ? DType.INT8 : DType.FLOAT32, 3, lq,
                  dim, masking);
              TokenBatch d = r.padded(type, 5, 1 + (cases * 37) % 300, dim, (masking + 1) % 3);
              String where = lanes + " lanes, Lq=" + lq + " d=" + dim + " " + type + " masking=" + masking + " (" + r
                  + ")";
              float[][] all = vector.scores(q, d);
              ParityTest.assertClose(reference.scores(q, d), all, q, d, where);
              for (float[] row : all) {
                for (float score : row) {
                  digest = 31 * digest + Float.floatToRawIntBits(score);
                }
              }
              if (!type.isQuantized()) {
                // training: the argmax blocks (two vectors of query tokens, then one), the forward's bits
                TrainingScores ts = vector.scoresForTraining(q, d);
                org.junit.jupiter.api.Assertions.assertArrayEquals(ParityTest.flatten(all), ts.scores(), where);
                ParityTest.assertArgmaxIsBest(ts, q, d, where);
                for (int p = 0; p < q.size() * d.size(); p++) {
                  for (int slot = 0; slot < q.maxLength(); slot++) {
                    digest = 31 * digest + ts.argmax(p, slot);
                  }
                }
              }
              cases++;
            }
          }
        }
        System.out.println("probe: " + lanes + " lanes, every case matched (" + cases + " cases; digest "
            + Long.toHexString(digest) + "; " + info + ")");
      }
    }
  }

  /** Every query and document dtype pair, one call each, and the bits of their scores. */
  static final class Bits {
    public static void main(String[] args) {
      System.out.println("bits: " + digest(Long.parseLong(args[0])));
    }

    static String digest(long seed) {
      RandomBatches r = new RandomBatches(seed);
      DType[] types = {DType.FLOAT32, DType.BFLOAT16, DType.FLOAT16, DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
      long digest = 17;
      try (MaxSim vector = MaxSim.builder().backend("cpu").threads(2).build()) {
        for (DType queries : types) {
          for (DType documents : types) {
            // five queries of 8 tokens at d = 128: their 1-bit tables fit at 8 lanes a vector and not at 16
            for (int[] shape : new int[][] {{5, 8, 128}, {3, 17, 33}, {2, 40, 9}}) {
              // the first shape unmasked, so that all five queries count against the tables' budget
              TokenBatch q = r.padded(queries, shape[0], shape[1], shape[2], shape[0] == 5 ? 0 : 1);
              TokenBatch d = r.padded(documents, 7, 1 + r.rnd.nextInt(200), shape[2], 2);
              for (float[] row : vector.scores(q, d)) {
                for (float score : row) {
                  digest = 31 * digest + Float.floatToRawIntBits(score);
                }
              }
            }
          }
        }
      }
      return Long.toHexString(digest);
    }
  }
}
