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
    assertTrue(out.contains("checked 12 row counts"), out);
  }

  @Test
  void aHeapThatRunsOutWhileBookingRowsIsAnArgumentError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BatchChecks.bookRows("shape [9, 0, 4]", 9, () -> {
          throw new OutOfMemoryError("Java heap space");
        }));
    assertTrue(e.getMessage().contains("shape [9, 0, 4] has 9 rows"), e.getMessage());
    assertTrue(e.getMessage().contains("did not fit in what this JVM's heap"), e.getMessage());
  }

  @Test
  void aLossValueOfRowsWithoutColumnsIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new Loss.Value(0, new float[0], Integer.MAX_VALUE, 0));
    assertTrue(e.getMessage().contains("rows = 2147483647, columns = 0"), e.getMessage());
    new Loss.Value(0, new float[0], 0, 0).dScoreMatrix();
    new Loss.Value(0, new float[0], 0, 5).dScoreMatrix();
  }

  /** Row counts from 90% to 99.9% of what the whole heap books: each a batch or a refusal, never a heap error. */
  static final class NearTheHeap {
    public static void main(String[] args) {
      long whole = Runtime.getRuntime().maxMemory() / BatchChecks.ROW_BOOKKEEPING_BYTES;
      int checked = 0;
      for (double f : new double[] {0.90, 0.95, 0.98, 0.99, 0.995, 0.999}) {
        int rows = (int) (whole * f);
        try {
          TokenBatch.ofFloats(new float[0], rows, 0, 4);
        } catch (IllegalArgumentException expected) {
          requireNamed(expected, "shape [" + rows + ", 0, 4]");
        }
        checked++;
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
      System.out.println("checked " + checked + " row counts");
    }

    private static void requireNamed(IllegalArgumentException e, String what) {
      if (!e.getMessage().contains(what) || !e.getMessage().contains("heap")) {
        throw new AssertionError(e.getMessage(), e);
      }
    }
  }
}
