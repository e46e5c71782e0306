package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cpu.CpuBackends;
import dev.maxsim4j.internal.cpu.TopKCollector;
import dev.maxsim4j.internal.cuda.DocumentChunks.Chunk;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The chunks a streamed top-k copies to the device, on the CPU: they cover every document once and in order,
 * each fits its budget and takes as many documents as fit, and the top-k of the chunks' views, with their
 * documents numbered from the chunk's first row, is the top-k of the whole batch, for every kind of storage.
 */
class DocumentChunksTest {
  private static final int DIM = 16;

  @Test
  void chunksCoverEveryDocumentInOrderAndFillTheirBudget() {
    Tokens t = Internals.tokens(TokenBatch.ofFloats(floats(new SplittableRandom(1), 100 * 7 * DIM), 100, 7, DIM));
    long budget = DocumentChunks.deviceBytes(t, 9, 9 * 7) + 1; // nine documents, not ten
    List<Chunk> chunks = DocumentChunks.plan(t, budget);
    int next = 0;
    for (Chunk c : chunks) {
      assertEquals(next, c.firstRow(), "chunks follow each other");
      assertEquals(c.firstRow() * 7, c.firstToken());
      assertEquals(c.rows() * 7, c.tokens());
      assertTrue(DocumentChunks.deviceBytes(t, c.rows(), c.tokens()) <= budget, c + " fits");
      assertEquals(DeviceTokens.bytesFor(DocumentChunks.view(t, c)), DocumentChunks.deviceBytes(t, c.rows(),
          c.tokens()), "the budget counts what the upload takes");
      next += c.rows();
    }
    assertEquals(100, next);
    assertEquals(12, chunks.size(), "11 chunks of 9 documents and one of 1");
    assertEquals(1, chunks.get(11).rows());
  }

  /** 1M x 300 x 128 bf16 (76.8 GB): every size past 2^31 bytes is a long; no storage is needed to plan. */
  @Test
  void aCorpusOfTensOfGigabytesIsPlannedInFullChunksWithoutOverflow() {
    int n = 1_000_000;
    int length = 300;
    int[] start = new int[n];
    int[] len = new int[n];
    for (int i = 0; i < n; i++) {
      start[i] = i * length;
      len[i] = length;
    }
    Tokens t = new Tokens(DType.BFLOAT16, 128, length, start, len, n * length, null, null, null, MemorySegment.NULL);
    assertEquals(76_800_000_000L + 3 * 4_000_000L, DeviceTokens.bytesFor(t));
    List<Chunk> chunks = DocumentChunks.plan(t, MemoryBudget.MAX_CHUNK_BYTES);
    // 3,494 documents of 76,800 bytes and their three int arrays fit 256 MiB; 3,495 do not
    assertEquals(3_494, chunks.get(0).rows());
    assertEquals((n + 3_493) / 3_494, chunks.size());
    Chunk last = chunks.get(chunks.size() - 1);
    assertEquals(n, last.firstRow() + last.rows());
    assertEquals(last.firstRow() * length, last.firstToken());
    assertEquals(n * length, last.firstToken() + last.tokens());
  }

  @Test
  void aDocumentLargerThanTheBudgetIsRefusedWithTheSizes() {
    Tokens t = Internals.tokens(TokenBatch.ofFloats(floats(new SplittableRandom(2), 4 * 5 * DIM), 4, 5, DIM));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DocumentChunks.plan(t, 100));
    assertTrue(e.getMessage().startsWith("document 0 needs " + DocumentChunks.deviceBytes(t, 1, 5)
        + " bytes of device memory; the memory the GPU backend may use leaves 100 per chunk"), e.getMessage());
  }

  @Test
  void paddedFloatsOnTheHeap() {
    SplittableRandom r = new SplittableRandom(3);
    assertChunksGiveTheWholeTopK(TokenBatch.ofFloats(floats(r, 57 * 6 * DIM), 57, 6, DIM), 5);
  }

  @Test
  void bfloat16OffHeap() {
    SplittableRandom r = new SplittableRandom(4);
    float[] f = floats(r, 80 * 9 * DIM);
    MemorySegment m = Arena.ofAuto().allocate(2L * f.length);
    for (int i = 0; i < f.length; i++) {
      m.setAtIndex(ValueLayout.JAVA_SHORT, i, DType.BFLOAT16.narrow(f[i]));
    }
    assertChunksGiveTheWholeTopK(TokenBatch.fromMemorySegment(m, DType.BFLOAT16, 80, 9, DIM), 7);
  }

  @Test
  void raggedPackedRowsWithAMaskAndEmptyRows() {
    SplittableRandom r = new SplittableRandom(5);
    int n = 64;
    int[] offsets = new int[n + 1];
    for (int i = 0; i < n; i++) {
      offsets[i + 1] = offsets[i] + (i % 9 == 4 ? 0 : 1 + r.nextInt(12)); // some documents have no tokens
    }
    boolean[] mask = new boolean[offsets[n]];
    for (int i = 0; i < mask.length; i++) {
      mask[i] = r.nextInt(5) != 0;
    }
    TokenBatch d = TokenBatch.packedHalfs(DType.FLOAT16, halfs(r, offsets[n] * DIM), offsets, DIM).withMask(mask);
    assertChunksGiveTheWholeTopK(d, 6);
  }

  @Test
  void quantizedTokensWithScales() {
    SplittableRandom r = new SplittableRandom(6);
    int n = 40;
    int length = 8;
    byte[] bytes = new byte[n * length * DIM];
    r.nextBytes(bytes);
    float[] scales = new float[n * length];
    for (int i = 0; i < scales.length; i++) {
      scales[i] = 0.01f + r.nextFloat() * 0.02f;
    }
    assertChunksGiveTheWholeTopK(TokenBatch.ofBytes(DType.INT8, bytes, scales, n, length, DIM), 4);
  }

  /** Top-k of the chunks, merged with each document's global index, equals the whole batch's, bit for bit. */
  private static void assertChunksGiveTheWholeTopK(TokenBatch documents, int k) {
    SplittableRandom r = new SplittableRandom(7);
    Tokens q = Internals.tokens(TokenBatch.ofFloats(floats(r, 3 * 5 * DIM), 3, 5, DIM));
    Tokens d = Internals.tokens(documents);
    Backend cpu = CpuBackends.scalar(1);
    TopKResult whole = cpu.topK(q, d, k);
    for (long budget : new long[] {DocumentChunks.deviceBytes(d, 3, 3L * d.maxRowLength) + 8,
        DocumentChunks.deviceBytes(d, 11, 11L * d.maxRowLength)}) {
      List<Chunk> chunks = DocumentChunks.plan(d, budget);
      assertTrue(chunks.size() > 2, "several chunks: " + chunks.size());
      TopKCollector merged = new TopKCollector(q.rows, k);
      for (Chunk c : chunks) {
        Tokens part = DocumentChunks.view(d, c);
        assertEquals(c.rows(), part.rows);
        TopKResult partial = cpu.topK(q, part, Math.min(k, part.rows));
        for (int i = 0; i < q.rows; i++) {
          for (int j = 0; j < partial.indices()[i].length; j++) {
            merged.offer(i, partial.scores()[i][j], c.firstRow() + partial.indices()[i][j]);
          }
        }
      }
      TopKResult chunked = merged.result();
      for (int i = 0; i < q.rows; i++) {
        assertArrayEquals(whole.indices()[i], chunked.indices()[i], "query " + i + ", budget " + budget);
        assertArrayEquals(whole.scores()[i], chunked.scores()[i], "query " + i + ", budget " + budget);
      }
    }
  }

  private static float[] floats(SplittableRandom r, int n) {
    float[] f = new float[n];
    for (int i = 0; i < n; i++) {
      f[i] = (float) r.nextGaussian();
    }
    return f;
  }

  private static short[] halfs(SplittableRandom r, int n) {
    short[] s = new short[n];
    for (int i = 0; i < n; i++) {
      s[i] = DType.FLOAT16.narrow((float) r.nextGaussian());
    }
    return s;
  }
}
