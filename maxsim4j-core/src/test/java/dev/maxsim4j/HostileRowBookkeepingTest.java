package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A hostile tester's finding: rows of no token whose bookkeeping came close to the whole heap passed the factories'
 * check, which compares with the whole heap, and ran out of memory there, as did a loss value of many rows and no
 * column. Near the heap's size what else it holds decides, so a factory that runs out of it says so by name.
 */
class HostileRowBookkeepingTest {
  @Test
  void rowsThatDoNotFitTheHeapLeftAreRefusedByName() throws Exception {
    String out = ChildJvm.run(List.of("-Xmx64m"), NearTheHeap.class, 120);
    assertTrue(out.matches("(?s).*checked \\d+ row counts.*"), out);
  }

  /**
   * Calls over many empty rows, from a tenth to seven tenths of what the heap books: each result, working array and
   * saved argmax was checked against the whole heap alone, so one that fitted alone but not beside the inputs (or
   * beside the call's other arrays) ran out of memory. Found by hostile tests (a file of 300 million empty
   * documents); each call now runs or is refused by name.
   */
  @Test
  void callsOverManyEmptyRowsRunOrAreRefusedByName() throws Exception {
    String out = ChildJvm.run(List.of("-Xmx64m"), BesideTheInputs.class, 300);
    assertTrue(out.contains("ran 12 calls at 7 sizes"), out);
    assertTrue(!out.contains("refused at 0.7: 0") && out.contains("merge refused at 0.9"), out);
  }

  /**
   * A corpus given as a Java array of nine tenths of the heap still takes small calls: the room kept around a checked
   * array scales with it (an eighth of the heap kept for every array refused all of them). Found by a reviewer.
   */
  @Test
  void aCorpusOfMostOfTheHeapTakesSmallCalls() throws Exception {
    String out = ChildJvm.run(List.of("-Xmx256m"), LargeCorpus.class, 120);
    assertTrue(out.contains("top 10, scores of 1 query, a pair, 8 encodings"), out);
  }

  /**
   * Results of long rows (800 KB each, a 64 MB heap's G1 puts each in a 1 MB region of its own) for more and more
   * queries: each call runs or is refused by name, none runs out of memory (rows counted at their bytes let through
   * calls that needed a quarter more). Found by a hostile tester.
   */
  @Test
  void longRowsNearTheHeapRunOrAreRefusedByName() throws Exception {
    String out = ChildJvm.run(List.of("-Xmx64m", "-XX:+UseG1GC"), LongRows.class, 120);
    assertTrue(out.contains("ran or refused by name: 30 to 40 queries"), out);
  }

  static final class LongRows {
    public static void main(String[] args) {
      int documents = 200_000;
      int dim = 16;
      java.lang.foreign.MemorySegment tokens = java.lang.foreign.Arena.ofAuto().allocate(4L * documents * 2 * dim, 4);
      TokenBatch corpus = TokenBatch.fromMemorySegment(tokens, DType.FLOAT32, documents, 2, dim);
      try (MaxSim m = MaxSim.builder().backend("scalar").threads(2).build()) {
        for (int queries = 30; queries <= 40; queries++) {
          TokenBatch q = TokenBatch.ofFloats(new float[queries * 2 * dim], queries, 2, dim);
          try {
            m.scores(q, corpus);
          } catch (IllegalArgumentException refused) {
            if (!refused.getMessage().startsWith("scores of queries x documents")) {
              throw refused;
            }
          }
          System.gc();
        }
      }
      System.out.println("ran or refused by name: 30 to 40 queries");
    }
  }

  /**
   * Pairwise and candidate scores of more queries than the heap holds staged as fp32 (bf16 tokens in native memory,
   * twice their bytes once staged): scored in groups of queries, each score equal to the same pair scored in a call
   * of its own slice. Found by a hostile tester (the CLI's --pairwise over a file past the heap was refused).
   */
  @Test
  void pairwiseAndCandidatesOfMoreQueriesThanTheHeapStagesAreScoredInGroups() throws Exception {
    String out = ChildJvm.run(List.of("-Xmx64m"), ManyQueries.class, 120);
    assertTrue(out.contains("pairwise and candidates of 3000 queries equal their slices'"), out);
  }

  /**
   * Grouped or not, a pair's score has the same bits: float queries against 1-bit documents, which small groups
   * alone would score by tables of partial sums where the whole call widens the bits (a reviewer: the last groups'
   * scores moved by an ulp with the heap's size).
   */
  @Test
  void groupsScoreWithTheArithmeticOfTheWholeCall() throws Exception {
    String grouped = ChildJvm.run(List.of("-Xmx24m"), OneBitPairs.class, 120);
    String whole = ChildJvm.run(List.of("-Xmx1g"), OneBitPairs.class, 120);
    assertTrue(whole.contains("pairwise bits "), whole);
    assertEquals(whole, grouped);
  }

  static final class OneBitPairs {
    public static void main(String[] args) {
      int rows = 2096; // staged, the fp32 queries take more than a 24 MB heap; the last group is small
      int length = 32;
      int dim = 128;
      java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
      // global: native memory that, unlike an automatic arena's, does not count as direct buffers (the heap's size)
      java.lang.foreign.MemorySegment q = java.lang.foreign.Arena.global().allocate(4L * rows * length * dim, 4);
      java.lang.foreign.MemorySegment d = java.lang.foreign.Arena.global().allocate(4L * rows * length * dim, 4);
      for (long i = 0; i < (long) rows * length * dim; i++) {
        q.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i, (float) rnd.nextGaussian());
        d.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i, (float) rnd.nextGaussian());
      }
      TokenBatch bits = TokenBatch.fromMemorySegment(d, DType.FLOAT32, rows, length, dim).quantize(DType.BINARY);
      try (MaxSim m = MaxSim.builder().backend("vector").threads(2).build()) {
        float[] s = m.pairwise(TokenBatch.fromMemorySegment(q, DType.FLOAT32, rows, length, dim), bits);
        int[] raw = new int[s.length];
        for (int i = 0; i < s.length; i++) {
          raw[i] = Float.floatToRawIntBits(s[i]);
        }
        System.out.println("pairwise bits " + java.util.Arrays.hashCode(raw) + ", last " + Integer.toHexString(
            raw[rows - 1]));
      }
    }
  }

  static final class ManyQueries {
    public static void main(String[] args) {
      int rows = 3000;
      int length = 32;
      int dim = 128;
      java.util.SplittableRandom rnd = new java.util.SplittableRandom(5);
      java.lang.foreign.MemorySegment tokens = java.lang.foreign.Arena.ofAuto().allocate(2L * rows * length * dim, 2);
      for (long i = 0; i < (long) rows * length * dim; i++) {
        tokens.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, i,
            DType.BFLOAT16.narrow((float) rnd.nextGaussian()));
      }
      TokenBatch all = TokenBatch.fromMemorySegment(tokens, DType.BFLOAT16, rows, length, dim);
      try (MaxSim m = MaxSim.builder().backend("cpu").threads(2).build()) {
        float[] pairwise = m.pairwise(all, all);
        float[][] candidates = m.candidates(slice(tokens, 0, rows / 2, length, dim), all, 2);
        int step = 250;
        for (int from = 0; from < rows; from += step) {
          TokenBatch part = slice(tokens, from, step, length, dim);
          float[] expected = m.pairwise(part, part);
          for (int i = 0; i < step; i++) {
            if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(pairwise[from + i])) {
              throw new AssertionError("pairwise " + (from + i) + ": " + pairwise[from + i] + ", alone " + expected[i]);
            }
          }
          if (from < rows / 2) {
            float[][] want = m.candidates(part, slice(tokens, 2 * from, 2 * step, length, dim), 2);
            for (int i = 0; i < step; i++) {
              if (!java.util.Arrays.equals(want[i], candidates[from + i])) {
                throw new AssertionError("candidates of query " + (from + i));
              }
            }
          }
        }
      }
      System.out.println("pairwise and candidates of 3000 queries equal their slices'");
    }

    private static TokenBatch slice(java.lang.foreign.MemorySegment tokens, int from, int n, int length, int dim) {
      long row = 2L * length * dim;
      return TokenBatch.fromMemorySegment(tokens.asSlice(from * row, n * row), DType.BFLOAT16, n, length, dim);
    }
  }

  static final class LargeCorpus {
    public static void main(String[] args) {
      int dim = 128;
      int length = 32;
      int n = (int) (Runtime.getRuntime().maxMemory() * 0.9 / (4L * length * dim));
      float[] tokens = new float[n * length * dim];
      java.util.Arrays.fill(tokens, 0.5f);
      TokenBatch corpus = TokenBatch.ofFloats(tokens, n, length, dim);
      TokenBatch query = TokenBatch.ofFloats(new float[length * dim], 1, length, dim);
      try (MaxSim m = MaxSim.builder().backend("scalar").threads(1).build()) {
        m.topK(query, corpus, 10);
        m.scores(query, corpus);
        java.lang.foreign.MemorySegment all = java.lang.foreign.MemorySegment.ofArray(tokens);
        m.pairwise(query, TokenBatch.fromMemorySegment(all.asSlice(0, 4L * length * dim), DType.FLOAT32, 1, length,
            dim));
        m.encodeDocuments(FixedDimensionalEncoder.builder(dim).simHashBits(1).repetitions(1).build(),
            TokenBatch.fromMemorySegment(all.asSlice(0, 8 * 4L * length * dim), DType.FLOAT32, 8, length, dim));
      }
      System.out.println("top 10, scores of 1 query, a pair, 8 encodings");
    }
  }

  static final class BesideTheInputs {
    public static void main(String[] args) {
      long heap = Runtime.getRuntime().maxMemory();
      StringBuilder refusals = new StringBuilder();
      try (MaxSim m = MaxSim.builder().backend("scalar").build()) {
        TokenBatch one = TokenBatch.ofFloats(new float[3 * 4], 1, 3, 4);
        TokenBatch two = TokenBatch.ofFloats(new float[2 * 3 * 4], 2, 3, 4);
        FixedDimensionalEncoder fde = FixedDimensionalEncoder.builder(4).simHashBits(0).repetitions(1).build();
        for (int tenths = 1; tenths <= 7; tenths++) {
          TokenBatch many = TokenBatch.ofFloats(new float[0], (int) (heap * tenths / 10 / 12), 0, 4);
          List<java.util.function.Supplier<Object>> calls = List.of(() -> m.scores(two, many),
              () -> m.scoresAsync(two, many).join(), () -> m.topK(two, many, Integer.MAX_VALUE),
              () -> m.topK(many, one, 1), () -> m.scores(many, one), () -> m.pairwise(many, many),
              () -> m.candidates(one, many, many.size()), () -> m.scoresForTraining(one, many),
              () -> m.lossAllPairs(one, many, Loss.contrastive(new int[] {0}, 0.05f)),
              () -> fde.encodeDocuments(many), () -> m.encodeQueries(fde, many),
              () -> m.topK(one, many, many.size()));
          int refused = 0;
          for (java.util.function.Supplier<Object> call : calls) {
            try {
              call.get();
            } catch (IllegalArgumentException expected) {
              NearTheHeap.requireNamed(expected, "heap");
              refused++;
            }
          }
          refusals.append("refused at 0.").append(tenths).append(": ").append(refused).append('\n');
        }
      }
      // two parts of a ranking, together a tenth to nine tenths of the heap, merged into one as long as both
      for (int tenths = 1; tenths <= 9; tenths++) {
        int n = (int) (heap * tenths / 10 / 16);
        try {
          TopK.merge(2 * n, List.of(topOf(n), topOf(n)), new int[] {0, n});
        } catch (IllegalArgumentException expected) {
          NearTheHeap.requireNamed(expected, "TopK.merge's");
          refusals.append("merge refused at 0.").append(tenths).append('\n');
        }
      }
      System.out.println("ran 12 calls at 7 sizes\n" + refusals);
    }

    /** One query's ranking of {@code n} documents, every score equal: a part TopK.merge holds beside its result. */
    private static TopK topOf(int n) {
      int[] indices = new int[n];
      java.util.Arrays.setAll(indices, i -> i);
      return new TopK(new float[][] {new float[n]}, new int[][] {indices});
    }
  }

  @Test
  void aHeapThatRunsOutWhileBookingRowsIsAnArgumentError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BatchChecks.bookRows("shape [9, 0, 4]", 9, () -> {
          throw new OutOfMemoryError("Java heap space");
        }));
    assertTrue(e.getMessage().contains("shape [9, 0, 4] has 9 rows"), e.getMessage());
    assertTrue(e.getMessage().contains("did not fit in what this JVM's heap"), e.getMessage());
    assertTrue(e.getCause() instanceof OutOfMemoryError, "the heap's error kept as the cause");
  }

  @Test
  void aLossValueOfRowsWithoutColumnsIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new Loss.Value(0, new float[0], Integer.MAX_VALUE, 0));
    assertTrue(e.getMessage().contains("rows = 2147483647, columns = 0"), e.getMessage());
    new Loss.Value(0, new float[0], 0, 0).dScoreMatrix();
    new Loss.Value(0, new float[0], 0, 5).dScoreMatrix();
  }

  /**
   * Row counts from 30% to 99.9% of what the whole heap books, as batches, masks, lengths and nested rows: each made
   * or refused by name, never a heap error.
   */
  static final class NearTheHeap {
    public static void main(String[] args) {
      long whole = Runtime.getRuntime().maxMemory() / BatchChecks.ROW_BOOKKEEPING_BYTES;
      int checked = 0;
      for (double f : new double[] {0.30, 0.50, 0.70, 0.90, 0.95, 0.98, 0.99, 0.995, 0.999}) {
        int rows = (int) (whole * f);
        TokenBatch batch = null;
        try {
          batch = TokenBatch.ofFloats(new float[0], rows, 0, 4);
        } catch (IllegalArgumentException expected) {
          requireNamed(expected, "shape [" + rows + ", 0, 4]");
        }
        checked++;
        if (batch != null) {
          try {
            batch.withMask(new boolean[0]);
          } catch (IllegalArgumentException expected) {
            requireNamed(expected, "mask of length 0");
          }
          try {
            int[] lengths = new int[rows];
            try {
              batch.withLengths(lengths);
            } catch (IllegalArgumentException expected) {
              requireNamed(expected, "lengths of length " + rows);
            }
          } catch (OutOfMemoryError ownArray) {
            // the test's own lengths did not fit beside the batch: nothing of the library's ran
          }
          batch = null;
          checked++;
        }
        try {
          float[][][] empty = new float[rows][][];
          java.util.Arrays.fill(empty, new float[0][]);
          try {
            TokenBatch.of(empty);
          } catch (IllegalArgumentException expected) {
            requireNamed(expected, " has " + rows + " rows"); // the nested rows, or the batch they make
          }
        } catch (OutOfMemoryError ownArray) {
          // the test's own rows did not fit
        }
        try {
          TokenBatch.packedFloats(new float[0], new int[rows + 1], 4);
        } catch (IllegalArgumentException expected) {
          requireNamed(expected, "offsets of length " + (rows + 1));
        } catch (OutOfMemoryError ownArray) {
          // the test's own offsets array did not fit: nothing of the library's ran
        }
        checked++;
        System.gc();
      }
      // one column: the matrix takes several times the bytes of dScores, checked against the heap
      float[] many = new float[(int) (Runtime.getRuntime().maxMemory() / 16)];
      try {
        new Loss.Value(0, many, many.length, 1).dScoreMatrix();
        throw new AssertionError("a matrix past the heap was made");
      } catch (IllegalArgumentException expected) {
        requireNamed(expected, "dScoreMatrix");
      }
      System.out.println("checked " + checked + " row counts");
    }

    private static void requireNamed(IllegalArgumentException e, String what) {
      if (!e.getMessage().contains(what) || !e.getMessage().contains("heap")) {
        throw new AssertionError(e.getMessage(), e);
      }
    }
  }
}
