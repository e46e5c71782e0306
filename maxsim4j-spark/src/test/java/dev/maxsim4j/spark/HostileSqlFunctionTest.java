package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The SQL function {@code maxsim} on arguments of two d, ragged tokens, nulls and empty arrays: an error names
 * the argument, what it held and what was expected, however Spark wraps it; a null argument scores null.
 */
class HostileSqlFunctionTest extends WithLocalSpark {
  private static final String Q4 = "array(array(1F, 0F, 0F, 0F), array(0F, 1F, 0F, 0F))";
  private static final String D3 = "array(array(1F, 2F, 3F))";
  private static final String D4 = "array(array(2F, 0F, 0F, 0F), array(0F, 3F, 0F, 0F))";

  @BeforeAll
  static void register() {
    MaxSimFunctions.register(spark);
  }

  private static Row one(String select) {
    return spark.sql("SELECT " + select).collectAsList().get(0);
  }

  /** The IllegalArgumentException somewhere in the chain of causes Spark wraps it in. */
  private static String failure(String select) {
    Throwable e = assertThrows(Exception.class, () -> one(select), select);
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof IllegalArgumentException) {
        return t.getMessage();
      }
    }
    throw new AssertionError("no IllegalArgumentException in the causes of " + e, e);
  }

  private static void assertMessage(String expected, String select) {
    String message = failure(select);
    assertTrue(message.contains(expected), message);
  }

  @Test
  void aDocumentOfAnotherDThanTheQueryNamesTheDocumentAndBothD() {
    assertMessage("tokens of the document have d = 3; expected d = 4 like the query",
        "maxsim(" + Q4 + ", " + D3 + ")");
    assertMessage("tokens of the document have d = 4; expected d = 3 like the query",
        "maxsim(" + D3 + ", " + Q4 + ")");
  }

  @Test
  void binaryCellsOfAnotherDNameTheDocumentAndBothD() {
    assertMessage("tokens of the document have d = 3; expected d = 4 like the query",
        "maxsim(maxsim_encode(" + Q4 + ", 'bf16'), maxsim_encode(" + D3 + ", 'int8'))");
    assertMessage("tokens of the document have d = 3; expected d = 4 like the query",
        "maxsim(" + Q4 + ", maxsim_encode(" + D3 + ", 'fp32'))");
  }

  @Test
  void raggedTokensNameTheArgumentTheTokenAndBothD() {
    assertMessage("tokens of the query: token 1 has d = 2; expected d = 3 like token 0 of the same row",
        "maxsim(array(array(1F, 2F, 3F), array(1F, 2F)), " + D3 + ")");
    assertMessage("tokens of the document: token 1 has d = 4; expected d = 3 like token 0 of the same row",
        "maxsim(" + D3 + ", array(array(1F, 2F, 3F), array(1F, 2F, 3F, 4F)))");
  }

  @Test
  void anEmptyTokenANullTokenOrANullElementIsNamed() {
    assertMessage("tokens of the document: token 0 has no element; expected d >= 1",
        "maxsim(" + D3 + ", array(CAST(array() AS array<float>)))");
    assertMessage("tokens of the query: token 1 is null; expected array<float>",
        "maxsim(array(array(1F, 2F, 3F), NULL), " + D3 + ")");
    assertMessage("tokens of the document: token 0 element 1 is null; expected a float",
        "maxsim(" + D3 + ", array(array(1F, NULL, 3F)))");
  }

  @Test
  void doublesAreNamedWithTheCastThatFixesThem() {
    assertMessage("cast array<array<double>> to array<array<float>>",
        "maxsim(" + D3 + ", array(array(1D, 2D, 3D)))");
    assertMessage("element 0 is a java.math.BigDecimal; expected a float (SQL reads a literal such as 1.0 as a decimal",
        "maxsim(" + D3 + ", array(array(1.0, 2.0, 3.0)))");
  }

  /** A Java UDF's arguments are not coerced: a type that is not a string is named, not a ClassCastException. */
  @Test
  void anEncodingTypeThatIsNotAStringIsNamed() {
    assertMessage("type is 3 (a java.lang.Integer); expected a string", "maxsim_encode(" + D3 + ", 3)");
  }

  @Test
  void aNullArgumentScoresNull() {
    Row row = one("maxsim(NULL, " + D3 + "), maxsim(" + D3 + ", NULL), maxsim(CAST(NULL AS array<array<float>>), "
        + D3 + ")");
    assertNull(row.get(0));
    assertNull(row.get(1));
    assertNull(row.get(2));
  }

  @Test
  void emptyArgumentsScoreAsTheContractSaysWhateverTheOtherSidesD() {
    String empty = "CAST(array() AS array<array<float>>)";
    Row row = one("maxsim(" + empty + ", " + D3 + "), maxsim(" + D3 + ", " + empty + "), maxsim(" + empty + ", "
        + empty + "), maxsim(maxsim_encode(" + empty + ", 'bf16'), " + D4 + ")");
    assertEquals(0f, row.getFloat(0));
    assertEquals(-1e9f, row.getFloat(1));
    assertEquals(-1e9f, row.getFloat(2));
    assertEquals(0f, row.getFloat(3));
  }

  @Test
  void equalDScoresStillScore() {
    assertEquals(5f, one("maxsim(" + Q4 + ", " + D4 + ")").getFloat(0));
  }
}
