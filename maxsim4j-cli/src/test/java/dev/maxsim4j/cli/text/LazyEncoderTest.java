package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** A closed lazy encoder loads no model: one loaded then would stay open for the rest of the process. */
class LazyEncoderTest {
  @Test
  void aClosedEncoderRefusesToLoad() {
    LazyEncoder encoder = new LazyEncoder();
    encoder.close();
    assertThrows(IllegalStateException.class, encoder::get);
    encoder.close(); // closing twice is allowed
  }
}
