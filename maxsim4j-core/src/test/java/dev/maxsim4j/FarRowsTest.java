package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A legal batch whose tokens pass element 2^31 of its memory: 70,000 padded rows of 300 tokens of d = 128, over a
 * sparse mapped file where only the last rows hold tokens (the others have length 0, so nothing else is read).
 * Those rows score as the same tokens on the heap do: every offset into the memory is a long.
 */
class FarRowsTest {
  private static final int N = 70_000;
  private static final int L = 300;
  private static final int D = 128;
  private static final int LIVE = 3; // the last rows, the only ones with tokens

  @ParameterizedTest
  @EnumSource(value = DType.class, names = {"FLOAT32", "BFLOAT16", "INT8", "BINARY"})
  void rowsPastElement2To31ScoreAsOnTheHeap(DType type, @TempDir Path dir) throws IOException {
    long perToken = type.bytesPerToken(D);
    long bytes = (long) N * L * perToken;
    Random r = new Random(7);
    float[] live = new float[LIVE * L * D];
    for (int i = 0; i < live.length; i++) {
      live[i] = r.nextFloat() * 2 - 1;
    }
    TokenBatch heap = TokenBatch.ofFloats(live, LIVE, L, D);
    TokenBatch stored;
    ByteBuffer tail;
    if (type.isQuantized()) {
      stored = heap.quantize(type);
      tail = ByteBuffer.wrap(stored.toByteArray());
    } else if (type == DType.FLOAT32) {
      stored = heap;
      tail = ByteBuffer.allocate(4 * live.length).order(ByteOrder.LITTLE_ENDIAN);
      tail.asFloatBuffer().put(live);
    } else {
      short[] bits = type.narrow(live);
      stored = TokenBatch.ofHalfs(type, bits, LIVE, L, D);
      tail = ByteBuffer.allocate(2 * bits.length).order(ByteOrder.LITTLE_ENDIAN);
      tail.asShortBuffer().put(bits);
    }
    Path file = Files.createFile(dir.resolve("sparse.bin"));
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(bytes);
      raf.seek(bytes - tail.capacity());
      raf.write(tail.array());
    }
    float[] scales = null;
    if (type.isQuantized()) {
      scales = new float[N * L];
      Arrays.fill(scales, 1f);
      System.arraycopy(stored.scales(), 0, scales, (N - LIVE) * L, LIVE * L);
    }
    int[] lengths = new int[N];
    Arrays.fill(lengths, N - LIVE, N, L);
    float[] q = Arrays.copyOfRange(live, 5 * D, 37 * D);
    TokenBatch queries = TokenBatch.ofFloats(q, 1, 32, D);
    try (Arena arena = Arena.ofShared(); FileChannel ch = FileChannel.open(file);
        MaxSim m = MaxSim.builder().backend("cpu").threads(2).build()) {
      MemorySegment seg = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes, arena);
      TokenBatch far = (type.isQuantized() ? TokenBatch.fromMemorySegment(seg, type, scales, N, L, D)
          : TokenBatch.fromMemorySegment(seg, type, N, L, D)).withLengths(lengths);
      float[] want = m.scores(queries, stored)[0];
      float[] got = m.scores(queries, far)[0];
      assertArrayEquals(want, Arrays.copyOfRange(got, N - LIVE, N), type.toString());
      assertEquals(-1e9f, got[0]);
      TopK top = m.topK(queries, far, 2);
      int best = top.indices()[0][0];
      assertEquals(N - LIVE + indexOfMax(want), best, type.toString());
      assertEquals(got[best], top.scores()[0][0]);
      float[][] asQueries = m.scores(far, stored);
      assertEquals(m.scores(stored, stored)[2][1], asQueries[N - 1][1], type.toString());
    }
  }

  private static int indexOfMax(float[] a) {
    int best = 0;
    for (int i = 1; i < a.length; i++) {
      best = a[i] > a[best] ? i : best;
    }
    return best;
  }
}
