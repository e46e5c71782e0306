package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.HeapLimit;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sizes past one Java array are an IllegalArgumentException naming the sizes, the limit and what to do
 * instead, never an ArithmeticException or NegativeArraySizeException. The shapes overflow with tiny data
 * (rows of no token) or over a sparse memory-mapped file that is never touched.
 */
class LargeSizeTest {
  private static final String LIMIT = String.valueOf(Integer.MAX_VALUE - 8);

  private static void rejects(Executable call, String... fragments) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    for (String f : fragments) {
      assertTrue(e.getMessage().contains(f), "message '" + e.getMessage() + "' should contain '" + f + "'");
    }
  }

  private static TokenBatch emptyRows(int n) {
    return TokenBatch.ofFloats(new float[0], n, 0, 1);
  }

  @Test
  void allPairsScoresPastOneArray() {
    TokenBatch q = emptyRows(50_000);
    TokenBatch d = emptyRows(50_000);
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
      rejects(() -> m.scores(q, d), "queries x documents = 50000 x 50000", "2500000000", LIMIT, "topK");
      rejects(() -> m.scoresAsync(q, d), "50000 x 50000", "topK");
      rejects(() -> m.scoresForTraining(q, d), "50000 x 50000");
      rejects(() -> m.lossAllPairs(q, d, Loss.contrastive(1f)), "50000 x 50000");
    }
  }

  /** A padded shape past one array of token slots names the product, not each count, as what is too large. */
  @Test
  void paddedTokenSlotsPastOneArray() {
    rejects(() -> TokenBatch.ofFloats(new float[0], 65536, 65536, 2), "65536 rows x 65536 tokens = 4294967296 token"
        + " slots", LIMIT, "fewer rows");
  }

  /**
   * A hostile tester's finding: topK of 65536 queries x 65536 documents with k = 65536 ran out of memory; its
   * result is Nq x min(k, Nd), refused by name before any work, while a k past Nd is clamped to Nd.
   */
  @Test
  void topKResultsPastOneArray() {
    TokenBatch q = emptyRows(65536);
    TokenBatch d = emptyRows(65536);
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
      rejects(() -> m.topK(q, d, 65536), "topK", "65536 x min(65536, 65536)", "4294967296", LIMIT, "smaller k");
      rejects(() -> m.topK(q, d, Integer.MAX_VALUE), "65536 x 65536", LIMIT);
      TopK clamped = m.topK(emptyRows(3), emptyRows(2), Integer.MAX_VALUE);
      assertEquals(2, clamped.scores()[0].length, "k past Nd keeps Nd entries");
    }
  }

  @Test
  void trainingArgmaxPastOneArray() {
    TokenBatch q = TokenBatch.ofFloats(new float[1000 * 1000], 1000, 1000, 1);
    TokenBatch d = emptyRows(3000);
    TokenBatch candidates = emptyRows(3_000_000);
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
      rejects(() -> m.scoresForTraining(q, d), "argmax", "3000000 x 1000", LIMIT, "smaller batches");
      rejects(() -> m.lossAllPairs(q, d, Loss.contrastive(1f)), "argmax", "3000000 x 1000");
      rejects(() -> m.candidatesForTraining(q, candidates, 3000), "argmax", "3000000 x 1000");
      rejects(() -> m.lossCandidates(q, candidates, 3000, Loss.contrastive(1f)), "argmax");
    }
  }

  @Test
  void projectionOutputsPastOneArray() {
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
      rejects(() -> m.project(new float[65536], 65536, 1, new float[65536], 65536), "rows x out = 65536 x 65536",
          LIMIT);
      rejects(() -> m.projectionGradient(new float[0], 0, 65536, new float[0], 65536), "in x out = 65536 x 65536");
    }
  }

  @Test
  void lossOverMoreScoresThanOneArray() {
    float[] row = new float[1 << 20];
    float[][] scores = new float[2049][];
    java.util.Arrays.fill(scores, row); // one 4 MB row, 2049 times: 2^31 + 2^20 scores
    rejects(() -> Loss.contrastive(1f).evaluate(scores), "rows x columns = 2049 x 1048576", LIMIT);
  }

  /** 2^26 tokens of d = 33 in bf16: 4.4 GB of sparse file, mapped and never read. */
  @Test
  void memoryBatchPastOneArray(@TempDir Path dir) throws IOException {
    int length = 1 << 26;
    int dim = 33;
    long bytes = 2L * length * dim;
    Path file = Files.createFile(dir.resolve("sparse.bin"));
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(bytes);
    }
    try (Arena arena = Arena.ofShared(); FileChannel ch = FileChannel.open(file)) {
      MemorySegment seg = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes, arena);
      TokenBatch big = TokenBatch.fromMemorySegment(seg, DType.BFLOAT16, 1, length, dim);
      TokenBatch q = TokenBatch.ofFloats(new float[dim], 1, 1, dim);
      rejects(big::toFloatArray, "toFloatArray", "67108864 x 33", LIMIT);
      rejects(big::l2Normalized, "l2Normalized", "67108864 x 33");
      try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
        String[] row = {"longest row of documents", "67108864 x 33", "split"};
        rejects(() -> m.scores(q, big), row);
        rejects(() -> m.topK(q, big, 10), row);
        rejects(() -> m.pairwise(q, big), row);
        rejects(() -> m.candidates(q, big, 1), row);
        rejects(() -> m.scores(big, q), "longest row of queries");
      }
    }
  }

  /**
   * A hostile tester's finding: rows of no token just below the array limit passed every size check, then their
   * per-row bookkeeping (three ints a row, 24 GB) ran out of memory; each padded factory now refuses such a row
   * count by name when the heap could not hold that bookkeeping at all.
   */
  @Test
  void rowsWhoseBookkeepingPassesTheHeapAreRefused() {
    int n = Integer.MAX_VALUE - 8;
    rejects(() -> BatchChecks.checkRowBookkeeping("offsets of length " + (n + 1L), n, 4L << 30), "2147483639 rows",
        "25769803668 bytes", "4294967296 bytes");
    BatchChecks.checkRowBookkeeping("shape", 1000, 12_000);
    org.junit.jupiter.api.Assumptions.assumeTrue(Runtime.getRuntime().maxMemory() < 12L * n,
        "a heap that holds 24 GB of bookkeeping would allocate it");
    String[] named = {"shape [2147483639, 0, ", "2147483639 rows", "bookkeeping", "heap"};
    rejects(() -> TokenBatch.ofFloats(new float[0], n, 0, 1), named);
    rejects(() -> TokenBatch.ofHalfs(DType.BFLOAT16, new short[0], n, 0, 8), named);
    rejects(() -> TokenBatch.ofBytes(DType.BINARY, new byte[0], null, n, 0, 8), named);
    rejects(() -> TokenBatch.fromMemorySegment(MemorySegment.ofArray(new float[0]), DType.FLOAT32, n, 0, 4), named);
    rejects(() -> TokenBatch.fromMemorySegment(MemorySegment.ofArray(new byte[0]), DType.INT8, null, n, 0, 4), named);
  }

  /**
   * A hostile tester's finding: a training forward over a long masked query and many one-token documents (half a
   * megabyte of input) saved an argmax of 2.1e9 ints and ran out of heap. Results that fit one array but no heap
   * of this JVM are refused up front, naming the sizes and the heap.
   */
  @Test
  void resultsPastTheWholeHeapAreRefusedBeforeWork() {
    long heap = Runtime.getRuntime().maxMemory();
    org.junit.jupiter.api.Assumptions.assumeTrue(heap < 6L << 30, "a heap of 6 GB or more holds these results");
    int length = 100_000;
    boolean[] mask = new boolean[length];
    mask[0] = true;
    TokenBatch longMaskedQuery = TokenBatch.ofFloats(new float[length], 1, length, 1).withMask(mask);
    TokenBatch oneTokenDocuments = TokenBatch.ofFloats(new float[21_000], 21_000, 1, 1);
    TokenBatch manyQueries = TokenBatch.ofFloats(new float[40_000], 40_000, 1, 1);
    try (MaxSim m = MaxSim.builder().backend("cpu").threads(1).build()) {
      String[] argmax = {"saved argmax", "masked slots included", "21000 x 100000 elements of 4 bytes = 8400000000 bytes", "whole heap", "withLengths"};
      rejects(() -> m.scoresForTraining(longMaskedQuery, oneTokenDocuments), argmax);
      rejects(() -> m.lossAllPairs(longMaskedQuery, oneTokenDocuments, Loss.contrastive(1f)), argmax);
      rejects(() -> m.scores(manyQueries, manyQueries), "scores of queries x documents",
          "in 40000 rows of 1 array and a flat copy = 12801280000 bytes", String.valueOf(heap));
      rejects(() -> m.topK(manyQueries, manyQueries, 40_000), "topK's results", "whole heap");
      rejects(() -> m.project(new float[40_000], 40_000, 1, new float[40_000], 40_000), "project's output",
          "whole heap");
    }
  }

  /**
   * A hostile tester's finding: 13M one-token queries against one document asked for 52 MB of scores, under a
   * 314 MB heap, but as 13M arrays of one float (a header, a reference and alignment each) and the flat copy they
   * are filled from they took 400 MB, and the call ended in a bare OutOfMemoryError. A result held in rows counts
   * each row's array.
   */
  @Test
  void resultRowsCountTheirArrays() {
    long heap = Runtime.getRuntime().maxMemory();
    long rows = heap / 20;
    HeapLimit.require(rows, 1, Float.BYTES, "flat", "nothing"); // a fifth of the heap as one array
    rejects(() -> HeapLimit.requireRows(rows, 1, Float.BYTES, 1, false, "rows of scores", "score fewer queries"),
        "rows of scores = " + rows + " x 1 elements of 4 bytes in " + rows + " rows of 1 array", "whole heap",
        "score fewer queries");
    rejects(() -> HeapLimit.requireRows(heap / 60, 1, Float.BYTES + Integer.BYTES, 2, false, "top k", "smaller k"),
        "rows of 2 arrays", "whole heap");
    HeapLimit.requireRows(heap / 100, 1, Float.BYTES + Integer.BYTES, 2, false, "top k", "smaller k");
  }

  /**
   * A hostile tester's findings: small inputs whose working memory no heap of this JVM holds ended in a bare
   * OutOfMemoryError: 1-bit queries widened to fp32 (32 times their bytes), a long row FDE-encoded in float64, and
   * a top-k whose result fit but whose collectors (the merge, the sorted result, a chunk's per thread) did not.
   */
  @Test
  void workingMemoryPastTheWholeHeapIsRefusedBeforeWork() {
    long heap = Runtime.getRuntime().maxMemory();
    org.junit.jupiter.api.Assumptions.assumeTrue(heap < 6L << 30, "a heap of 6 GB or more takes long to fill");
    int rows = (int) (heap / (32 * 2048 * 4) * 5 / 4);
    TokenBatch bits = TokenBatch.ofBytes(DType.BINARY, new byte[rows * 32 * 2048 / 8], null, rows, 32, 2048);
    TokenBatch oneFloat = TokenBatch.ofFloats(new float[2048], 1, 1, 2048);
    for (String backend : new String[] {"vector", "scalar"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        rejects(() -> m.scores(bits, oneFloat), "kernel's working memory for the call: the queries staged once",
            "whole heap", "score fewer queries per call");
      }
    }
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(1).simHashBits(10).repetitions(1)
        .projectionDim(1).build();
    int tokens = (int) (heap / (8 * (1 + 1 + 11)) * 5 / 4); // d + projection dim + 10 sign bits and 1 projection
    rejects(() -> encoder.encodeDocuments(TokenBatch.ofFloats(new float[tokens], 1, tokens, 1)), "longest row of "
        + tokens + " tokens, encoded in float64", "whole heap", "encode shorter rows");
    // 4000 queries: each query's result row stays under half a G1 region, so the results alone fit
    int documents = (int) (heap / 12 / 4000);
    try (MaxSim m = MaxSim.builder().backend("vector").threads(1).build()) {
      rejects(() -> m.topK(TokenBatch.ofFloats(new float[4000], 4000, 1, 1),
          TokenBatch.ofFloats(new float[documents], documents, 1, 1), Integer.MAX_VALUE),
          "topK's entries held at once", "whole heap", "ask for a smaller k");
    }
  }

  /**
   * A hostile tester's findings: what a CPU kernel holds for a call was counted as the queries' fp32 copy alone,
   * so 1-bit queries against 1-bit documents (staged as words padded to whole vectors, 16 times a one-token row's
   * bytes) and a long 1-bit document widened to fp32 for each thread (32 times its bytes) ended in an
   * OutOfMemoryError, and the reference kernel, which stages nothing, was refused a top-k its scores fitted.
   */
  @Test
  void eachKernelsWorkingMemoryIsCountedAsItHoldsIt() {
    long heap = Runtime.getRuntime().maxMemory();
    org.junit.jupiter.api.Assumptions.assumeTrue(heap < 6L << 30, "a heap of 6 GB or more takes long to fill");
    int dim = 2048;
    // a one-token row stages at least 65 words x 8 lanes where it holds 64 words
    int rows = (int) (heap / (65 * 8 * 4) * 5 / 4);
    TokenBatch bitQueries = TokenBatch.ofBytes(DType.BINARY, new byte[rows * (dim / 8)], null, rows, 1, dim);
    TokenBatch bitDocument = TokenBatch.ofBytes(DType.BINARY, new byte[dim / 8], null, 1, 1, dim);
    try (MaxSim m = MaxSim.builder().backend("vector").threads(1).build()) {
      rejects(() -> m.scores(bitQueries, bitDocument), "vector kernel's working memory for the call", "whole heap",
          "score fewer queries per call");
    }
    int wide = 32768;
    int tokens = (int) (heap / ((long) wide * Float.BYTES) * 5 / 4);
    TokenBatch longDocument = TokenBatch.ofBytes(DType.BINARY, new byte[tokens * (wide / 8)], null, 1, tokens, wide);
    TokenBatch oneQuery = TokenBatch.ofFloats(new float[wide], 1, 1, wide);
    for (String backend : new String[] {"vector", "scalar"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        rejects(() -> m.scores(oneQuery, longDocument), "a document staged by each of 1 thread (the longest row "
            + tokens + " valid tokens", "whole heap", "split the longest documents");
        rejects(() -> m.topK(oneQuery, longDocument, 1), "a document staged by each of 1 thread", "whole heap");
      }
    }
    // 1-bit queries off the heap whose fp32 copy would not fit it, against a document with no valid token
    try (Arena arena = Arena.ofShared(); MaxSim m = MaxSim.builder().backend("reference").threads(1).build()) {
      int n = (int) (heap / ((long) wide * Float.BYTES) * 5 / 4);
      MemorySegment bytes = arena.allocate((long) n * (wide / 8));
      TokenBatch offHeap = TokenBatch.fromMemorySegment(bytes, DType.BINARY, n, 1, wide);
      TokenBatch masked = TokenBatch.fromMemorySegment(bytes.asSlice(0, wide / 8), DType.BINARY, 1, 1, wide)
          .withMask(new boolean[] {false});
      TopK top = m.topK(offHeap, masked, 1);
      assertEquals(-1e9f, top.scores()[0][0]);
    }
  }

  /** A product past even a long is still refused, not wrapped around into a small size that would pass. */
  @Test
  void aSizeWhoseProductPassesALongIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Arguments.arraySize(1L << 40, 1L << 30, "rows' tokens x d", "split them"));
    assertTrue(e.getMessage().startsWith("rows' tokens x d = 1099511627776 x 1073741824 elements"), e.getMessage());
    assertEquals(6, Arguments.arraySize(2, 3, "x", "y"));
  }

  /**
   * A hostile tester's findings: rows of no token just below 2^31 (an OutOfMemoryError where a message was due),
   * a packed 1-bit segment so large that bytes x 8 wrapped (accepted), parts of a merge holding more than 2^31
   * entries together (a NegativeArraySizeException, or overlapping parts merged into nothing).
   */
  @Test
  void rowCountsSegmentsAndMergesPastTheLimits() {
    rejects(() -> TokenBatch.ofFloats(new float[0], Integer.MAX_VALUE, 0, 1), "2147483647 rows;", LIMIT);
    rejects(() -> TokenBatch.fromMemorySegment(MemorySegment.ofArray(new byte[0]), DType.INT8, null,
        Integer.MAX_VALUE, 0, 1), "2147483647 rows;", LIMIT);
    MemorySegment huge = Arena.ofAuto().allocate(16).reinterpret((1L << 61) + 1);
    rejects(() -> TokenBatch.packedFromMemorySegment(huge, DType.BINARY, new int[] {0, 1}, 8), "tokens of dim 8",
        LIMIT);
    int entries = 1 << 20;
    float[] scores = new float[entries];
    int[] documents = new int[entries];
    for (int i = 0; i < entries; i++) {
      documents[i] = i;
    }
    TopK part = new TopK(new float[][] {scores}, new int[][] {documents});
    rejects(() -> TopK.merge(entries, java.util.Collections.nCopies(4096, part), new int[4096]), "both rank");
    int[] disjoint = new int[2048];
    for (int p = 0; p < disjoint.length; p++) {
      disjoint[p] = p << 20;
    }
    rejects(() -> TopK.merge(Integer.MAX_VALUE, java.util.Collections.nCopies(2048, part), disjoint),
        "merged top-k", LIMIT);
  }
}
