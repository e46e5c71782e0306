package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * With {@code spark.kryo.registrationRequired=true}, where Kryo refuses any class not registered, the jobs run once
 * {@link MaxSimKryoRegistrator} is the registrator: every class they ship is in it.
 */
class KryoRegistrationTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = LocalSpark.builder()
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.kryo.registrationRequired", "true")
        .config("spark.kryo.registrator", MaxSimKryoRegistrator.class.getName())
        // the test's own rows, which it parallelizes: a user registers their data's classes
        .config("spark.kryo.classesToRegister", "org.apache.spark.sql.catalyst.expressions.GenericRow,[[F,[F,[Z,"
            + "[Ljava.lang.Object;")
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void topKAndScannedPairsRunWithEveryClassRegistered() {
    assertEquals("true", spark.conf().get("spark.kryo.registrationRequired"));
    HostileKryoTest.topKAndScannedPairsMatchTheReference(spark);
  }
}
