package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Scoring many rows a slice at a time gives the scores of one call over all of them. */
class ChunkedScoresTest {
  @Test
  void slicesScoreLikeOneCall() {
    Random random = new Random(7);
    int rows = ChunkedScores.ROWS * 2 + 37;
    int dim = 8;
    int[] offsets = new int[rows + 1];
    for (int i = 0; i < rows; i++) {
      offsets[i + 1] = offsets[i] + 1 + random.nextInt(5);
    }
    short[] bits = new short[offsets[rows] * dim];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = DType.BFLOAT16.narrow((float) random.nextGaussian());
    }
    float[] q = new float[3 * dim];
    for (int i = 0; i < q.length; i++) {
      q[i] = (float) random.nextGaussian();
    }
    TokenBatch query = TokenBatch.ofFloats(q, 1, 3, dim);
    PackedRows packed = new PackedRows(bits, offsets, dim);
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try (MaxSim maxSim = MaxSim.builder().backend("cpu").build()) {
      float[] whole = maxSim.scores(query, TokenBatch.packedHalfs(DType.BFLOAT16, bits, offsets, dim))[0];
      float[] chunked = ChunkedScores.of(maxSim, query, packed, "row",
          new PrintStream(err, true, StandardCharsets.UTF_8));
      assertArrayEquals(whole, chunked, 1e-5f);
    }
  }
}
