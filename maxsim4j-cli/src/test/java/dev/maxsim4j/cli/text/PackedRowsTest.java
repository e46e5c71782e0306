package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: at -Xmx256m, indexing 114 Markdown files was refused as "texts hold more than 54613
 * tokens ..., passed at texts[191]; ... encode the texts in smaller lists", advice an index run cannot take: 256
 * passages went to each encoder call whatever the heap. A call now takes what the heap holds.
 */
class PackedRowsTest {
  @Test
  void aSliceHoldsWhatOneEncoderCallTakes() {
    int[] counts = new int[600];
    Arrays.fill(counts, 250);
    assertEquals(3, PackedRows.sliceEnd(counts, 0, 900), "three of 250 tokens fit 900, four do not");
    assertEquals(4, PackedRows.sliceEnd(new int[] {250, 250, 250, 250, 1}, 0, 1000), "counts that fill it exactly");
    assertEquals(256, PackedRows.sliceEnd(counts, 0, Long.MAX_VALUE), "at most 256 texts a call");
    assertEquals(600, PackedRows.sliceEnd(counts, 512, Long.MAX_VALUE), "the last slice ends with the texts");
    assertEquals(8, PackedRows.sliceEnd(new int[] {5, 5, 5, 5, 5, 5, 5, 2000, 5}, 7, 1000),
        "a text past a call alone: the encoder refuses it, naming it");
    assertEquals(7, PackedRows.sliceEnd(new int[] {5, 5, 5, 5, 5, 5, 5, 2000, 5}, 0, 1000));
  }
}
