package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ids that a TREC reader would split (any Unicode blank) or misread (a control character, null) are refused. */
class HostileTrecRunTest extends WithLocalSpark {
  private static final StructType RUN = new StructType().add("query_id", DataTypes.StringType)
      .add("doc_id", DataTypes.StringType).add("rank", DataTypes.IntegerType).add("score", DataTypes.FloatType);

  @Test
  void idsWithUnicodeBlanksControlCharactersOrNullAreRefusedAndNoFileIsLeft(@TempDir Path dir) {
    // Python's str.split() (ir_measures, pytrec_eval loaders) splits on U+00A0, U+0085, U+2007 and U+202F
    for (String id : Arrays.asList("a\u00a0b", "a\u0085b", "a\u2007b", "a\u202fb", "a\u3000b", "a\u0000b", null)) {
      Dataset<Row> run = spark.createDataFrame(List.of(RowFactory.create("q1", "d0", 1, 2f),
          RowFactory.create("q1", id, 2, 1f)), RUN);
      Path file = dir.resolve("run.trec");
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TrecRun.write(run, file.toString(), "t"), String.valueOf(id));
      assertTrue(e.getMessage().startsWith("document id"), e.getMessage());
      assertFalse(Files.exists(file), String.valueOf(id));
    }
  }

  @Test
  void aTagWithAUnicodeBlankIsAUsageError() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = TopKJob.start(() -> {
      throw new AssertionError("the session must not start");
    }, new String[] {"--queries", "q", "--corpus", "c", "--k", "5", "--out", "o", "--tag", "run\u00a01"},
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(2, status, err.toString(StandardCharsets.UTF_8));
  }
}
