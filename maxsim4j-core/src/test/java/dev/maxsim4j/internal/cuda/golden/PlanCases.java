package dev.maxsim4j.internal.cuda.golden;

import dev.maxsim4j.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The forward launches whose kernel choice is pinned: a boundary grid around every rule's thresholds on
 * sm_75, sm_80 and sm_90, and a seeded sample of the whole space (operations, shapes, dtypes, devices).
 */
public final class PlanCases {
  private PlanCases() {}

  /** A device as the forward's rules see it. */
  public record Gpu(String name, int major, int minor, int multiprocessors, int sharedMemoryPerBlockOptin,
      boolean tensorMaps) {}

  /** Inference (all pairs, candidates), the training forward (all pairs, candidates), a top-k block. */
  public enum Op { SCORE_ALL, SCORE_CANDIDATES, TRAIN_ALL, TRAIN_CANDIDATES, TOPK }

  /** One forward launch: its device, operation and shape. */
  public record Case(Gpu gpu, Op op, int queries, int documents, int queryLength, int documentLength, int dim,
      DType queryType, DType documentType) {

    public int mode() {
      return op == Op.SCORE_CANDIDATES || op == Op.TRAIN_CANDIDATES ? 1 : 0;
    }

    public boolean training() {
      return op == Op.TRAIN_ALL || op == Op.TRAIN_CANDIDATES;
    }

    /** Documents per query in this launch (candidates: 40 at most; top-k: one block of scores). */
    public int perQuery() {
      return switch (op) {
        case SCORE_CANDIDATES, TRAIN_CANDIDATES -> Math.min(documents, 40);
        case TOPK -> (int) Math.min(documents, (1L << 22) / queries);
        default -> documents;
      };
    }

    /** The first document of the launch: a top-k's second block where there is one. */
    public int docOffset() {
      return op == Op.TOPK && documents > perQuery() ? perQuery() : 0;
    }

    public int pairs() {
      return Math.multiplyExact(queries, perQuery());
    }

    /** Document rows the launch reads: candidates have one per pair. */
    public int documentRows() {
      return mode() == 1 ? pairs() : documents;
    }

    @Override
    public String toString() {
      return gpu.name + " " + op + " " + queries + "x" + documents + "x" + queryLength + "x" + documentLength + "x"
          + dim + " " + queryType + "/" + documentType;
    }
  }

  static final Gpu SM75 = new Gpu("sm75", 7, 5, 40, 65536, false);
  static final Gpu SM80 = new Gpu("sm80", 8, 0, 108, 166912, false);
  static final Gpu SM86 = new Gpu("sm86", 8, 6, 84, 101376, false);
  static final Gpu SM89 = new Gpu("sm89", 8, 9, 128, 101376, false);
  static final Gpu SM90 = new Gpu("sm90", 9, 0, 132, 232448, true);
  static final Gpu SM90_114 = new Gpu("sm90-114", 9, 0, 114, 232448, true);
  static final Gpu SM90_NO_MAPS = new Gpu("sm90-nomaps", 9, 0, 132, 232448, false);
  static final Gpu SM100 = new Gpu("sm100", 10, 0, 148, 232448, true);
  static final Gpu[] GPUS = {SM75, SM80, SM86, SM89, SM90, SM90_114, SM90_NO_MAPS, SM100};

  private static final DType B = DType.BFLOAT16;
  private static final DType H = DType.FLOAT16;
  private static final DType F = DType.FLOAT32;
  private static final DType[][] TYPES = {{B, B}, {H, H}, {F, F}, {H, B}, {F, H}, {B, F}};
  private static final int[] DIMS = {8, 32, 48, 64, 96, 100, 128, 136, 256, 512, 1024};
  private static final int[] QUERY_LENGTHS = {1, 8, 31, 32, 33, 64, 65, 128, 129, 256, 300, 1024};
  private static final int[] DOCUMENT_LENGTHS = {0, 1, 64, 300, 1023, 1024, 2048, 8192, 32767, 32768};
  private static final int[][] COUNTS = {{1, 1}, {1, 7}, {1, 1000}, {1, 10000}, {2, 16}, {2, 10000}, {3, 100},
      {4, 8}, {4, 33}, {5, 1000}, {8, 1000}, {16, 32}, {32, 32}, {128, 128}, {256, 256}, {512, 1000},
      {1, 100000}, {4, 2000000}};

  public static List<Case> all() {
    List<Case> cases = new ArrayList<>();
    int[][] grid = {{1, 1000, 300}, {128, 128, 300}, {16, 32, 8192}, {4, 8, 32768}, {2, 16, 8192}, {8, 1000, 300}};
    for (Gpu gpu : new Gpu[] {SM75, SM80, SM90}) {
      for (DType t : new DType[] {B, H, F}) {
        for (int dim : new int[] {64, 128, 256}) {
          for (int lq : new int[] {32, 33, 64, 65, 128, 129}) {
            for (int[] n : grid) {
              for (Op op : new Op[] {Op.SCORE_ALL, Op.TRAIN_ALL}) {
                cases.add(new Case(gpu, op, n[0], n[1], lq, n[2], dim, t, t));
              }
            }
          }
        }
      }
    }
    Random r = new Random(19);
    Op[] ops = Op.values();
    for (int i = 0; i < 2500; i++) {
      DType[] t = TYPES[r.nextInt(3) == 0 ? r.nextInt(TYPES.length) : r.nextInt(2)];
      int[] n = COUNTS[r.nextInt(COUNTS.length)];
      cases.add(new Case(GPUS[r.nextInt(GPUS.length)], ops[r.nextInt(ops.length)], n[0], n[1],
          QUERY_LENGTHS[r.nextInt(QUERY_LENGTHS.length)], DOCUMENT_LENGTHS[r.nextInt(DOCUMENT_LENGTHS.length)],
          DIMS[r.nextInt(DIMS.length)], t[0], t[1]));
    }
    return cases;
  }
}
