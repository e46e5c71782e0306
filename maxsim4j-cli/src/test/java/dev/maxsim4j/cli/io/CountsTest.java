package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A count of one takes the singular, every other count (zero included) the plural. */
class CountsTest {
  @Test
  void oneIsSingularAndEveryOtherCountPlural() {
    assertEquals("1 byte", Counts.of(1, "byte"));
    assertEquals("0 bytes", Counts.of(0, "byte"));
    assertEquals("2 bytes", Counts.of(2, "byte"));
    assertEquals("-1 bytes", Counts.of(-1, "byte"));
    assertEquals(Long.MAX_VALUE + " bytes", Counts.of(Long.MAX_VALUE, "byte"));
    assertEquals("1 more warning", Counts.of(1, "more warning"));
  }

  @Test
  void anIrregularPluralIsGivenExplicitly() {
    assertEquals("1 query", Counts.of(1, "query", "queries"));
    assertEquals("3 queries", Counts.of(3, "query", "queries"));
    assertEquals("0 axes", Counts.of(0, "axis", "axes"));
  }
}
