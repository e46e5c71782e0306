package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bulk fp16/bf16 conversion and a single row from {@code float[][]}. */
class ConvenienceTest {

  private static void rejects(Executable call, String... fragments) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    for (String f : fragments) {
      assertTrue(e.getMessage().contains(f), "message '" + e.getMessage() + "' should contain '" + f + "'");
    }
  }

  @Test
  void bulkNarrowAndWidenMatchTheScalarConversion() {
    float[] values = {0f, -0f, 1f, 1.00390625f, 1.01171875f, 65504f, 70000f, 1e-8f, -3.5f, Float.NaN,
        Float.POSITIVE_INFINITY, Float.intBitsToFloat(0x7f800001), Float.MIN_VALUE, 3.4e38f};
    for (DType type : new DType[] {DType.FLOAT16, DType.BFLOAT16}) {
      short[] bits = type.narrow(values);
      float[] back = type.widen(bits);
      for (int i = 0; i < values.length; i++) {
        assertEquals(type.narrow(values[i]), bits[i], type + " narrow of " + values[i]);
        assertEquals(Float.floatToRawIntBits(type.widen(bits[i])), Float.floatToRawIntBits(back[i]), type + " widen");
        if (Float.isNaN(values[i])) {
          assertTrue(Float.isNaN(back[i]), type + ": NaN stays NaN");
        }
      }
    }
    // round to nearest even: 1 + 2^-8 is a tie between bf16 1 and 1 + 2^-7, and 1 + 3 * 2^-8 rounds up
    assertEquals(1f, DType.BFLOAT16.widen(DType.BFLOAT16.narrow(new float[] {1.00390625f}))[0]);
    assertEquals(1.015625f, DType.BFLOAT16.widen(DType.BFLOAT16.narrow(new float[] {1.01171875f}))[0]);
    assertEquals(0, DType.FLOAT16.narrow(new float[0]).length);
    rejects(() -> DType.BFLOAT16.narrow((float[]) null), "values is null");
    rejects(() -> DType.FLOAT16.widen((short[]) null), "bits is null");
    rejects(() -> DType.FLOAT32.narrow(new float[1]), "FLOAT32.narrow: FLOAT32 is not stored as short bits; expected"
        + " FLOAT16 or BFLOAT16");
    rejects(() -> DType.INT8.widen(new short[0]), "INT8.widen: INT8 is not stored as short bits");
    rejects(() -> DType.BINARY.narrow(1f), "BINARY.narrow: BINARY is not stored");
    rejects(() -> DType.FLOAT8_E4M3.widen((short) 0), "FLOAT8_E4M3.widen: FLOAT8_E4M3 is not stored");
  }

  @Test
  void aBatchOfHalfsFromBulkNarrowScoresLikeTheFloats() {
    float[] data = new RandomBatches().floats(2 * 3 * 8);
    TokenBatch floats = TokenBatch.ofFloats(DType.BFLOAT16.widen(DType.BFLOAT16.narrow(data)), 2, 3, 8);
    TokenBatch halfs = TokenBatch.ofHalfs(DType.BFLOAT16, DType.BFLOAT16.narrow(data), 2, 3, 8);
    try (MaxSim m = MaxSim.builder().backend("reference").threads(1).build()) {
      assertArrayEquals(m.scores(floats, floats), m.scores(halfs, halfs));
    }
  }

  @Test
  void oneQueryFromTokens() {
    float[][] tokens = {{1, 0}, {0, 1}, {0.5f, 0.5f}};
    TokenBatch q = TokenBatch.ofQuery(tokens);
    assertEquals(1, q.size());
    assertEquals(3, q.maxLength());
    assertEquals(2, q.dim());
    assertEquals(0.5f, q.get(0, 2, 1));
    tokens[0][0] = 9; // copied, not a view
    assertEquals(1f, q.get(0, 0, 0));
    TokenBatch d = TokenBatch.of(new float[][][] {{{2, 1}}, {{-1, 3}, {1, 1}}});
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
      assertArrayEquals(new float[] {2 + 1 + 1.5f, 1 + 3 + 1}, m.scores(q, d)[0]);
    }
  }

  @Test
  void oneQueryRejectsEmptyNullAndRaggedTokensByIndex() {
    rejects(() -> TokenBatch.ofQuery(null), "tokens is null");
    rejects(() -> TokenBatch.ofQuery(new float[0][]), "tokens is empty");
    rejects(() -> TokenBatch.ofQuery(new float[][] {{1, 2}, null}), "tokens[1] is null");
    rejects(() -> TokenBatch.ofQuery(new float[][] {{1, 2}, {1, 2}, {3}}), "tokens[2] has dimension 1",
        "expected 2");
    rejects(() -> TokenBatch.ofQuery(new float[][] {{}, {}}), "tokens[0] has dimension 0", "d >= 1");
  }

  @Test
  void emptyNestedInputsAreErrorsNamingTheIndex() {
    rejects(() -> TokenBatch.of(new float[0][][]), "rows is empty", "at least one row");
    rejects(() -> TokenBatch.of(null), "rows is null");
    rejects(() -> TokenBatch.of(new float[][][] {{{1, 2}}, {{}}}), "rows[1][0] has dimension 0");
    rejects(() -> TokenBatch.of(new float[][][] {{{1, 2}}, {null}}), "rows[1][0] is null");
    // a row without tokens is a valid empty document
    TokenBatch withEmptyRow = TokenBatch.of(new float[][][] {{{1, 2}}, {}});
    assertEquals(0, withEmptyRow.validTokens(1));
  }
}
