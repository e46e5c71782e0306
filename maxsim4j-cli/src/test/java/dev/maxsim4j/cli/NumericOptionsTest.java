package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** Numeric options take decimal numbers in ASCII digits, as written, and nothing a parser merely tolerates. */
class NumericOptionsTest {
  private static Args args(String value) {
    return new Args("test", new String[] {"--n", value}, 0, Set.of("--n"), Set.of());
  }

  @Test
  void integersAreDecimalDigitsWithoutSignOrLeadingZero() {
    assertEquals(8, args("8").intValue("--n", 1, 0));
    assertEquals(0, args("0").intValue("--n", 1, 0));
    assertEquals(-3, args("-3").intValue("--n", 1, -5));
    assertEquals(12, args(" 12 ").intValue("--n", 1, 0));
    // Long.parseLong took all of these: a sign, a C reader's octal, Arabic-Indic and full-width digits
    for (String bad : new String[] {"+8", "08", "\u0668", "\uff18", "8L", "0x8", "1_000", "8.0", "1e3", "--8"}) {
      UsageException e = assertThrows(UsageException.class, () -> args(bad).intValue("--n", 1, 0), bad);
      assertEquals("test: --n = '" + bad + "'; expected an integer in decimal digits", e.getMessage());
    }
  }

  @Test
  void numbersAreDecimalWithAnOptionalExponent() {
    for (String good : new String[] {"0.5", "5", "5.", ".5", "1e-3", "1E3", "+0.25", "2.5e+2"}) {
      assertEquals(Double.parseDouble(good), args(good).positiveNumber("--n", 1), good);
    }
    // Double.parseDouble took hex floats and Java's type suffixes
    for (String bad : new String[] {"0x1p-3", "1f", "1d", "1e", ".", "\u0661.5", "nan", "inf"}) {
      UsageException e = assertThrows(UsageException.class, () -> args(bad).positiveNumber("--n", 1), bad);
      assertEquals("test: --n = '" + bad + "'; expected a number", e.getMessage());
    }
  }

  @Test
  void theStaticParsersRefuseWhatTheOptionsRefuse() {
    assertEquals(2147483647, Args.parseInt("2147483647"));
    assertThrows(NumberFormatException.class, () -> Args.parseInt("2147483648"));
    assertThrows(NumberFormatException.class, () -> Args.parseLong("\u0661"));
    assertThrows(NumberFormatException.class, () -> Args.parseLong("99999999999999999999"));
  }

  @Test
  void aCommandReportsTheLenientFormsAsOneLine() {
    assertOneLineError(CliRun.of("demo", "--synthetic", "--docs", "+8"), 2,
        "demo: --docs = '+8'; expected an integer in decimal digits");
    assertOneLineError(CliRun.of("train-example", "--lr", "0x1p-3", "--steps", "1"), 2,
        "train-example: --lr = '0x1p-3'; expected a number");
  }
}
