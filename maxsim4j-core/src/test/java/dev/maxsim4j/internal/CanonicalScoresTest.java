package dev.maxsim4j.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

/**
 * What the device backend applies to every score it downloads: NaN as Float.NaN's bits and zero as +0, whatever
 * the kernel's order of operations left; other values and the scores past {@code length} stay as they are.
 */
class CanonicalScoresTest {
  @Test
  void nanAndZeroTakeOneBitPatternEach() {
    float[] scores = {Float.intBitsToFloat(0x7fffffff), Float.intBitsToFloat(0xffc00001), -0f, 0f, -1e9f,
        Float.MIN_VALUE, -Float.MIN_VALUE, Float.NEGATIVE_INFINITY, -0f};
    Backend.canonicalScores(scores, 8);
    int[] bits = new int[scores.length];
    for (int i = 0; i < bits.length; i++) {
      bits[i] = Float.floatToRawIntBits(scores[i]);
    }
    assertArrayEquals(new int[] {0x7fc00000, 0x7fc00000, 0, 0, Float.floatToRawIntBits(-1e9f), 1, 0x80000001,
        0xff800000, 0x80000000}, bits);
  }
}
