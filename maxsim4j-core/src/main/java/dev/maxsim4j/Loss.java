package dev.maxsim4j;

import java.util.Arrays;
import java.util.Objects;

/**
 * A training loss over a score matrix {@code [rows][columns]} (all pairs {@code [Nq][Nd]} or candidates
 * {@code [B][K]}), averaged over rows. {@link #evaluate} is the CPU definition, in float64; the GPU backend
 * runs the same formulas on the device (fp32) when a loss is passed to
 * {@link MaxSim#lossAllPairs} or {@link MaxSim#lossCandidates}.
 *
 * <ul>
 *   <li>{@link #contrastive}: cross-entropy of each row against its positive column at temperature T:
 *       {@code logsumexp(s_i / T) - s_i,pos / T}. In-batch (all pairs, positives on the diagonal or given)
 *       or over candidates (positive given, default column 0).
 *   <li>{@link #klDistillation}: {@code KL(softmax(t_i / T) || softmax(s_i / T))} against teacher scores.
 *       The gradient is not multiplied by T² (scale the result if your recipe does).
 *   <li>{@link #marginMse}: candidates of K = 2 (positive, negative):
 *       {@code ((s_i0 - s_i1) - teacherMargin_i)^2}.
 * </ul>
 *
 * <p>Scores are taken as the forward gives them: a row holding an infinite score (an exact score past fp32's
 * range, e.g. from tokens near {@code 1e20}) or a NaN yields a NaN loss and NaN gradients for every column of that
 * row, not the limit the formula tends to; other rows keep their gradients. {@code dL/dscores} is fp32 too:
 * margin-MSE's {@code 2 (margin - teacherMargin) / rows} past fp32's range (finite scores of order {@code 1e38}) is
 * an infinity, while its loss, a double, stays finite. Unit-length tokens, as retrievers produce, are far from
 * either range.
 *
 * <p>An empty document (no valid token) enters a loss as its score, {@code -1e9}, not as minus infinity: at the
 * usual temperatures its softmax weight is 0, but from {@code T} of about {@code 1e8} on it takes a share that
 * counts ({@code e^-10} there, {@code e^-1} at {@code 1e9}); an empty positive costs about {@code 1e9 / T} (its own
 * gradient, through no token, goes nowhere), and margin-MSE with an empty candidate about {@code 1e18}. Leave empty
 * documents out of training batches.
 *
 * <p>On the CPU the loss value is computed in float64 from fp32 scores (the GPU computes each row's in fp32); where
 * it is tiny (a KL divergence below about {@code 1e-14}, between nearly equal distributions) it carries the rounding
 * of the terms it cancels, while {@code dL/dscores} stays accurate.
 *
 * <p>The records here compare, hash and print their arrays by value (a record's own would by identity): floats
 * and doubles as {@link Float#equals} and {@link Double#equals} take them, so NaN equals NaN and -0.0 is not 0.0.
 */
public sealed interface Loss {

  /**
   * Cross-entropy with positives on the diagonal (in-batch contrastive; needs columns >= rows); passed to
   * {@link MaxSim#lossCandidates}, each query's first candidate.
   */
  static Loss contrastive(float temperature) {
    return new Contrastive(null, temperature);
  }

  /** Cross-entropy with row {@code i}'s positive at column {@code positives[i]}. */
  static Loss contrastive(int[] positives, float temperature) {
    return new Contrastive(Arguments.nonNull(positives, "positives"), temperature);
  }

  /**
   * {@code KL(softmax(t_i / T) || softmax(s_i / T))} per row against {@code teacherScores} of the scores' shape
   * (copied; a teacher score of minus infinity is probability 0), at temperature T.
   */
  static Loss klDistillation(float[][] teacherScores, float temperature) {
    return new KlDistillation(teacherScores, temperature);
  }

  /**
   * {@code ((s_i0 - s_i1) - teacherMargins[i])^2} per row of candidates of K = 2 (positive, then negative), one
   * teacher margin per row (copied).
   */
  static Loss marginMse(float[] teacherMargins) {
    return new MarginMse(teacherMargins);
  }

  /**
   * The loss and {@code dL/dscores} of {@code scores} (a copy; the input is not modified). Here {@link
   * #contrastive(float)} takes its positives on the diagonal, whatever the scores are: candidates' scores (from
   * {@link MaxSim#candidatesForTraining}) need their positives named, {@code contrastive(new int[B], T)} for each
   * query's first candidate, as {@link MaxSim#lossCandidates} takes them, or are evaluated by {@link
   * TrainingScores#evaluate}, which reads the loss as the call that made them does.
   */
  default Value evaluate(float[][] scores) {
    Arguments.nonNull(scores, "scores");
    int rows = scores.length;
    int columns = rows == 0 ? 0 : Arguments.nonNull(scores[0], "scores[0]").length;
    checkShape(rows, columns);
    float[] flat = new float[Arguments.arraySize(rows, columns, "scores of rows x columns",
        "evaluate the loss over fewer rows at a time")];
    for (int i = 0; i < rows; i++) {
      float[] row = scores[i]; // read once: the caller's could change between a check and the copy
      if (row == null || row.length != columns) {
        throw new IllegalArgumentException("scores[" + i + "] " + (row == null ? "is null" : "has length "
            + row.length) + "; expected " + columns + " like row 0");
      }
      System.arraycopy(row, 0, flat, i * columns, columns);
    }
    check(rows, columns);
    return evaluateFlat(flat, rows, columns);
  }

  /**
   * Checks that this loss fits a {@code [rows][columns]} score matrix; throws
   * {@link IllegalArgumentException} naming what does not.
   */
  void check(int rows, int columns);

  /**
   * {@link #evaluate} on a row-major score array of {@code rows x columns} (checked as {@link #check} does; the
   * input is not modified).
   */
  Value evaluateFlat(float[] scores, int rows, int columns);

  /**
   * A loss value and its gradient with respect to the scores, row-major like the scores. {@code dScores} is the
   * value's own array, not a copy (it goes on to a backward): changing it changes the value's equality and hash.
   */
  record Value(double loss, float[] dScores, int rows, int columns) {
    /** A public constructor: dScores must be the rows x columns that {@link #dScoreMatrix} reads. */
    public Value {
      Arguments.nonNull(dScores, "dScores");
      loss = canonical(loss);
      if (rows < 0 || columns < 0) {
        throw new IllegalArgumentException("rows = " + rows + ", columns = " + columns + "; expected both >= 0");
      }
      if (rows > 0 && columns == 0) {
        throw new IllegalArgumentException("rows = " + rows + ", columns = 0; expected a column (a document) for"
            + " every row to have a gradient");
      }
      if (dScores.length != (long) rows * columns) {
        throw new IllegalArgumentException("dScores has length " + dScores.length + "; expected rows x columns = "
            + rows + " x " + columns);
      }
    }

    /** {@code loss}, or {@link Double#NaN}'s bits for any NaN: a sum's NaN carries whatever its operands left. */
    static double canonical(double loss) {
      return Double.isNaN(loss) ? Double.NaN : loss;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Value v && Double.compare(loss, v.loss) == 0 && Arrays.equals(dScores, v.dScores)
          && rows == v.rows && columns == v.columns;
    }

    @Override
    public int hashCode() {
      return Objects.hash(loss, Arrays.hashCode(dScores), rows, columns);
    }

    @Override
    public String toString() {
      return "Value[loss=" + loss + ", dScores=" + ArrayText.of(dScores) + ", rows=" + rows + ", columns="
          + columns + "]";
    }

    /** {@code dL/dscores} as {@code [rows][columns]}. */
    public float[][] dScoreMatrix() {
      Arguments.rowsResultSize(rows, columns, Float.BYTES, 1, false, "dScoreMatrix", "read dScores() row-major");
      float[][] m = new float[rows][columns];
      for (int i = 0; i < rows; i++) {
        System.arraycopy(dScores, i * columns, m[i], 0, columns);
      }
      return m;
    }
  }

  /** Cross-entropy against one positive column per row; {@code positives == null}: the diagonal. */
  record Contrastive(int[] positives, float temperature) implements Loss {
    public Contrastive {
      positives = positives == null ? null : positives.clone(); // the caller's array could change after the check
      checkTemperature(temperature);
    }

    @Override
    public void check(int rows, int columns) {
      checkShape(rows, columns);
      if (positives == null) {
        if (columns < rows) {
          throw new IllegalArgumentException("contrastive loss with positives on the diagonal needs columns >= rows;"
              + " scores are [" + rows + "][" + columns + "]");
        }
        return;
      }
      if (positives.length != rows) {
        throw new IllegalArgumentException("positives has length " + positives.length + "; expected " + rows
            + " (one per row of the [" + rows + "][" + columns + "] scores)");
      }
      for (int i = 0; i < rows; i++) {
        if (positives[i] < 0 || positives[i] >= columns) {
          throw new IllegalArgumentException("positives[" + i + "] = " + positives[i] + "; expected 0 <= p < "
              + columns);
        }
      }
    }

    /** Row i's positive column. */
    @Override
    public int[] positives() {
      return positives == null ? null : positives.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Contrastive c && Arrays.equals(positives, c.positives)
          && Float.compare(temperature, c.temperature) == 0;
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(positives) + Float.hashCode(temperature);
    }

    @Override
    public String toString() {
      return "Contrastive[positives=" + ArrayText.of(positives) + ", temperature=" + temperature + "]";
    }

    @Override
    public Value evaluateFlat(float[] s, int rows, int columns) {
      checkFlat(this, s, rows, columns);
      float[] d = new float[s.length];
      double total = 0;
      double scale = 1.0 / temperature;
      for (int i = 0; i < rows; i++) {
        int off = i * columns;
        if (nonFiniteRow(s, off, columns, d)) {
          total += Double.NaN;
          continue;
        }
        int pos = positives == null ? i : positives[i];
        LogSoftmax row = new LogSoftmax(s, off, columns, scale);
        total -= row.of(s[off + pos]);
        for (int j = 0; j < columns; j++) {
          double target = j == pos ? 0 : Double.NEGATIVE_INFINITY; // log of the one-hot probability
          d[off + j] = (float) (row.minus(s[off + j], target) * scale / rows);
        }
      }
      return new Value(total / rows, d, rows, columns);
    }
  }

  /** KL divergence of the student's softmax from the teacher's, both at temperature T. */
  record KlDistillation(float[][] teacherScores, float temperature) implements Loss {
    public KlDistillation {
      Arguments.nonNull(teacherScores, "teacherScores");
      teacherScores = teacherScores.clone(); // checked below as copied: the caller's rows could change after the check
      for (int i = 0; i < teacherScores.length; i++) {
        teacherScores[i] = Arguments.nonNull(teacherScores[i], "teacherScores[" + i + "]").clone();
        boolean anyFinite = teacherScores[i].length == 0;
        for (int j = 0; j < teacherScores[i].length; j++) {
          float t = teacherScores[i][j];
          if (Float.isNaN(t) || t == Float.POSITIVE_INFINITY) {
            throw new IllegalArgumentException("teacherScores[" + i + "][" + j + "] = " + t
                + "; expected a finite score, or -Infinity for probability 0");
          }
          anyFinite |= t != Float.NEGATIVE_INFINITY;
        }
        if (!anyFinite) {
          throw new IllegalArgumentException("teacherScores[" + i + "] is -Infinity everywhere; expected at least one"
              + " finite score (the teacher's distribution needs some probability)");
        }
        if (teacherScores[i].length != teacherScores[0].length) {
          throw new IllegalArgumentException("teacherScores[" + i + "] has length " + teacherScores[i].length
              + "; expected " + teacherScores[0].length + " like row 0 (one score per column of every row)");
        }
      }
      checkTemperature(temperature);
    }

    @Override
    public void check(int rows, int columns) {
      checkShape(rows, columns);
      if (teacherScores.length != rows) {
        throw new IllegalArgumentException("teacherScores has " + teacherScores.length + " rows; expected " + rows
            + " like the [" + rows + "][" + columns + "] scores");
      }
      // every row is row 0's length: the constructor refuses others
      if (rows > 0 && teacherScores[0].length != columns) {
        throw new IllegalArgumentException("teacherScores[0] has length " + teacherScores[0].length
            + "; expected " + columns);
      }
    }

    /** The teacher's scores (a copy). */
    @Override
    public float[][] teacherScores() {
      float[][] copy = new float[teacherScores.length][];
      for (int i = 0; i < copy.length; i++) {
        copy[i] = teacherScores[i].clone();
      }
      return copy;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof KlDistillation k && Arrays.deepEquals(teacherScores, k.teacherScores)
          && Float.compare(temperature, k.temperature) == 0;
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.deepHashCode(teacherScores) + Float.hashCode(temperature);
    }

    @Override
    public String toString() {
      return "KlDistillation[teacherScores=" + ArrayText.of(teacherScores) + ", temperature=" + temperature
          + "]";
    }

    /** Teacher scores row-major. */
    public float[] teacherFlat() {
      int columns = teacherScores.length == 0 ? 0 : teacherScores[0].length;
      float[] flat = new float[Arguments.arraySize(teacherScores.length, columns, "teacherFlat: teacher scores of"
          + " rows x columns", "read teacherScores() row by row")];
      for (int i = 0; i < teacherScores.length; i++) { // rows of one length: the constructor refuses others
        System.arraycopy(teacherScores[i], 0, flat, i * columns, columns);
      }
      return flat;
    }

    @Override
    public Value evaluateFlat(float[] s, int rows, int columns) {
      checkFlat(this, s, rows, columns);
      float[] d = new float[s.length];
      double total = 0;
      double scale = 1.0 / temperature;
      float[] t = teacherFlat();
      for (int i = 0; i < rows; i++) {
        int off = i * columns;
        if (nonFiniteRow(s, off, columns, d)) {
          total += Double.NaN;
          continue;
        }
        LogSoftmax student = new LogSoftmax(s, off, columns, scale);
        LogSoftmax teacher = new LogSoftmax(t, off, columns, scale);
        double kl = 0;
        for (int j = 0; j < columns; j++) {
          double logPt = teacher.of(t[off + j]);
          double logPs = student.of(s[off + j]);
          double pt = Math.exp(logPt);
          if (pt > 0) { // 0 log 0 = 0: a teacher score of -Infinity is probability 0
            kl += pt * (logPt - logPs);
          }
          d[off + j] = (float) (student.minus(s[off + j], logPt) * scale / rows);
        }
        // KL is never negative: where the distributions (nearly) agree, the terms' rounding may sum below 0
        total += Math.max(0, kl);
      }
      return new Value(total / rows, d, rows, columns);
    }
  }

  /** Squared error of the student's margin (column 0 minus column 1) against the teacher's. */
  record MarginMse(float[] teacherMargins) implements Loss {
    public MarginMse {
      teacherMargins = Arguments.nonNull(teacherMargins, "teacherMargins").clone(); // checked as copied, as above
      for (int i = 0; i < teacherMargins.length; i++) {
        if (!Float.isFinite(teacherMargins[i])) {
          throw new IllegalArgumentException("teacherMargins[" + i + "] = " + teacherMargins[i]
              + "; expected a finite margin");
        }
      }
    }

    /** The teacher's margins (a copy). */
    @Override
    public float[] teacherMargins() {
      return teacherMargins.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof MarginMse m && Arrays.equals(teacherMargins, m.teacherMargins);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(teacherMargins);
    }

    @Override
    public String toString() {
      return "MarginMse[teacherMargins=" + ArrayText.of(teacherMargins) + "]";
    }

    @Override
    public void check(int rows, int columns) {
      checkShape(rows, columns);
      if (columns != 2) {
        throw new IllegalArgumentException("margin-MSE needs candidates of K = 2 (positive, negative); scores are ["
            + rows + "][" + columns + "]");
      }
      if (teacherMargins.length != rows) {
        throw new IllegalArgumentException("teacherMargins has length " + teacherMargins.length + "; expected "
            + rows);
      }
    }

    @Override
    public Value evaluateFlat(float[] s, int rows, int columns) {
      checkFlat(this, s, rows, columns);
      float[] d = new float[s.length];
      double total = 0;
      for (int i = 0; i < rows; i++) {
        if (nonFiniteRow(s, 2 * i, 2, d)) {
          total += Double.NaN;
          continue;
        }
        double diff = (double) s[2 * i] - s[2 * i + 1] - teacherMargins[i];
        total += diff * diff;
        d[2 * i] = (float) (2 * diff / rows);
        d[2 * i + 1] = (float) (-2 * diff / rows);
      }
      return new Value(total / rows, d, rows, columns);
    }
  }

  /**
   * Whether the scores {@code s[off .. off+n)} of one row hold a NaN or an infinity, filling that row's gradients
   * with NaN if so: each formula would otherwise give that row the limit it tends to, or a mix of NaN and finite.
   */
  private static boolean nonFiniteRow(float[] s, int off, int n, float[] d) {
    for (int j = off; j < off + n; j++) {
      if (!Float.isFinite(s[j])) {
        Arrays.fill(d, off, off + n, Float.NaN);
        return true;
      }
    }
    return false;
  }

  /** A loss averages over rows of at least one column: with none it would be 0/0. */
  private static void checkShape(int rows, int columns) {
    if (rows < 1 || columns < 1) {
      throw new IllegalArgumentException("scores are [" + rows + "][" + columns + "]; a loss needs at least one row"
          + " and one column");
    }
  }

  /** The gradient scales with 1 / T, so T below 1 / Float.MAX_VALUE would overflow every fp32 gradient. */
  private static void checkTemperature(float temperature) {
    float smallest = Math.nextUp(1 / Float.MAX_VALUE); // 1 / Float.MAX_VALUE rounds to a float whose inverse is not one
    if (!(temperature >= smallest) || Float.isInfinite(temperature)) {
      throw new IllegalArgumentException("temperature = " + temperature + "; expected a finite value >= "
          + smallest + " (its inverse a float: the gradient scales with 1 / T)");
    }
  }

  private static void checkFlat(Loss loss, float[] scores, int rows, int columns) {
    Arguments.nonNull(scores, "scores");
    loss.check(rows, columns);
    if (scores.length != (long) rows * columns) {
      throw new IllegalArgumentException("scores has length " + scores.length + "; expected rows x columns = "
          + rows + " x " + columns);
    }
  }
}
