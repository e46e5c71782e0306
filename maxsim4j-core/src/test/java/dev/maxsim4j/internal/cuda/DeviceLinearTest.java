package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The projection's launches on the CPU: every grid fits CUDA's 65,535 rows, however many rows X has. */
class DeviceLinearTest {
  private static final long X = 1L << 40;
  private static final long W = 2L << 40;
  private static final long Y = 3L << 40;

  @Test
  void aFewRowsAreOneLaunch() {
    assertEquals(List.of(new KernelArgs.LinearForward(X, W, Y, 1000, 768, 128)),
        DeviceLinear.forwardLaunches(X, W, Y, 1000, 768, 128));
  }

  /** 2.5M token rows (20k documents of 125 tokens) projected from 768 to 128: 1,048,561 rows already failed. */
  @Test
  void millionsOfRowsAreLaunchedInGroupsWhoseGridsFit() {
    int rows = 2_500_000;
    List<KernelArgs.LinearForward> launches = DeviceLinear.forwardLaunches(X, W, Y, rows, 768, 128);
    assertEquals(3, launches.size());
    long next = 0;
    for (KernelArgs.LinearForward l : launches) {
      assertTrue((l.rows() + 15) / 16 <= 65535, l.rows() + " rows: a grid of more than 65,535 rows");
      assertEquals(X + 4 * next * 768, l.x(), "X from the launch's first row");
      assertEquals(W, l.w());
      assertEquals(Y + 4 * next * 128, l.y(), "Y from the launch's first row");
      assertEquals(768, l.in());
      assertEquals(128, l.out());
      next += l.rows();
    }
    assertEquals(rows, next);
    assertEquals(DeviceLinear.MAX_ROWS_PER_LAUNCH, launches.get(0).rows());
  }
}
