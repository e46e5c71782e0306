package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.cli.Progress;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: text whose tokens pass what one index or rerank holds (a file of punctuation takes a
 * token a character, where the count before encoding takes one a word) was encoded whole, for over an hour at that
 * size, and then refused as "integer overflow". The count is now checked after each slice that is encoded.
 */
class PackedRowsTest {
  @Test
  void tooManyTokensAreRefusedAsSoonAsTheSliceThatPassesIsEncoded() {
    List<String> texts = Collections.nCopies(600, "otters hold hands");
    List<Long> told = new ArrayList<>();
    PrintStream err = new PrintStream(new ByteArrayOutputStream());
    try (TextModel model = TextModel.load()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PackedRows.encode(model,
          texts, new Progress(err, "encoding"), Store.INT8, n -> {
            told.add(n);
            if (n > 1000) {
              throw new IllegalArgumentException("past 1000 tokens");
            }
          }));
      assertEquals("past 1000 tokens", e.getMessage());
      assertEquals(1, told.size(), "the first slice of 256 texts passes 1000 tokens: " + told);
    }
  }
}
