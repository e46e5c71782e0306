package dev.maxsim4j;

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
   * Scores and top-k of many empty documents: the result fitted the heap and the documents' bookkeeping did, but not
   * both, and each was checked against the whole heap alone; now the result is checked beside what the inputs hold.
   * Found by a hostile test (a file of 300 million empty documents).
   */
  @Test
  void aResultThatFitsOnlyWithoutItsInputsIsRefusedByName() throws Exception {
    String out = ChildJvm.run(List.of("-Xmx64m"), BesideTheInputs.class, 120);
    assertTrue(out.contains("refused 3 results, made 3"), out);
  }

  static final class BesideTheInputs {
    public static void main(String[] args) {
      long heap = Runtime.getRuntime().maxMemory();
      TokenBatch queries = TokenBatch.ofFloats(new float[2 * 3 * 4], 2, 3, 4);
      int refused = 0;
      int made = 0;
      try (MaxSim m = MaxSim.builder().backend("scalar").build()) {
        // the documents' bookkeeping (12 bytes a row) takes 45% of the heap; two rows of scores and their flat copy
        // (16 bytes a document) 60%: each fits alone
        TokenBatch many = TokenBatch.ofFloats(new float[0], (int) (heap * 0.45 / 12), 0, 4);
        for (Runnable call : new Runnable[] {() -> m.scores(queries, many), () -> m.scoresAsync(queries, many).join(),
            () -> m.topK(TokenBatch.ofFloats(new float[2 * 3 * 4], 2, 3, 4), many, Integer.MAX_VALUE)}) {
          try {
            call.run();
            throw new AssertionError("a result that does not fit beside its inputs was made");
          } catch (IllegalArgumentException expected) {
            if (!expected.getMessage().contains("has beside the") || !expected.getMessage().contains("bytes the"
                + " inputs hold there")) {
              throw new AssertionError(expected.getMessage(), expected);
            }
            refused++;
          }
        }
        // a tenth of that is made, and scores as an empty document does
        TokenBatch fewer = TokenBatch.ofFloats(new float[0], (int) (heap * 0.045 / 12), 0, 4);
        float[][] scores = m.scores(queries, fewer);
        made += scores[1][fewer.size() - 1] == -1e9f ? 1 : 0;
        made += m.scoresAsync(queries, fewer).join()[0][0] == -1e9f ? 1 : 0;
        made += m.topK(queries, fewer, 3).scores()[1][2] == -1e9f ? 1 : 0;
      }
      System.out.println("refused " + refused + " results, made " + made);
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
