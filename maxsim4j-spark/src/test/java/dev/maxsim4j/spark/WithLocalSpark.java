package dev.maxsim4j.spark;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Tests that share one {@link LocalSpark} session: started before the class's tests, stopped after them. */
abstract class WithLocalSpark {
  static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = LocalSpark.start();
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }
}
