package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.DType;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

/**
 * Messages name indices in ASCII digits whatever the JVM's default locale, as everywhere else in maxsim4j
 * (Locale.ROOT): under ar-EG (or fa-IR, th-TH-u-nu-thai, mr-IN) String.format's %d wrote Arabic-Indic digits, in
 * the encoder's refusal of an e4m3 NaN code and in the rescorer's of a stored one.
 */
class HostileDefaultLocaleTest {
  @Test
  @ResourceLock(Resources.LOCALE)
  void anE4m3NanCodeIsNamedInAsciiDigitsUnderAnArabicLocale() throws java.io.IOException {
    Locale before = Locale.getDefault();
    Locale.setDefault(Locale.forLanguageTag("ar-EG"));
    try {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> QuantizedLateInteractionField.encode(DType.FLOAT8_E4M3, new byte[] {0, 0, 0, 0, (byte) 0xff, 0},
              null, 2, 3));
      assertEquals("data[4] = 0xff, an e4m3 NaN code (token 1, dimension 1); expected finite values", e.getMessage());
      assertEquals("field q of doc 0: token 0, dimension 1 holds 0xff, an e4m3 NaN code; expected finite values",
          HostileBytesTest.storedNanCodeRefusal());
    } finally {
      Locale.setDefault(before);
    }
  }
}
