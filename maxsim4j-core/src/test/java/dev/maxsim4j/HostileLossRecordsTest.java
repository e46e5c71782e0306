package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The losses' public record constructors check their arrays; a caller changing them afterwards changes nothing. */
class HostileLossRecordsTest {
  @Test
  void constructorsKeepCopiesOfWhatTheyChecked() {
    float[][] teacher = {{1f, 2f}};
    Loss kl = new Loss.KlDistillation(teacher, 1f);
    teacher[0][0] = Float.NaN; // refused by the check, had it been there at construction
    Loss.Value v = kl.evaluate(new float[][] {{1f, 2f}});
    assertEquals(0, v.loss(), 1e-12, "student equals teacher");
    assertEquals(0f, v.dScores()[0], 1e-7f);

    float[] margins = {1f};
    Loss mse = new Loss.MarginMse(margins);
    margins[0] = Float.NaN;
    assertEquals(0, mse.evaluate(new float[][] {{2f, 1f}}).loss(), 0, "margin 1 met exactly");

    int[] positives = {0};
    Loss ce = new Loss.Contrastive(positives, 1f);
    positives[0] = 7;
    assertEquals(Math.log(2), ce.evaluate(new float[][] {{1f, 1f}}).loss(), 1e-12);

    float[][] nullRow = {null};
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new Loss.KlDistillation(nullRow, 1f));
    assertEquals("teacherScores[0] is null", e.getMessage().substring(0, "teacherScores[0] is null".length()));
  }

  /**
   * teacherFlat of a ragged teacher threw an ArrayIndexOutOfBoundsException (a shorter row) or dropped scores (a
   * longer one), and sized its copy as rows x columns in int; a ragged teacher is now refused by name when the loss
   * is made, so a row-major copy always has one.
   */
  @Test
  void aRaggedTeacherIsRefusedByNameWhenTheLossIsMade() {
    assertEquals(4, new Loss.KlDistillation(new float[][] {{1f, 2f}, {3f, 4f}}, 1f).teacherFlat().length);
    for (float[][] ragged : new float[][][] {{{1f, 2f}, {3f}}, {{1f}, {2f, 3f}}}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> new Loss.KlDistillation(ragged, 1f));
      assertEquals("teacherScores[1] has length " + ragged[1].length + "; expected " + ragged[0].length
          + " like row 0 (one score per column of every row)", e.getMessage());
    }
  }
}
