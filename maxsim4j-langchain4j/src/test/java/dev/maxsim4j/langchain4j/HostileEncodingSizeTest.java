package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Texts whose token vectors cannot be held are refused before the model runs: the per-window states and the packed
 * batch are both live when the batch is filled, so past the heap the encoder ran the model for minutes and then
 * ended in an OutOfMemoryError.
 */
class HostileEncodingSizeTest extends WithModel {
  /** Thrown from the progress callback: the model ran a batch before the size was refused. */
  private static final class ModelRan extends RuntimeException {}

  @Test
  void textsWhoseVectorsOutgrowTheHeapAreRefusedBeforeTheModelRuns() {
    // two fp32 copies of 384 floats a token must exceed the heap: 250 word pieces a text
    long tokens = Runtime.getRuntime().maxMemory() / (2L * Float.BYTES * MiniLmTokenEncoder.DIM) + 1;
    List<String> texts = Collections.nCopies((int) (tokens / 250 + 1), "tide ".repeat(250));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> encoder.encode(texts, (done, all) -> {
          throw new ModelRan();
        }));
    assertTrue(e.getMessage().contains("texts hold"), e.getMessage());
  }
}
