package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;

/** A table's path pattern matches as Hadoop's globber reads it: a component at a time, escapes and all. */
class TopKJobGlobTest {
  private static boolean matches(String pattern, String path) {
    return TopKJob.matches(new Path(pattern), new Path(path));
  }

  @Test
  void aPatternMatchesAComponentAtATime() {
    assertEquals(true, matches("file:/d/c/*", "file:/d/c/run"));
    assertEquals(true, matches("file:/d/{corpus,other}", "file:/d/corpus"));
    assertEquals(true, matches("file:/d/corpus\\-1.parquet", "file:/d/corpus-1.parquet"));
    // a star never spans a slash: a run beside the parts it matches is no part of the table
    assertEquals(false, matches("file:/d/data/*.parquet", "file:/d/data/runs"));
    assertEquals(false, matches("file:/d/data/*", "file:/d/data/runs/first.parquet"));
    assertEquals(false, matches("hdfs://h/d/c/*", "file:/d/c/run"));
    assertEquals(false, matches("file:/d/x.parquet[", "file:/d/x.parquet["), "no valid glob: the read names it");
  }
}
