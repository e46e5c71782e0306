package dev.maxsim4j.spark;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TopK;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The two ends of scripts/spark-submit-check.sh, run through {@code spark-submit} like the job itself:
 * {@code data DIR DOCS QUERIES FILES} writes {@code DIR/q.parquet} (fp32 {@code array<array<float>>} queries)
 * and {@code DIR/corpus/} (bf16 {@code binary} cells of 0-48 tokens, in FILES files); {@code compare DIR RUN K}
 * ranks that corpus in one {@code MaxSim.topK} call and checks {@code RUN/run.trec} and {@code RUN/topk/}
 * against it entry by entry. Not a test: the script runs it (public, as spark-submit calls only a public main).
 */
public final class SubmitCheck {
  private static final int DIM = 128;
  private static final int QUERY_LENGTH = 32;
  private static final int MAX_DOC_LENGTH = 48;
  private static final int EMPTY_EVERY = 997;

  private SubmitCheck() {}

  public static void main(String[] args) throws IOException {
    SparkSession spark = SparkSession.builder().appName("maxsim4j spark-submit check").getOrCreate();
    int status;
    try {
      status = switch (args.length > 0 ? args[0] : "") {
        case "data" -> data(spark, Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
            Integer.parseInt(args[4]));
        case "compare" -> compare(spark, Path.of(args[1]), Path.of(args[2]), Integer.parseInt(args[3]));
        default -> {
          System.err.println("usage: data DIR DOCS QUERIES FILES | compare DIR RUN K");
          yield 2;
        }
      };
    } finally {
      spark.stop();
    }
    if (status != 0) {
      System.exit(status);
    }
  }

  private static int data(SparkSession spark, Path dir, int docs, int queries, int files) {
    StructType arrays = new StructType().add("id", DataTypes.StringType).add("tokens", TokenColumns.ARRAYS);
    spark.range(0, queries, 1, 1).map((MapFunction<Long, Row>) id -> {
      float[][] t = random(new Random(id), QUERY_LENGTH);
      return RowFactory.create("q" + id, t);
    }, Encoders.row(arrays)).write().parquet(dir.resolve("q.parquet").toString());
    StructType cells = new StructType().add("id", DataTypes.StringType).add("tokens", DataTypes.BinaryType);
    spark.range(0, docs, 1, files).map((MapFunction<Long, Row>) id -> {
      Random r = new Random(1_000_003L + id);
      int length = id % EMPTY_EVERY == 0 ? 0 : 1 + r.nextInt(MAX_DOC_LENGTH);
      return RowFactory.create("d" + id, TokenCodec.encode(random(r, length), DType.BFLOAT16));
    }, Encoders.row(cells)).write().parquet(dir.resolve("corpus").toString());
    System.out.printf("data: %d queries of %d x %d fp32, %d documents of 0-%d x %d bf16 in %d files%n", queries,
        QUERY_LENGTH, DIM, docs, MAX_DOC_LENGTH, DIM, files);
    return 0;
  }

  private static float[][] random(Random r, int length) {
    float[][] t = new float[length][DIM];
    for (float[] token : t) {
      for (int k = 0; k < DIM; k++) {
        token[k] = r.nextFloat() * 2 - 1;
      }
    }
    return t;
  }

  /** Checks both outputs of the job in {@code run} against one call; 0 when every entry matches. */
  private static int compare(SparkSession spark, Path dir, Path run, int k) throws IOException {
    List<Row> queryRows = spark.read().parquet(dir.resolve("q.parquet").toString()).select("id", "tokens")
        .collectAsList();
    // the job reads the same files in the same split order, so ties rank alike in both
    List<Row> docRows = spark.read().parquet(dir.resolve("corpus").toString()).select("id", "tokens")
        .collectAsList();
    TokenRows q = new TokenRows("query");
    queryRows.forEach(r -> q.add(r.get(0), r.get(1), null));
    TokenRows d = new TokenRows("document");
    docRows.forEach(r -> d.add(r.get(0), r.get(1), null));
    TopK want;
    try (MaxSim maxSim = MaxSim.create()) {
      want = maxSim.topK(q.pack(DIM).toBatch(), d.pack(DIM).toBatch(), k);
    }
    Map<String, Entry> trec = new HashMap<>();
    for (String line : Files.readAllLines(run.resolve("run.trec"))) {
      String[] f = line.split(" ");
      if (f.length != 6 || !f[1].equals("Q0")) {
        System.err.println("compare: run.trec line '" + line + "' is not 'query Q0 doc rank score tag'");
        return 1;
      }
      trec.put(f[0] + " " + f[3], new Entry(f[2], Float.parseFloat(f[4])));
    }
    Map<String, Entry> parquet = new HashMap<>();
    for (Row r : spark.read().parquet(run.resolve("topk").toString()).collectAsList()) {
      parquet.put(r.getAs("query_id") + " " + r.getAs("rank"), new Entry(r.getAs("doc_id"), r.getAs("score")));
    }
    int expected = 0;
    List<String> wrong = new ArrayList<>();
    double maxDiff = 0;
    for (int i = 0; i < queryRows.size(); i++) {
      for (int rank = 1; rank <= want.indices()[i].length; rank++) {
        expected++;
        String key = queryRows.get(i).get(0) + " " + rank;
        Entry one = new Entry((String) docRows.get(want.indices()[i][rank - 1]).get(0),
            want.scores()[i][rank - 1]);
        for (Map.Entry<String, Map<String, Entry>> output : Map.of("run.trec", trec, "topk/", parquet).entrySet()) {
          Entry got = output.getValue().get(key);
          // a swapped pair of documents with equal scores is a tie, ranked either way
          if (got == null || !got.doc().equals(one.doc()) && got.score() != one.score()
              || Math.abs(got.score() - one.score()) > 1e-5 * Math.max(1, Math.abs(one.score()))) {
            wrong.add(output.getKey() + " " + key + ": " + got + ", one call " + one);
          } else {
            maxDiff = Math.max(maxDiff, Math.abs(got.score() - one.score()));
          }
        }
      }
    }
    if (trec.size() != expected || parquet.size() != expected) {
      wrong.add("entries: run.trec " + trec.size() + ", topk/ " + parquet.size() + ", one call " + expected);
    }
    System.out.printf("compare %s: %d queries x top %d over %d documents; run.trec %d and topk/ %d entries, %d"
        + " differ from one MaxSim.topK call (largest score difference %.3g)%n", run, queryRows.size(), k,
        docRows.size(), trec.size(), parquet.size(), wrong.size(), maxDiff);
    wrong.stream().limit(10).forEach(w -> System.out.println("  " + w));
    return wrong.isEmpty() ? 0 : 1;
  }

  private record Entry(String doc, float score) {}
}
