package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
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

  static final StructType CELLS = new StructType()
      .add("id", DataTypes.StringType, false)
      .add("tokens", DataTypes.BinaryType, false)
      .add("mask", DataTypes.createArrayType(DataTypes.BooleanType, false), false);

  /** The type row {@code i} is stored in by {@link #mixedCellRows}: every type in turn, neighbours differing. */
  static DType mixedType(int i) {
    DType[] all = DType.values();
    return all[(i * 7 + i / 3) % all.length];
  }

  /** Rows (id, binary cell, mask) whose cells are stored in {@link #mixedType}s: one column of every type. */
  List<Row> mixedCellRows() {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      rows.add(RowFactory.create(ids.get(i), TokenCodec.encode(tokens.get(i), mixedType(i)), masks.get(i)));
    }
    return rows;
  }

  /** The values {@link #mixedCellRows} holds: each row's tokens rounded or quantized to its type. */
  Corpus mixedDecoded() {
    List<float[][]> stored = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      stored.add(tokens.get(i).length == 0 ? tokens.get(i)
          : TokenCodec.decode(TokenCodec.encode(tokens.get(i), mixedType(i))));
    }
    return new Corpus(ids, stored, masks, dim);
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
