package dev.maxsim4j.internal.cuda.plan;

import static dev.maxsim4j.internal.cuda.plan.PairLayout.ALL_PAIRS;
import static dev.maxsim4j.internal.cuda.plan.PairLayout.LISTED_PAIRS;
import static org.junit.jupiter.api.Assertions.fail;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Rows just below 2^31 tokens: a hostile tester's finding that the planner counted their tiles, stages and passes
 * as length + tile - 1 in int, which wraps past 2^31 - 128 tokens into a negative count (a single slice of
 * 128-token tiles also needed 2^31 tokens, past an int). Every plan for such rows either covers every token with
 * positive counts, in a grid the driver launches (at most 65,535 rows), or is refused by an IllegalArgumentException
 * naming the length. Runs on the CPU.
 */
class LongRowsPlanTest {
  // near 2^31, and at the grid's 65,535 rows of 64- and 128-token passes
  private static final int[] LENGTHS = {Integer.MAX_VALUE - 72, Integer.MAX_VALUE - 127, Integer.MAX_VALUE,
      65_535 * 64, 65_535 * 64 + 1, 65_535 * 128, 65_535 * 128 + 1};

  private static List<GpuCapabilities> gpus() {
    List<GpuCapabilities> gpus = new ArrayList<>();
    int[][] versions = {{7, 5}, {8, 0}, {8, 9}, {9, 0}, {10, 0}};
    for (int[] v : versions) {
      gpus.add(new GpuCapabilities(v[0], v[1], 132, 227 * 1024, true, (module, entry, threads, shared) -> 2));
    }
    return gpus;
  }

  @Test
  void longDocumentsAndQueriesPlanPositiveCountsOrAreRefusedByName() {
    DType[][] types = {{DType.BFLOAT16, DType.BFLOAT16}, {DType.FLOAT16, DType.FLOAT16},
        {DType.FLOAT32, DType.FLOAT32}, {DType.BFLOAT16, DType.INT8}, {DType.BFLOAT16, DType.FLOAT8_E4M3},
        {DType.BFLOAT16, DType.BINARY}, {DType.BINARY, DType.BINARY}, {DType.INT8, DType.INT8}};
    int[] dims = {1, 8, 16, 32, 64, 128, 256};
    int[][] counts = {{1, 1}, {1, 4}, {2, 100}, {16, 2000}, {9, 1}};
    List<String> failures = new ArrayList<>();
    for (GpuCapabilities gpu : gpus()) {
      for (DType[] t : types) {
        for (int dim : dims) {
          for (int[] c : counts) {
            for (int length : LENGTHS) {
              for (boolean argmax : new boolean[] {false, true}) {
                check(new ForwardShape(ALL_PAIRS, c[0], c[1], 0, c[0] * c[1], 32, length, dim, t[0], t[1], argmax,
                    false), gpu, failures);
                check(new ForwardShape(ALL_PAIRS, c[0], c[1], 0, c[0] * c[1], length, 300, dim, t[0], t[1], argmax,
                    false), gpu, failures);
                check(new ForwardShape(LISTED_PAIRS, c[0] * c[1], 1, 0, c[0] * c[1], 100, length, dim, t[0], t[1],
                    argmax, false), gpu, failures);
              }
            }
          }
        }
      }
    }
    if (!failures.isEmpty()) {
      fail(failures.size() + " plans wrapped, first: " + failures.subList(0, Math.min(5, failures.size())));
    }
  }

  /** Each family called directly, as the rule table may reach it for other shapes. */
  @Test
  void everyFamilyCoversLongRows() {
    GpuCapabilities h200 = gpus().get(3);
    List<String> failures = new ArrayList<>();
    for (int length : LENGTHS) {
      for (int pairs : new int[] {1, 133, 100_000}) {
        ForwardShape longDocuments = new ForwardShape(ALL_PAIRS, 1, pairs, 0, pairs, 300, length, 64, DType.BFLOAT16,
            DType.BFLOAT16, false, false);
        ForwardShape longQueries = new ForwardShape(ALL_PAIRS, 1, pairs, 0, pairs, length, 300, 64, DType.BFLOAT16,
            DType.BFLOAT16, false, false);
        for (ForwardShape s : List.of(longDocuments, longQueries)) {
          verify(s, () -> FamilyPlans.wgmmaWs(s, h200, 1, false), failures);
          verify(s, () -> FamilyPlans.wgmmaWs(s, h200, 2, true), failures);
          verify(s, () -> FamilyPlans.wgmma(s, h200, true), failures);
          verify(s, () -> FamilyPlans.block(s, h200, false), failures);
          verify(s, () -> FamilyPlans.block(s, h200, true), failures);
        }
      }
      for (long blocks : new long[] {1, 4, 263}) { // below 2 blocks per SM: the split's own range
        ForwardPlan.Split split = ForwardPlan.splitFor(blocks, length, h200);
        if (split.slices() > 1 && (split.sliceTokens() <= 0 || (long) split.slices() * split.sliceTokens() < length)) {
          failures.add("splitFor(" + blocks + ", " + length + ") = " + split);
        }
      }
    }
    if (!failures.isEmpty()) {
      fail(failures.size() + " plans wrapped, first: " + failures.subList(0, Math.min(5, failures.size())));
    }
  }

  private static void check(ForwardShape s, GpuCapabilities gpu, List<String> failures) {
    verify(s, () -> ForwardPlan.plan(s, gpu), failures);
  }

  private static void verify(ForwardShape s, java.util.function.Supplier<Plan> planner, List<String> failures) {
    Plan p;
    try {
      p = planner.get();
    } catch (IllegalArgumentException e) {
      if (!e.getMessage().contains(Integer.toString(Math.max(s.maxDocumentLength(), s.maxQueryLength())))) {
        failures.add(s + ": refused without naming the length: " + e.getMessage());
      }
      return;
    } catch (IllegalStateException e) {
      return; // the rule table's own refusals (an int16 argmax where no kernel has one)
    } catch (RuntimeException e) {
      failures.add(s + ": " + e);
      return;
    }
    ForwardPlan.Split split = p.split();
    boolean ok = p.blocks() >= 1 && p.gridY() >= 1 && p.gridY() <= GpuCapabilities.MAX_GRID_Y
        && p.queryPasses() >= 1 && split.slices() >= 1 && split.passes() >= 1
        && (split.slices() == 1 || split.sliceTokens() > 0
            && (long) split.slices() * split.sliceTokens() >= s.maxDocumentLength())
        && (p.family() != ForwardPlan.Family.WGMMA_WS || split.equals(ForwardPlan.Split.NONE)
            || split.sliceTokens() > 0);
    if (!ok) {
      failures.add(s + " -> " + p);
    }
  }
}
