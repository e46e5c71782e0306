package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link TopKJob#start} as spark-submit runs it: a session of its own, which the job stops. */
class TopKJobStartTest {
  @Test
  void aBadCommandLineFailsBeforeSparkStarts() {
    // Integer.parseInt took a sign, a leading zero and other scripts' digits
    for (String k : new String[] {"0", "+5", "05", "\u0665"}) {
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int status = TopKJob.start(() -> {
        throw new AssertionError("Spark was started for a bad command line");
      }, new String[] {"--queries", "q", "--corpus", "c", "--k", k, "--out", "o"},
          new PrintStream(err, true, StandardCharsets.UTF_8));
      assertEquals(2, status);
      assertEquals("maxsim4j-spark: --k = '" + k + "'; expected an integer >= 1 (usage: --queries Q.parquet --corpus"
          + " CORPUS/ --k K --out OUT/ [--tag TAG] [--mask COLUMN])\n", err.toString(StandardCharsets.UTF_8));
    }
  }

  @Test
  void theFailureIsPrintedAfterSparkStopsWithTheExitStatus(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("out"), "x");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    int status = TopKJob.start(() -> {
      SparkSession spark = LocalSpark.start();
      // stands in for Spark's shutdown log, which would otherwise follow the failure's line
      spark.sparkContext().addSparkListener(new SparkListener() {
        @Override
        public void onApplicationEnd(SparkListenerApplicationEnd end) {
          err.println("Spark stopped with exit code " + end.exitCode().get());
        }
      });
      return spark;
    }, new String[] {"--queries", "q", "--corpus", "c", "--k", "3", "--out", dir.resolve("out").toString()}, err);
    assertEquals(1, status);
    assertEquals("Spark stopped with exit code 1\nmaxsim4j-spark: error: --out " + dir.resolve("out")
        + " is a file; expected a folder to write the run in\n", bytes.toString(StandardCharsets.UTF_8));
    assertFalse(SparkSession.getActiveSession().isDefined() && !SparkSession.active().sparkContext().isStopped());
  }
}
