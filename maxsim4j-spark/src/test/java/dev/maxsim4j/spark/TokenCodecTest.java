package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

class TokenCodecTest {
  private static final float[][] TOKENS = {{0.5f, -1.25f, 3.1f}, {1e-3f, 2f, -0.7f}};

  @Test
  void eachTypeDecodesToTheValuesTheLibraryStoresForIt() {
    TokenBatch batch = TokenBatch.ofQuery(TOKENS);
    for (DType type : DType.values()) {
      byte[] cell = TokenCodec.encode(TOKENS, type);
      assertEquals(type, TokenCodec.type(cell));
      float[] want = switch (type) {
        case FLOAT32 -> batch.toFloatArray();
        case FLOAT16, BFLOAT16 -> type.widen(type.narrow(batch.toFloatArray()));
        default -> batch.quantize(type).toFloatArray();
      };
      float[][] got = TokenCodec.decode(cell);
      assertArrayEquals(want, flat(got), type.toString());
    }
    assertEquals(TokenCodec.HEADER_BYTES + 2 * 3 * 2, TokenCodec.encode(TOKENS, DType.BFLOAT16).length);
  }

  @Test
  void anEmptyDocumentIsAHeaderOnly() {
    byte[] cell = TokenCodec.encode(new float[0][], DType.BFLOAT16);
    assertEquals(TokenCodec.HEADER_BYTES, cell.length);
    assertEquals(0, TokenCodec.decode(cell).length);
    // a header of no token may state any d, and makes no row to hold it
    ByteBuffer.wrap(cell).order(ByteOrder.LITTLE_ENDIAN).putInt(2, Integer.MAX_VALUE);
    assertEquals(Integer.MAX_VALUE, TokenCodec.read(cell, "cell").dim(), "the header's d field");
    assertEquals(0, TokenCodec.decode(cell).length);
  }

  @Test
  void aCellOfTheWrongLengthOrMarkIsRefused() {
    byte[] cell = TokenCodec.encode(TOKENS, DType.BFLOAT16);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TokenCodec.decode(Arrays.copyOf(cell, cell.length - 1)));
    assertTrue(e.getMessage().contains("expected 22 for L = 2 tokens of d = 3 in BFLOAT16"), e.getMessage());
    byte[] foreign = cell.clone();
    foreign[0] = 0;
    e = assertThrows(IllegalArgumentException.class, () -> TokenCodec.decode(foreign));
    assertTrue(e.getMessage().contains("maxsim4j token header"), e.getMessage());
    byte[] badType = cell.clone();
    badType[1] = 9;
    e = assertThrows(IllegalArgumentException.class, () -> TokenCodec.decode(badType));
    assertTrue(e.getMessage().contains("type code 9"), e.getMessage());
    // the first code past the known ones states no type, so that reading the cell names the code and its row
    badType[1] = 6;
    assertEquals(DType.FLOAT32, TokenCodec.statedType(badType));
    assertEquals(DType.FLOAT32, TokenCodec.statedType(badType[0], badType[1]));
  }

  @Test
  void encodingTypeNamesAreReadInAnyCaseAndWithoutTheBlanksAroundThem() {
    assertEquals(DType.BFLOAT16, TokenColumns.parseType(" BF16 "));
    assertEquals(DType.FLOAT8_E4M3, TokenColumns.parseType("e4m3\t"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TokenColumns.parseType("bf 16"));
    assertEquals("type 'bf 16'; expected bf16, fp16, fp32, int8, fp8 or binary", e.getMessage());
  }

  @Test
  void rowsOfDifferentTypesOrDimensionsCannotShareABatch() {
    TokenRows rows = new TokenRows("document");
    rows.add("a", TokenCodec.encode(TOKENS, DType.BFLOAT16), null);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> rows.add("b", TokenCodec.encode(TOKENS, DType.INT8), null));
    assertTrue(e.getMessage().contains("document 'b' are INT8; expected BFLOAT16"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> rows.add("c", TokenCodec.encode(new float[][] {{1f, 2f}}, DType.BFLOAT16), null));
    assertTrue(e.getMessage().contains("document 'c' have d = 2; expected d = 3"), e.getMessage());
  }

  @Test
  void aQuantizedCellWhoseScaleIsNotFiniteIsRefusedNamingItsRow() {
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      for (float scale : new float[] {Float.NaN, Float.POSITIVE_INFINITY}) {
        byte[] cell = TokenCodec.encode(TOKENS, type);
        ByteBuffer.wrap(cell).order(ByteOrder.LITTLE_ENDIAN).putFloat(TokenCodec.HEADER_BYTES + 4, scale);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TokenCodec.decode(cell));
        assertEquals("cell has scale " + scale + " at token 1; expected a finite scale", e.getMessage());
        TokenRows rows = new TokenRows("document");
        rows.add("a", TokenCodec.encode(TOKENS, type), null);
        e = assertThrows(IllegalArgumentException.class, () -> rows.add("b", cell, null));
        assertTrue(e.getMessage().startsWith("tokens of document 'b' has scale"), e.getMessage());
      }
    }
  }

  @Test
  void aRaggedRowIsRefusedNamingTheTokenAndARaggedColumnNamingTheRow() {
    TokenRows rows = new TokenRows("query");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> rows.add("q1", arrays(new float[][] {{1f, 2f}, {3f, 4f}, {5f}}), null));
    assertEquals("tokens of query 'q1': token 2 has d = 1; expected d = 2 like token 0 of the same row",
        e.getMessage());
    rows.add("q2", arrays(new float[][] {{1f, 2f}}), null);
    e = assertThrows(IllegalArgumentException.class, () -> rows.add("q3", arrays(new float[][] {{1f}}), null));
    assertEquals("tokens of query 'q3' have d = 1; expected d = 2 like the queries before it", e.getMessage());
  }

  @Test
  void aColumnToEncodeThatIsNotFloatsIsRefusedSayingWhatItHolds() {
    scala.collection.Seq<?> doubles = CollectionConverters.asScala(
        List.of(CollectionConverters.asScala(List.of(1.0, 2.0)).toSeq())).toSeq();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Cells.toFloats(doubles, "tokens"));
    assertEquals("tokens: token 0 element 0 is a java.lang.Double; expected a float (cast array<array<double>> to"
        + " array<array<float>>)", e.getMessage());
    // SQL reads 1.0 as a decimal and 1 as an int: each told how to make it a float
    scala.collection.Seq<?> decimals = CollectionConverters.asScala(
        List.of(CollectionConverters.asScala(List.of(new java.math.BigDecimal("1.0"))).toSeq())).toSeq();
    e = assertThrows(IllegalArgumentException.class, () -> Cells.toFloats(decimals, "tokens"));
    assertEquals("tokens: token 0 element 0 is a java.math.BigDecimal; expected a float (SQL reads a literal such as"
        + " 1.0 as a decimal: write 1.0F, or cast the array to array<array<float>>)", e.getMessage());
    scala.collection.Seq<?> ints = CollectionConverters.asScala(
        List.of(CollectionConverters.asScala(List.of(1)).toSeq())).toSeq();
    e = assertThrows(IllegalArgumentException.class, () -> Cells.toFloats(ints, "tokens"));
    assertEquals("tokens: token 0 element 0 is a java.lang.Integer; expected a float (cast the array to"
        + " array<array<float>>)", e.getMessage());
    IllegalArgumentException type = assertThrows(IllegalArgumentException.class, () -> TokenColumns.parseType(3));
    assertEquals("type is 3 (a java.lang.Integer); expected a string: bf16, fp16, fp32, int8, fp8 or binary",
        type.getMessage());
    // a long value (a column of tokens passed as the type) is cut at 80 characters, never inside a surrogate pair
    String tokens = "😀".repeat(100);
    type = assertThrows(IllegalArgumentException.class, () -> TokenColumns.parseType(new StringBuilder(tokens)));
    assertEquals("type is " + "😀".repeat(80) + "... (a java.lang.StringBuilder); expected a string: bf16, fp16, fp32,"
        + " int8, fp8 or binary", type.getMessage());
    scala.collection.Seq<?> flat = CollectionConverters.asScala(List.of(1f, 2f)).toSeq();
    e = assertThrows(IllegalArgumentException.class, () -> Cells.toFloats(flat, "tokens"));
    assertEquals("tokens: token 0 is a java.lang.Float; expected array<float>", e.getMessage());
  }

  @Test
  void aSqlFunctionsArgumentIsNamedByItsRoleNotAnEmptyId() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> MaxSimFunctions.score(arrays(new float[][] {{1f, 2f}}), "tokens"));
    assertEquals("tokens of the document is a java.lang.String; expected array<array<float>> or a binary token cell",
        e.getMessage());
  }

  /** {@code tokens} as a Spark Row holds an {@code array<array<float>>} value. */
  private static scala.collection.Seq<?> arrays(float[][] tokens) {
    List<scala.collection.Seq<Float>> rows = new ArrayList<>();
    for (float[] token : tokens) {
      List<Float> values = new ArrayList<>();
      for (float v : token) {
        values.add(v);
      }
      rows.add(CollectionConverters.asScala(values).toSeq());
    }
    return CollectionConverters.asScala(rows).toSeq();
  }

  private static float[] flat(float[][] rows) {
    float[] out = new float[rows.length * rows[0].length];
    for (int i = 0; i < rows.length; i++) {
      System.arraycopy(rows[i], 0, out, i * rows[i].length, rows[i].length);
    }
    return out;
  }
}
