package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.FdeParameters;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The sketch table the GPU reads: each coordinate once, in its bucket, with its sign, ascending within a bucket. */
class DeviceFdeTest {

  @Test
  void theSketchTableListsEveryCoordinateOnceAscendingInItsBucket() {
    SplittableRandom rnd = new SplittableRandom(3);
    int raw = 2 * 4 * 5;
    int finalDim = 7;
    int[] bucket = new int[raw];
    byte[] sign = new byte[raw];
    for (int i = 0; i < raw; i++) {
      bucket[i] = rnd.nextInt(finalDim - 1); // the last bucket stays empty
      sign[i] = (byte) (rnd.nextBoolean() ? 1 : -1);
    }
    FdeParameters p = new FdeParameters(6, 2, 2, 5, finalDim, true, new double[6 * 2 * 7], bucket, sign);
    DeviceFde.SketchTable sketch = DeviceFde.sketchTable(p);
    int[] start = sketch.bucketStart();
    assertEquals(finalDim + 1, start.length);
    assertEquals(raw, start[finalDim]);
    boolean[] seen = new boolean[raw];
    for (int j = 0; j < finalDim; j++) {
      int last = -1;
      for (int e = start[j]; e < start[j + 1]; e++) {
        int m = sketch.members()[e];
        int i = m >= 0 ? m : ~m;
        assertEquals(j, bucket[i], "coordinate " + i);
        assertEquals(sign[i] > 0, m >= 0, "sign of coordinate " + i);
        assertTrue(i > last, "ascending in bucket " + j);
        assertTrue(!seen[i], "once: " + i);
        seen[i] = true;
        last = i;
      }
    }
    assertEquals(start[finalDim - 1], start[finalDim], "an empty bucket has no entries");
  }
}
