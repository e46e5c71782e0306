package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.GpuTest;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Top-k over documents streamed from the host in chunks, forced by a small memory cap, gives exactly what the whole
 * batch on the device gives (compressed documents that the uncapped call expands first: to a score's last bits): heap,
 * off-heap and page-locked storage, ragged masked rows, k selected on the device and merged on the host, and a corpus
 * generated on the device against its own host copy; compressed documents whose expansion (rule 21) does not fit.
 */
@GpuTest
class CudaStreamedTopKTest {
  private static final int DIM = 128;
  /** Device bytes per streamed chunk the cap leaves: a few MB, so a test batch takes several chunks. */
  private static final long CHUNK = 6L << 20;

  private static CudaBackend whole;
  private static CudaBackend streamed;

  @BeforeAll
  static void backends() {
    whole = new CudaBackend(1);
    streamed = new CudaBackend(1);
  }

  @AfterAll
  static void close() {
    whole.close();
    streamed.close();
  }

  @Test
  void bfloat16OnTheHeap() {
    SplittableRandom r = new SplittableRandom(1);
    assertStreamedEqualsWhole(queries(r, 5), TokenBatch.ofHalfs(DType.BFLOAT16, bits(r, 3000 * 64), 3000, 64, DIM), 10,
        false);
  }

  @Test
  void bfloat16OffHeapAndPageLocked() {
    SplittableRandom r = new SplittableRandom(2);
    short[] bits = bits(r, 2500 * 80);
    MemorySegment offHeap = Arena.ofAuto().allocate(2L * bits.length);
    MemorySegment.copy(bits, 0, offHeap, ValueLayout.JAVA_SHORT, 0, bits.length);
    TokenBatch q = queries(r, 3);
    assertStreamedEqualsWhole(q, TokenBatch.fromMemorySegment(offHeap, DType.BFLOAT16, 2500, 80, DIM), 100, false);
    try (PinnedHostMemory pinned = streamed.withDevice(d -> d.allocatePinned(offHeap.byteSize()))) {
      pinned.segment().copyFrom(offHeap);
      assertStreamedEqualsWhole(q, TokenBatch.fromMemorySegment(pinned.segment(), DType.BFLOAT16, 2500, 80, DIM), 100,
          true);
    }
  }

  @Test
  void raggedMaskedRowsWithKMergedOnTheHost() {
    SplittableRandom r = new SplittableRandom(3);
    int n = 3000;
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + (i % 97 == 5 ? 0 : 1 + r.nextInt(90));
    }
    boolean[] mask = new boolean[offsets[n]];
    for (int i = 0; i < mask.length; i++) {
      mask[i] = r.nextInt(6) != 0;
    }
    TokenBatch d = TokenBatch.packedHalfs(DType.BFLOAT16, bits(r, offsets[n]), offsets, DIM).withMask(mask);
    assertStreamedEqualsWhole(queries(r, 4), d, 600, false);
  }

  @Test
  void documentsWrittenOnTheDeviceEqualTheirHostCopyStreamed() {
    SplittableRandom r = new SplittableRandom(4);
    TokenBatch q = queries(r, 8);
    int n = 4000;
    int length = 60;
    try (DeviceDocuments documents = whole.withDevice(d -> d.allocateDocuments(n, length, DIM));
        PinnedHostMemory host = whole.withDevice(d -> d.allocatePinned(documents.dataBytes()))) {
      short[] values = bits(r, n * length);
      MemorySegment.copy(values, 0, host.segment(), ValueLayout.JAVA_SHORT, 0, values.length);
      whole.withDevice(d -> {
        d.copyToDevice(documents.dataAddress(), host.segment(), documents.dataBytes());
        return null;
      });
      TopKResult onDevice = whole.topK(Internals.tokens(q), documents, 50);
      TokenBatch copy = TokenBatch.fromMemorySegment(host.segment(), DType.BFLOAT16, n, length, DIM);
      assertSame(onDevice, whole.topK(Internals.tokens(q), Internals.tokens(copy), 50), "the host copy, whole");
      assertStreamedEqualsWhole(q, copy, 50, true);
    }
  }

  /**
   * Int8 documents against 24 queries, which rule 21 expands first where there is room: under a cap that holds the
   * documents but not their expansion the call keeps them whole and scores them as stored, and under a smaller one
   * streams them, as stored; both give the uncapped call's top-k (rule 21's kernel and the others may differ in a
   * score's last bits).
   */
  @Test
  void compressedDocumentsWhoseExpansionDoesNotFitAreScoredAsStored() {
    SplittableRandom r = new SplittableRandom(6);
    int n = 3000;
    int length = 64;
    byte[] data = new byte[n * length * DIM];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) r.nextInt(256);
    }
    float[] scales = new float[n * length];
    for (int i = 0; i < scales.length; i++) {
      scales[i] = (float) r.nextDouble(0.001, 0.01);
    }
    Tokens q = Internals.tokens(queries(r, 24));
    Tokens d = Internals.tokens(TokenBatch.ofBytes(DType.INT8, data, scales, n, length, DIM));
    int k = 10;
    TopKResult expected = whole.topK(q, d, k);
    long call = DeviceTopK.callBytes(q, d.rows, k, DeviceTopK.width(q.rows, d.rows)) + HalfOperands.bytes(q);
    try (CudaBackend capped = new CudaBackend(1)) {
      capped.limitMemory(capped.allocatedBytes().held() + DeviceTokens.bytesFor(d) + call + (1L << 20));
      CudaBackend.ChunkCounts before = capped.streamedChunks();
      assertCloseTopK(expected, capped.topK(q, d, k), "held whole");
      assertEquals(before, capped.streamedChunks(), "held whole");
      capped.limitMemory(capped.allocatedBytes().held() + call + 2 * CHUNK);
      assertCloseTopK(expected, capped.topK(q, d, k), "streamed");
      assertTrue(capped.streamedChunks().staged() - before.staged() > 2, "streamed");
      assertEquals(0, capped.expandedDocumentsBytes(), "no expansion buffer");
    }
  }

  /** The same scores within 1e-4 of their size, and the same documents where no neighbour's score is that close. */
  private static void assertCloseTopK(TopKResult expected, TopKResult actual, String what) {
    for (int i = 0; i < expected.scores().length; i++) {
      float[] e = expected.scores()[i];
      float[] a = actual.scores()[i];
      assertEquals(e.length, a.length, what + ", query " + i);
      for (int rank = 0; rank < e.length; rank++) {
        float tolerance = 1e-4f * Math.max(1f, Math.abs(e[rank]));
        assertEquals(e[rank], a[rank], tolerance, what + ", query " + i + ", rank " + rank);
        // the last rank's neighbour below is not returned, so a near tie there may bring another document
        boolean apart = (rank == 0 || e[rank - 1] - e[rank] > 2 * tolerance) && rank < e.length - 1
            && e[rank] - e[rank + 1] > 2 * tolerance;
        if (apart) {
          assertEquals(expected.indices()[i][rank], actual.indices()[i][rank],
              what + ", query " + i + ", rank " + rank);
        }
      }
    }
  }

  @Test
  void aCapTooSmallForOneDocumentSaysSo() {
    SplittableRandom r = new SplittableRandom(5);
    Tokens q = Internals.tokens(queries(r, 1));
    Tokens d = Internals.tokens(TokenBatch.ofHalfs(DType.BFLOAT16, bits(r, 100 * 300), 100, 300, DIM));
    try (CudaBackend tight = new CudaBackend(1)) {
      tight.limitMemory(DeviceTopK.callBytes(q, d.rows, 10, DeviceTopK.width(q.rows, d.rows)) + 1000);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> tight.topK(q, d, 10));
      assertTrue(e.getMessage().startsWith("document 0 needs "), e.getMessage());
    }
  }

  /**
   * The cap leaves {@link #CHUNK} bytes per chunk; the streamed call must take several, copied from where they
   * lie exactly when {@code pageLocked}.
   */
  private static void assertStreamedEqualsWhole(TokenBatch queries, TokenBatch documents, int k,
      boolean pageLocked) {
    Tokens q = Internals.tokens(queries);
    Tokens d = Internals.tokens(documents);
    TopKResult expected = whole.topK(q, d, k);
    int width = DeviceTopK.width(q.rows, d.rows);
    streamed.limitMemory(streamed.allocatedBytes().held() + DeviceTopK.callBytes(q, d.rows, k, width) + 2 * CHUNK);
    CudaBackend.ChunkCounts before = streamed.streamedChunks();
    TopKResult actual = streamed.topK(q, d, k);
    CudaBackend.ChunkCounts after = streamed.streamedChunks();
    long fromPageLocked = after.fromPageLocked() - before.fromPageLocked();
    long chunks = fromPageLocked + after.staged() - before.staged();
    assertTrue(chunks > 2, "streamed in " + chunks + " chunks");
    assertEquals(pageLocked ? chunks : 0, fromPageLocked, "chunks copied from page-locked memory");
    assertSame(expected, actual, chunks + " chunks");
  }

  private static void assertSame(TopKResult expected, TopKResult actual, String what) {
    for (int i = 0; i < expected.indices().length; i++) {
      assertArrayEquals(expected.indices()[i], actual.indices()[i], what + ", query " + i);
      assertArrayEquals(expected.scores()[i], actual.scores()[i], what + ", query " + i);
    }
  }

  private static TokenBatch queries(SplittableRandom r, int n) {
    return TokenBatch.ofHalfs(DType.BFLOAT16, bits(r, n * 32), n, 32, DIM);
  }

  /** bf16 bits of {@code tokens} random tokens of {@value #DIM}. */
  private static short[] bits(SplittableRandom r, int tokens) {
    short[] s = new short[tokens * DIM];
    for (int i = 0; i < s.length; i++) {
      s[i] = DType.BFLOAT16.narrow((float) r.nextGaussian());
    }
    return s;
  }
}
