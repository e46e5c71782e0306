package dev.maxsim4j.spark;

import dev.maxsim4j.TokenBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Synthetic token rows of variable length (some empty, some with masked tokens) in both forms: Spark rows and
 * the reference batch a single-process MaxSim scores (padded to the longest row, the mask applied).
 */
record Corpus(List<String> ids, List<float[][]> tokens, List<boolean[]> masks, int dim) {
  static final StructType ARRAYS = new StructType()
      .add("id", DataTypes.StringType, false)
      .add("tokens", TokenColumns.ARRAYS, false)
      .add("mask", DataTypes.createArrayType(DataTypes.BooleanType, false), false);

  /** {@code n} rows of 0..maxLength tokens; {@code emptyEvery} > 0 makes every such row empty. */
  static Corpus random(String prefix, int n, int maxLength, int dim, long seed, int emptyEvery) {
    Random r = new Random(seed);
    List<String> ids = new ArrayList<>();
    List<float[][]> tokens = new ArrayList<>();
    List<boolean[]> masks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int length = emptyEvery > 0 && i % emptyEvery == 0 ? 0 : 1 + r.nextInt(maxLength);
      float[][] t = new float[length][dim];
      boolean[] m = new boolean[length];
      for (int j = 0; j < length; j++) {
        for (int k = 0; k < dim; k++) {
          t[j][k] = (float) r.nextGaussian();
        }
        m[j] = j == 0 || r.nextInt(5) != 0;
      }
      ids.add(prefix + i);
      tokens.add(t);
      masks.add(m);
    }
    return new Corpus(ids, tokens, masks, dim);
  }

  /** Rows (id, tokens, mask). */
  List<Row> rows() {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      rows.add(RowFactory.create(ids.get(i), tokens.get(i), masks.get(i)));
    }
    return rows;
  }

  /** The reference batch: padded [n, L, d], each row's tokens then padding, the mask applied. */
  TokenBatch batch() {
    int length = 1;
    for (float[][] t : tokens) {
      length = Math.max(length, t.length);
    }
    float[] data = new float[ids.size() * length * dim];
    boolean[] valid = new boolean[ids.size() * length];
    for (int i = 0; i < ids.size(); i++) {
      for (int j = 0; j < tokens.get(i).length; j++) {
        System.arraycopy(tokens.get(i)[j], 0, data, (i * length + j) * dim, dim);
        valid[i * length + j] = masks.get(i)[j];
      }
    }
    return TokenBatch.ofFloats(data, ids.size(), length, dim).withMask(valid);
  }
}
