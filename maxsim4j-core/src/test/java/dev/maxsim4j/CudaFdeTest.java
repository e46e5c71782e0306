package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.cuda.CudaBackend;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * FDE encodings on the GPU (maxsim_fde.cu) against the CPU encoder, bit for bit, for queries and documents over
 * {@link FdeCases}' awkward shapes; a batch in many chunks (device memory capped); a row that cannot fit refused
 * with the memory left as it was.
 */
@GpuTest
class CudaFdeTest {
  private static CudaBackend backend;
  private static MaxSim cuda;

  @BeforeAll
  static void open() {
    backend = new CudaBackend(2);
    cuda = MaxSim.over(backend);
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
    }
  }

  static List<FdeCases.Case> cases() {
    return FdeCases.cases();
  }

  @ParameterizedTest
  @MethodSource("cases")
  void equalsTheCpuEncoderBitForBit(FdeCases.Case c) {
    FdeCases.assertSameEncodings(c.encoder().encodeQueries(c.batch()), cuda.encodeQueries(c.encoder(), c.batch()),
        c + ", queries");
    FdeCases.assertSameEncodings(c.encoder().encodeDocuments(c.batch()),
        cuda.encodeDocuments(c.encoder(), c.batch()), c + ", documents");
  }

  /**
   * Quantized tokens whose scales are near fp32's largest or smallest encode from their exact values on the device
   * as on the CPU ({@code scale x q} in float64), where an fp32 product overflows or rounds away.
   */
  @Test
  void extremeScalesEncodeAsOnTheCpu() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      for (int d : new int[] {1, 3, 33}) {
        int tokens = 6 * 11;
        byte[] data = r.quantizedBytes(type, tokens, d);
        for (int power : new int[] {125, -148}) {
          float[] scales = new float[tokens];
          for (int t = 0; t < tokens; t++) {
            scales[t] = Math.scalb(1 + (float) r.rnd.nextDouble(), power);
          }
          TokenBatch b = TokenBatch.ofBytes(type, data, scales, 6, 11, d);
          for (int s = 0; s < 4; s++) {
            FixedDimensionalEncoder e = FdeCases.encoder(d, new int[] {2 + s % 2, 3, s % 2, s / 2 % 2, s / 2}, s);
            String where = type + " d=" + d + " scales 2^" + power + " " + e + ", " + r;
            FdeCases.assertSameEncodings(e.encodeQueries(b), cuda.encodeQueries(e, b), where + ", queries");
            FdeCases.assertSameEncodings(e.encodeDocuments(b), cuda.encodeDocuments(e, b), where + ", documents");
          }
        }
      }
    }
  }

  /** Device memory capped so that 300 ragged, masked rows take dozens of chunks: the same encodings. */
  @Test
  void aBatchInManyChunksEncodesAsOne() {
    RandomBatches r = new RandomBatches();
    for (int[] spec : new int[][] {{3, 4, 1, 1, 1}, {5, 20, 1, 1, 0}, {2, 3, 0, 0, 0}}) {
      FixedDimensionalEncoder e = FdeCases.encoder(33, spec, 5);
      for (TokenBatch b : List.of(r.packed(DType.FLOAT32, 300, 0, 40, 33, true),
          r.padded(DType.BFLOAT16, 300, 24, 33, 2))) {
        float[][] whole = cuda.encodeDocuments(e, b);
        long held = backend.allocatedBytes().held();
        backend.limitMemory(held + matrixBytes(e) + (256 << 10));
        try {
          FdeCases.assertSameEncodings(e.encodeDocuments(b), cuda.encodeDocuments(e, b), e + " in chunks, " + r);
          FdeCases.assertSameEncodings(e.encodeQueries(b), cuda.encodeQueries(e, b), e + " in chunks, " + r);
          FdeCases.assertSameEncodings(whole, cuda.encodeDocuments(e, b), e + " whole and in chunks, " + r);
        } finally {
          backend.limitMemory(0);
        }
        assertEquals(held, backend.allocatedBytes().held(), "a call frees its device memory");
      }
    }
  }

  @Test
  void aRowThatCannotFitIsRefusedAndFreesEverything() {
    FixedDimensionalEncoder e = FixedDimensionalEncoder.builder(128).build();
    TokenBatch b = new RandomBatches().padded(DType.FLOAT32, 4, 300, 128, 0);
    long held = backend.allocatedBytes().held();
    backend.limitMemory(held + 8L * e.parameters().weights().length + 4096);
    try {
      IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> cuda.encodeDocuments(e, b));
      assertTrue(x.getMessage().contains("maxsim4j.cuda.memoryLimit"), x.getMessage());
    } finally {
      backend.limitMemory(0);
    }
    assertEquals(held, backend.allocatedBytes().held());
    float[][] after = cuda.encodeDocuments(e, b);
    assertArrayEquals(e.encodeDocuments(b)[3], after[3], "the backend still encodes");
  }

  @Test
  void anEmptyBatchEncodesToNoRows() {
    TokenBatch none = TokenBatch.ofFloats(new float[0], 0, 3, 4);
    assertEquals(0, cuda.encodeDocuments(FixedDimensionalEncoder.builder(4).build(), none).length);
  }

  /** Bytes of the encoder's float64 matrix on the device (and its sketch table, at most as much again). */
  private static long matrixBytes(FixedDimensionalEncoder e) {
    return 2 * (8L * e.parameters().weights().length + 4L * e.dimension() + 4L * 65536 + 1024);
  }
}
