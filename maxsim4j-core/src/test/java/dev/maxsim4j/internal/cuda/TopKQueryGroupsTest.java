package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Tokens;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * More queries than a CUDA grid has rows (65,535) go to the device top-k in groups that fit, and every query's
 * result comes back in its place. Runs on the CPU.
 */
class TopKQueryGroupsTest {
  /** {@code n} queries of one token each, d = 1, token {@code i} holding the value {@code i}. */
  private static Tokens queries(int n) {
    float[] values = new float[n];
    int[] start = new int[n];
    int[] length = new int[n];
    for (int i = 0; i < n; i++) {
      values[i] = i;
      start[i] = i;
      length[i] = 1;
    }
    return new Tokens(DType.FLOAT32, 1, 1, start, length, n, null, values, null, null);
  }

  /** A selection that answers each query of a group with its own token value, and records the group sizes. */
  private static TopKResult echo(Tokens group, List<Integer> sizes) {
    sizes.add(group.rows);
    float[][] scores = new float[group.rows][];
    int[][] indices = new int[group.rows][];
    for (int i = 0; i < group.rows; i++) {
      scores[i] = new float[] {group.element(group.rowStart[i], 0)};
      indices[i] = new int[] {(int) scores[i][0]};
    }
    return new TopKResult(scores, indices);
  }

  @Test
  void moreQueriesThanAGridHasRowsAreSelectedInGroupsAndComeBackInOrder() {
    int n = 2 * TopKQueryGroups.MAX_QUERIES + 70;
    List<Integer> sizes = new ArrayList<>();
    TopKResult r = TopKQueryGroups.select(queries(n), TopKQueryGroups.MAX_QUERIES, g -> echo(g, sizes));
    assertEquals(List.of(65535, 65535, 70), sizes);
    assertEquals(n, r.scores().length);
    for (int i = 0; i < n; i++) {
      assertEquals(i, r.scores()[i][0], "query " + i);
      assertEquals(i, r.indices()[i][0], "query " + i);
    }
  }

  @Test
  void queriesThatFitOneGridAreOneCallOnTheBatchItself() {
    Tokens q = queries(TopKQueryGroups.MAX_QUERIES);
    List<Tokens> seen = new ArrayList<>();
    TopKQueryGroups.select(q, TopKQueryGroups.MAX_QUERIES, g -> {
      seen.add(g);
      return echo(g, new ArrayList<>());
    });
    assertEquals(1, seen.size());
    assertSame(q, seen.get(0), "no copy of a batch that fits");
  }

  @Test
  void theGroupsCoverEveryRowWithoutWrappingNearTheIntLimit() {
    List<Integer> sizes = new ArrayList<>();
    TopKQueryGroups.select(queries(7), Integer.MAX_VALUE - 1, g -> echo(g, sizes));
    assertEquals(List.of(7), sizes);
    sizes.clear();
    TopKQueryGroups.select(queries(7), 3, g -> echo(g, sizes));
    assertEquals(List.of(3, 3, 1), sizes);
    assertTrue(sizes.stream().allMatch(s -> s <= 3));
  }
}
