package dev.maxsim4j.spark;

import org.apache.spark.sql.SparkSession;

/** A small local[2] session for one test class: no UI, few shuffle partitions, loopback only. */
final class LocalSpark {
  private LocalSpark() {}

  static SparkSession start() {
    return builder().getOrCreate();
  }

  /** The session's settings, for a test class that adds its own (a serializer) before it starts. */
  static SparkSession.Builder builder() {
    return SparkSession.builder()
        .master("local[2]")
        .appName("maxsim4j-spark-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.sql.warehouse.dir", System.getProperty("java.io.tmpdir") + "/maxsim4j-spark-warehouse");
  }
}
