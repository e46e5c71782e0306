package dev.maxsim4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/** The merge of one query's partition top-ks, without a cluster: positions of huge partitions, ties, order. */
class PartitionMergeTest {
  private static DistributedTopK.PartTop part(int partition, float[] scores, int[] positions, String... ids) {
    return new DistributedTopK.PartTop(partition, scores, positions, ids);
  }

  @Test
  void partitionsOfBillionsOfRowsMergeWithTiesInCorpusOrder() {
    int late = Integer.MAX_VALUE - 5;
    // given out of partition order; each partition's best entries sit past 2^30 positions
    List<DistributedTopK.PartTop> parts = List.of(
        part(2, new float[] {5, 1}, new int[] {late, 7}, "c-late", "c-7"),
        part(0, new float[] {5, 5, 4}, new int[] {3, late, 1}, "a-3", "a-late", "a-1"),
        part(1, new float[] {5}, new int[] {late - 1}, "b"),
        part(3, new float[0], new int[0]));
    List<Row> rows = DistributedTopK.merge("q", parts, 5);
    String[] expected = {"a-3", "a-late", "b", "c-late", "a-1"};
    assertEquals(expected.length, rows.size());
    for (int r = 0; r < expected.length; r++) {
      assertEquals(expected[r], rows.get(r).get(1), "rank " + (r + 1));
      assertEquals(r + 1, rows.get(r).getInt(2));
    }
    assertEquals(4f, rows.get(4).getFloat(3));
  }

  @Test
  void aPartOfNoEntryBetweenOthersTakesNoRank() {
    // its offset would equal the next part's, and that part's entries be looked up in it
    List<DistributedTopK.PartTop> parts = List.of(
        part(0, new float[] {5, 4}, new int[] {0, 1}, "a0", "a1"),
        part(1, new float[0], new int[0]),
        part(2, new float[] {4.5f}, new int[] {0}, "c0"));
    List<Row> rows = DistributedTopK.merge("q", parts, 3);
    assertEquals(List.of("a0", "c0", "a1"), rows.stream().map(r -> r.get(1)).toList());
  }

  @Test
  void anIdTwiceInTheTopIsNamed() {
    List<DistributedTopK.PartTop> parts = List.of(
        part(0, new float[] {3}, new int[] {Integer.MAX_VALUE - 1}, "x"),
        part(1, new float[] {2}, new int[] {Integer.MAX_VALUE - 1}, "x"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> DistributedTopK.merge("q", parts, 2));
    assertEquals(true, e.getMessage().contains("document id 'x' appears more than once"), e.getMessage());
  }
}
