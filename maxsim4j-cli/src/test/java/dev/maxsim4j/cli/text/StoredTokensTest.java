package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.SafeTensors;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tokens file read back holds the tokens written; a large one is mapped rather than copied onto the heap (files
 * under 1 MiB are read, as every small input is). CPU.
 */
class StoredTokensTest {
  @TempDir
  Path dir;

  @Test
  void everyStoreReadsBackWhatItWroteFromTheMappedFile() throws Exception {
    Random r = new Random(7);
    int dim = 64;
    int[] offsets = {0, 3, 3, 10, 30_000};
    float[] values = new float[offsets[4] * dim];
    for (int i = 0; i < values.length; i++) {
      values[i] = (float) r.nextGaussian();
    }
    TokenBatch floats = TokenBatch.packedFloats(values, offsets, dim);
    for (Store store : Store.values()) {
      StoredTokens written = StoredTokens.of(store, floats);
      Path file = dir.resolve(store + ".safetensors");
      SafeTensors.write(file, written.tensors());
      StoredTokens read = StoredTokens.read(file, store, offsets[4], dim);
      assertEquals(Files.size(file) < (1 << 20), read.onHeap(), store + ": mapped unless small");
      assertEquals(written.checksum(), read.checksum(), store + " checksum");
      assertEquals(offsets[4], read.tokens());
      int[] rows = {0, 7, 8}; // tokens 3 .. 11 as two rows
      assertArrayEquals(written.batch(3, 11, rows).toFloatArray(), read.batch(3, 11, rows).toFloatArray(), store + "");
      StoredTokens copy = StoredTokens.allocate(store, 5, dim);
      read.copyTo(6, copy, 0, 5);
      assertArrayEquals(written.batch(6, 11, new int[] {0, 5}).toFloatArray(),
          copy.batch(0, 5, new int[] {0, 5}).toFloatArray(), store + " copied");
    }
  }
}
