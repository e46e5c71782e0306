package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A confident row, whose largest column holds all but ~1e-17 of the probability, rounds that probability to 1.0 in
 * float64: the contrastive gradient {@code p - 1} at the positive came out 0 while the other columns kept their
 * {@code p}, so the row's gradients no longer summed to zero (at T = 1e-3 the positive's -4.2e-15 was lost), the
 * loss {@code -log p} was 0, and a KL divergence came out negative. Expected values here are written with
 * log1p/expm1 on the two-column closed forms.
 */
class HostileLossConfidentRowTest {
  private static final float T = 1e-3f;
  private static final float[][] STUDENT = {{1f, 0.96f}};
  private static final float[][] TEACHER = {{1f, 0.95f}};

  /** exp(z1 - z0) of a two-column row at temperature T, as the library scales: x * (1 / T). */
  private static double ratio(float[] row) {
    double scale = 1.0 / T;
    return Math.exp(row[1] * scale - row[0] * scale);
  }

  @Test
  void contrastiveKeepsTheGradientAtAPositiveOfProbabilityNearOne() {
    double scale = 1.0 / T;
    double r = ratio(STUDENT[0]); // about e^-40
    double pNegative = r / (1 + r);
    Loss.Value v = Loss.contrastive(new int[] {0}, T).evaluate(STUDENT);
    assertEquals(Math.log1p(r), v.loss(), 1e-9 * Math.log1p(r), "loss -log p0");
    assertEquals(-pNegative * scale, v.dScores()[0], 1e-6 * pNegative * scale, "dL/ds0 = p0 - 1");
    assertEquals(pNegative * scale, v.dScores()[1], 1e-6 * pNegative * scale, "dL/ds1 = p1");
  }

  @Test
  void klDistillationOfTwoConfidentRowsIsPositiveWithOpposedGradients() {
    double scale = 1.0 / T;
    double a = ratio(TEACHER[0]); // about e^-50
    double b = ratio(STUDENT[0]); // about e^-40
    double pt1 = a / (1 + a);
    // KL = sum pt (log pt - log ps), log p0 = -log1p(ratio), log p1 = log(ratio) - log1p(ratio)
    double kl = (1 - pt1) * (Math.log1p(b) - Math.log1p(a)) + pt1 * (Math.log(a) - Math.log(b) + Math.log1p(b)
        - Math.log1p(a));
    double d0 = (a - b) / ((1 + a) * (1 + b)) * scale; // ps0 - pt0
    Loss.Value v = Loss.klDistillation(TEACHER, T).evaluate(STUDENT);
    assertTrue(v.loss() > 0, "a KL divergence of different distributions is positive; got " + v.loss());
    assertEquals(kl, v.loss(), 1e-6 * kl, "loss");
    assertEquals(d0, v.dScores()[0], 1e-6 * Math.abs(d0), "dL/ds0 = ps0 - pt0");
    assertEquals(-d0, v.dScores()[1], 1e-6 * Math.abs(d0), "dL/ds1 = ps1 - pt1");
  }

  /** Nearly equal distributions: the terms' rounding summed to a negative divergence. Found by a parity tester. */
  @Test
  void klDistillationOfNearlyEqualRowsIsNeverNegative() {
    float[][] teacher = {{-8.897804f, -2.3183575f, 6.6250405f, 0f}};
    float[][] student = {{-8.897804f, -2.3183575f, 6.6250405f, -1.0e30f}};
    double loss = Loss.klDistillation(teacher, Float.MAX_VALUE).evaluate(student).loss();
    assertTrue(loss >= 0 && loss < 1e-15, "KL >= 0 and about 1e-18; got " + loss);
    double equal = Loss.klDistillation(new float[][] {{0, 0, 0, 0}}, 1f).evaluate(new float[][] {{0, 0, 0, 1e-9f}})
        .loss();
    assertTrue(equal >= 0 && equal < 1e-15, "about 9.4e-20; got " + equal);
    assertTrue(Double.isNaN(Loss.klDistillation(teacher, 1f).evaluate(new float[][] {{Float.NaN, 0, 0, 0}}).loss()),
        "a NaN score's row is still NaN");
  }
}
