package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.DocumentChunks.Chunk;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The device top-k's blocks of documents and the 2048-score segments its candidates are counted in. */
class TopKBlocksTest {

  @Test
  void segmentsCountEveryBlockWithItsPartialLastSegment() {
    for (int nd : new int[] {1, 2047, 2048, 2049, 10_000, 1_000_000}) {
      for (int nq : new int[] {1, 8, 32, 3000}) {
        int width = DeviceTopK.width(nq, nd);
        long expected = 0;
        for (int j0 = 0; j0 < nd; j0 += width) {
          expected += (Math.min(width, nd - j0) + 2047) / 2048;
        }
        assertEquals(expected, DeviceTopK.segments(nd, width), nd + " documents, " + nq + " queries");
      }
    }
  }

  @Test
  void aLaunchScoresAtMostFourMillionPairs() {
    assertEquals(1_000_000, DeviceTopK.width(1, 1_000_000));
    assertEquals(131_072, DeviceTopK.width(32, 1_000_000));
    assertEquals(1, DeviceTopK.width(8_000_000, 5));
  }

  /**
   * A streamed call's device memory: the queries, a block of scores, the forward's scratch, the candidates of every
   * chunk's segments (twice) and the best k, and two buffers of its largest chunk fit what it may use, however
   * many more chunks the candidates' share of the memory leaves.
   */
  @Test
  void aStreamedCallFitsItsMemoryWithTheCandidatesOfEveryChunk() {
    Tokens queries = batch(64, 32);
    Tokens documents = batch(1_000_000, 300);
    for (int keep : new int[] {100, 512}) {
      for (long available : new long[] {832L << 20, 1L << 30, 2L << 30}) {
        int width = DeviceTopK.width(64, 1_000_000);
        List<Chunk> chunks = DeviceTopK.chunks(queries, documents, keep, width, available);
        long segments = 0;
        long buffer = 0;
        int next = 0;
        for (Chunk c : chunks) {
          assertEquals(next, c.firstRow());
          next += c.rows();
          segments += DeviceTopK.segments(c.rows(), width);
          buffer = Math.max(buffer, DocumentChunks.deviceBytes(documents, c.rows(), c.tokens()));
        }
        assertEquals(1_000_000, next);
        long used = DeviceTokens.bytesFor(queries) + 4L * 64 * width + (64L << 20) + 16L * 64 * keep * segments
            + 8L * 64 * keep + 2 * buffer;
        assertTrue(used <= available, "k = " + keep + ", " + (available >> 20) + " MiB: " + chunks.size()
            + " chunks use " + (used >> 20) + " MiB");
      }
    }
    // 640 MiB leave no chunk size whose candidates fit beside it: refused, not planned past the budget
    assertThrows(IllegalArgumentException.class,
        () -> DeviceTopK.chunks(queries, documents, 512, DeviceTopK.width(64, 1_000_000), 640L << 20));
  }

  /**
   * Documents of 384 MB each, three of which exceed what the call may use: each is a chunk of its own, as the
   * memory holds two of them beside the call's buffers, though a chunk is otherwise at most 256 MiB.
   */
  @Test
  void aDocumentLargerThanTheUsualChunkIsStreamedWhenTheMemoryHoldsTwo() {
    Tokens queries = batch(64, 32);
    Tokens documents = batch(3, 1_500_000);
    int width = DeviceTopK.width(64, 3);
    long available = 1L << 30;
    assertTrue(DeviceTokens.bytesFor(documents) > available, "streamed");
    List<Chunk> chunks = DeviceTopK.chunks(queries, documents, 10, width, available);
    assertEquals(3, chunks.size());
    for (int i = 0; i < 3; i++) {
      assertEquals(i, chunks.get(i).firstRow());
      assertEquals(1, chunks.get(i).rows());
    }
  }

  /**
   * 65,535 queries (one grid) against 1M documents score 64 documents a launch, each keeping k candidates a query:
   * 164 GB of candidates at k = 10, more than any GPU has. Groups of fewer queries keep them within the memory;
   * groups that fit are not split.
   */
  @Test
  void manyQueriesAreGroupedSoThatTheirCandidatesFitTheMemory() {
    long available = 100L << 30;
    int nd = 1_000_000;
    for (int keep : new int[] {10, 100, 512}) {
      int rows = DeviceTopK.queryGroupRows(65_535, nd, keep, available);
      long bytes = DeviceTopK.callBytes(batch(rows, 32), nd, keep, DeviceTopK.width(rows, nd));
      assertTrue(bytes <= available, "k = " + keep + ": " + rows + " queries a call take " + (bytes >> 20) + " MiB");
    }
    assertEquals(10_000, DeviceTopK.queryGroupRows(10_000, nd, 10, available), "4 GB of candidates: one call");
    assertEquals(65_535, DeviceTopK.queryGroupRows(70_000, 10_000, 10, available), "one grid at most");
    assertEquals(65_535, DeviceTopK.queryGroupRows(65_535, nd, 1024, available), "k > 512: merged on the host");
    assertEquals(2048, DeviceTopK.queryGroupRows(65_535, nd, 10, 0), "at least 2048 queries a call");
  }

  /**
   * A top-k call that holds all its documents expands compressed ones first (rule 21) where one of its launches may
   * take it (sm_90, float queries, more than two groups of short queries or more than 640 tokens) and the buffer, 2
   * bytes a stored value, is within the expansion's cap and fits beside them; none otherwise.
   */
  @Test
  void compressedDocumentsNeedTheirExpansionWhereALaunchMayTakeIt() {
    GpuCapabilities h200 = new GpuCapabilities(9, 0, 132, 232448, true, (module, entry, threads, shared) -> 1);
    GpuCapabilities a100 = new GpuCapabilities(8, 0, 108, 166912, false, (module, entry, threads, shared) -> 1);
    Tokens many = batch(32, 32);
    Tokens documents = batch(DType.INT8, 1000, 300);
    assertEquals(2L * 1000 * 300 * 128, DeviceTopK.expansionBytes(many, documents, h200));
    assertEquals(2L * 1000 * 300 * 128, DeviceTopK.expansionBytes(batch(1, 700), documents, h200), "long queries");
    assertEquals(ForwardPlan.EXPANDED_MAX_BYTES, DeviceTopK.expansionBytes(many, batch(DType.BINARY, 8192, 128), h200),
        "at the cap");
    assertEquals(0, DeviceTopK.expansionBytes(many, batch(DType.BINARY, 8193, 128), h200), "past the cap");
    assertEquals(0, DeviceTopK.expansionBytes(batch(16, 32), documents, h200), "two groups of queries at most");
    assertEquals(0, DeviceTopK.expansionBytes(batch(1, 640), documents, h200), "640 query tokens at most");
    assertEquals(0, DeviceTopK.expansionBytes(many, documents, a100), "sm_80");
    assertEquals(0, DeviceTopK.expansionBytes(batch(DType.FLOAT32, 32, 32), documents, h200), "fp32 queries");
    assertEquals(0, DeviceTopK.expansionBytes(batch(DType.INT8, 32, 32), documents, h200), "compressed queries");
    assertEquals(0, DeviceTopK.expansionBytes(many, batch(1000, 300), h200), "bf16 documents");
  }

  /** {@code n} bf16 rows of {@code length} tokens of d = 128, with no storage (planning reads none). */
  private static Tokens batch(int n, int length) {
    return batch(DType.BFLOAT16, n, length);
  }

  /** As above, of {@code type}. */
  private static Tokens batch(DType type, int n, int length) {
    int[] start = new int[n];
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) {
      start[i] = i * length;
      lengths[i] = length;
    }
    return new Tokens(type, 128, length, start, lengths, n * length, null, null, null, MemorySegment.NULL);
  }
}
