package dev.maxsim4j.internal.cuda;

import static dev.maxsim4j.internal.cuda.plan.PairLayout.ALL_PAIRS;
import static dev.maxsim4j.internal.cuda.plan.PairLayout.LISTED_PAIRS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.cuda.ForwardLaunches.Operands;
import dev.maxsim4j.internal.cuda.plan.FamilyPlans;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import dev.maxsim4j.internal.cuda.plan.KernelGeometry;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Rules 18 to 20 of the forward plan: launches with a compressed side take a tensor-core kernel for compressed
 * documents where its types and d allow (inference; wgmma on sm_90, mma.sync on sm_80-89; on sm_90 the bulk-copy
 * kernel for short float queries against many 8-bit documents or any 1-bit ones of d = 128), int8 on both sides
 * the wgmma kernel on the integer tensor cores (sm_90), else the scaled FFMA kernel, whose entry exists for
 * every pair of types. Runs on the CPU.
 */
class CompressedPlanTest {
  private static final GpuCapabilities H200 = gpu(9, 0);

  private static GpuCapabilities gpu(int major, int minor) {
    return new GpuCapabilities(major, minor, 132, 227 * 1024, true, (module, entry, threads, shared) -> 4);
  }

  private static ForwardShape shape(int queries, int documents, int lq, int dim, DType qt, DType dt, boolean argmax) {
    return new ForwardShape(ALL_PAIRS, queries, documents, 0, queries * documents, lq, 300, dim, qt, dt, argmax, false);
  }

  private static ForwardShape shape(int queries, int documents, int lq, int ld, int dim, DType qt, DType dt) {
    return new ForwardShape(ALL_PAIRS, queries, documents, 0, queries * documents, lq, ld, dim, qt, dt, false, false);
  }

  @Test
  void onSm90OneBitDocumentsCompressedQueriesAndLongDocumentsTakeTheExpandingWgmmaKernel() {
    Plan p = ForwardPlan.plan(shape(8, 2000, 32, 300, 128, DType.BFLOAT16, DType.BINARY), H200);
    assertEquals(Family.QUANT_WGMMA, p.family());
    assertEquals("maxsim_forward_quant_wgmma_g128_c1_bf16_b1", p.entry()); // 2 groups of 4 queries x 2000
    assertEquals(132 * 4, p.blocks()); // the blocks the GPU holds (4 per SM on this test's stand-in GPU)
    // 128 rows x 128 dims of bf16; 8 stages of 2 rows x 128 threads x (a 4-byte piece + a scale); the
    // epilogue's maxima, the rows' scales and validity, the slot sums
    assertEquals(128 * 128 * 2 + 8 * (2 * 128 * (4 + 4)) + (10 * 128 + 4) * 4, p.sharedBytes());
    assertEquals(true, p.optIn());
    assertEquals("maxsim_forward_quant_wgmma_p128_c1_f16_b1", // 33 to 128 query tokens: one pass of 128 rows
        ForwardPlan.plan(shape(1, 1000, 100, 300, 128, DType.FLOAT16, DType.BINARY), H200).entry());
    assertEquals("maxsim_forward_quant_wgmma_g128_c1_bf16_b1", // groups against very long documents
        ForwardPlan.plan(shape(16, 32, 32, 8192, 256, DType.BFLOAT16, DType.BINARY), H200).entry());
    assertEquals("maxsim_forward_quant_wgmma_p32_c1_b1_b1", // compressed queries: where only wgmma runs
        ForwardPlan.plan(shape(1, 100, 32, 300, 256, DType.BINARY, DType.BINARY), H200).entry());
    assertEquals("maxsim_forward_quant_wgmma_p32_c2_bf16_s8", // d = 1024, 128 rows: rule 19's tiles do not fit
        ForwardPlan.plan(shape(1, 500, 128, 300, 1024, DType.BFLOAT16, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_quant_wgmma_p32_c2_s8_e4m3", // two compressed types, d over 128
        ForwardPlan.plan(shape(1, 10, 32, 300, 256, DType.INT8, DType.FLOAT8_E4M3), H200).entry());
  }

  @Test
  void shortFloatQueriesAgainst8BitDocumentsWiderThan128TakeTheTensorMapEntries() {
    Plan p = ForwardPlan.plan(shape(1, 1000, 32, 300, 512, DType.BFLOAT16, DType.INT8), H200);
    assertEquals(Family.QUANT_TMA, p.family());
    assertEquals("maxsim_forward_quant_tma_w4_bf16_s8", p.entry());
    assertTrue(FamilyPlans.readsTensorMap(p));
    assertEquals(KernelModule.FORWARD_QUANT_TMA_WIDE, p.module());
    // the query's 32 rows (8 chunks of 64 dims, 128 bytes a row each), then as the bulk-copy entries
    assertEquals(8 * 32 * 128 + 40 * 1024 + 16 * (32 + 16) + 10 * 32 * 4, p.sharedBytes());
    assertEquals("maxsim_forward_quant_tma_w8_f16_e4m3",
        ForwardPlan.plan(shape(1, 500, 32, 300, 1024, DType.FLOAT16, DType.FLOAT8_E4M3), H200).entry());
    assertEquals("maxsim_forward_quant_tma_w2_bf16_s8", // 144 dims: two slices, the second mostly past d
        ForwardPlan.plan(shape(1, 100, 8, 300, 144, DType.BFLOAT16, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_quant_tma_w4_bf16_e4m3", // 320 dims: three slices of the four
        ForwardPlan.plan(shape(1, 100, 8, 300, 320, DType.BFLOAT16, DType.FLOAT8_E4M3), H200).entry());
    assertFalse(FamilyPlans.readsTensorMap(ForwardPlan.plan(shape(1, 1000, 32, 300, 128, DType.BFLOAT16,
        DType.INT8), H200)), "d <= 128: bulk copies");
    // longer queries and query groups stay on rule 19's kernel; without tensor maps, so do short queries
    assertEquals(Family.WGMMA, ForwardPlan.plan(shape(1, 1000, 64, 300, 512, DType.BFLOAT16, DType.INT8), H200)
        .family());
    GpuCapabilities noMaps = new GpuCapabilities(9, 0, 132, 227 * 1024, false, (module, entry, threads, shared) -> 4);
    assertEquals(Family.WGMMA, ForwardPlan.plan(shape(1, 1000, 32, 300, 512, DType.BFLOAT16, DType.INT8), noMaps)
        .family());
  }

  @Test
  void shortFloatQueriesAgainstMany8BitDocumentsTakeTheBulkCopyKernel() {
    Plan p = ForwardPlan.plan(shape(1, 10000, 32, 128, DType.BFLOAT16, DType.INT8, false), H200);
    assertEquals(Family.QUANT_TMA, p.family());
    assertEquals("maxsim_forward_quant_tma_c2_bf16_s8", p.entry());
    assertEquals(132 * 4, p.blocks()); // the blocks the GPU holds (4 per SM on this test's stand-in GPU)
    assertEquals(KernelGeometry.QT_THREADS, p.threads());
    // the query's 32 rows (2 chunks of 128 bytes), the 40 KB ring, 16 slots' tiles and barriers, the epilogue's
    // maxima, the rows' weights and (1-bit queries) scales
    assertEquals(2 * 32 * 128 + 40 * 1024 + 16 * (32 + 16) + 10 * 32 * 4, p.sharedBytes());
    assertEquals(true, p.optIn());
    assertEquals("maxsim_forward_quant_tma_c1k3_f16_e4m3", // 8-bit rows of 48 dims: three k-steps
        ForwardPlan.plan(shape(1, 4000, 32, 2048, 48, DType.FLOAT16, DType.FLOAT8_E4M3), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1k2_bf16_s8",
        ForwardPlan.plan(shape(1, 4000, 32, 300, 32, DType.BFLOAT16, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1k1_bf16_s8",
        ForwardPlan.plan(shape(1, 4000, 32, 300, 16, DType.BFLOAT16, DType.INT8), H200).entry());
    // 8-bit rows of 16-48 dims: this kernel at any size, candidates and pairwise too; query groups take rule 19's
    // tiles, which group the dims into k-steps alike
    for (ForwardShape small : new ForwardShape[] {shape(1, 1, 32, 40, 48, DType.BFLOAT16, DType.INT8),
        new ForwardShape(LISTED_PAIRS, 64, 3, 0, 192, 32, 100, 48, DType.BFLOAT16, DType.INT8, false, false),
        new ForwardShape(LISTED_PAIRS, 5, 1, 0, 5, 9, 30, 32, DType.FLOAT16, DType.FLOAT8_E4M3, false, false)}) {
      assertEquals(Family.QUANT_TMA, ForwardPlan.plan(small, H200).family(), small.toString());
    }
    assertEquals(Family.WGMMA_GROUPS,
        ForwardPlan.plan(shape(64, 192, 32, 100, 48, DType.BFLOAT16, DType.INT8), H200).family());
    // wider rows: query groups expanded first (rule 21); candidates of 2 or more a query, one query against one
    // document and pairwise launches of a pair per resident block on this kernel; pairwise launches of more pairs
    // and few tiles on rule 18's mma.sync kernel. Those two interleave the dims into k-steps where the others take
    // them in order (kernel-selection.md, rule 20).
    assertEquals(Family.WGMMA_WS_EXPANDED,
        ForwardPlan.plan(shape(64, 192, 32, 100, 128, DType.FLOAT16, DType.FLOAT8_E4M3), H200).family());
    for (ForwardShape taken : new ForwardShape[] {
        new ForwardShape(LISTED_PAIRS, 64, 2, 0, 128, 32, 100, 128, DType.BFLOAT16, DType.INT8, false, false),
        shape(1, 1, 32, 300, 64, DType.BFLOAT16, DType.INT8),
        new ForwardShape(LISTED_PAIRS, 528, 1, 0, 528, 32, 100, 80, DType.FLOAT16, DType.FLOAT8_E4M3, false, false)}) {
      assertEquals(Family.QUANT_TMA, ForwardPlan.plan(taken, H200).family(), taken.toString());
    }
    assertEquals(Family.QUANT, ForwardPlan.plan(new ForwardShape(LISTED_PAIRS, 1188, 1, 0, 1188, 20, 100, 128,
        DType.BFLOAT16, DType.INT8, false, false), H200).family());
    assertEquals("maxsim_forward_quant_tma_c2_bf16_s8", // pairwise: 9 tiles per resident block
        ForwardPlan.plan(new ForwardShape(LISTED_PAIRS, 1188, 1, 0, 1188, 20, 256, 112, DType.BFLOAT16, DType.INT8,
            false, false), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c2_bf16_s8", // one query, however few documents it has from 4
        ForwardPlan.plan(shape(1, 4, 32, 128, DType.BFLOAT16, DType.INT8, false), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c2_bf16_s8",
        ForwardPlan.plan(shape(1, 800, 32, 128, DType.BFLOAT16, DType.INT8, false), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1_f16_e4m3",
        ForwardPlan.plan(shape(1, 1000, 32, 300, 64, DType.FLOAT16, DType.FLOAT8_E4M3), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c2_bf16_b1", // 1-bit documents at d = 128: 16 bytes a token
        ForwardPlan.plan(shape(1, 10000, 32, 300, 128, DType.BFLOAT16, DType.BINARY), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c2_f16_b1", // pairwise, and under 9 tiles per resident block
        ForwardPlan.plan(new ForwardShape(LISTED_PAIRS, 100, 1, 0, 100, 20, 256, 128, DType.FLOAT16, DType.BINARY,
            false, false), H200).entry());
    // 1-bit tokens of fewer than 16 bytes (any d below 121), long documents among them: the narrow entries, rows
    // read as 64 dims up to d = 64
    for (int d : new int[] {1, 33, 48, 64, 65, 96, 120}) {
      assertEquals("maxsim_forward_quant_tma_c" + (d <= 64 ? 1 : 2) + "_bf16_b1_narrow",
          ForwardPlan.plan(shape(1, 4000, 32, 2048, d, DType.BFLOAT16, DType.BINARY), H200).entry(), "d = " + d);
    }
    assertEquals("maxsim_forward_quant_tma_c2_f16_b1",
        ForwardPlan.plan(shape(1, 10000, 32, 300, 121, DType.FLOAT16, DType.BINARY), H200).entry());
    // several short queries at a d rule 18's wgmma groups do not take (not a multiple of 32)
    assertEquals("maxsim_forward_quant_tma_c1_bf16_b1_narrow",
        ForwardPlan.plan(shape(8, 2000, 32, 300, 48, DType.BFLOAT16, DType.BINARY), H200).entry());
    // 1-bit and 8-bit queries against documents of their type: +-1 rows, int8 rows of 64-128 dims as stored in B,
    // narrower ones as bf16, e4m3 ones as fp16, each dot product times the pair's scale product as rule 18's kernels
    // round it; longer compressed queries, their query groups, d over 128 (rule 19's tiles) and queries of another
    // compressed type stay elsewhere
    assertEquals("maxsim_forward_quant_tma_c2_b1_b1",
        ForwardPlan.plan(shape(1, 10000, 32, 300, 128, DType.BINARY, DType.BINARY), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1_b1_b1_narrow",
        ForwardPlan.plan(shape(1, 4000, 32, 2048, 48, DType.BINARY, DType.BINARY), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c2_b1_b1_narrow",
        ForwardPlan.plan(shape(1, 1000, 32, 300, 96, DType.BINARY, DType.BINARY), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c2_s8_s8",
        ForwardPlan.plan(shape(1, 10000, 32, 300, 128, DType.INT8, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1_s8_s8",
        ForwardPlan.plan(shape(1, 10000, 32, 300, 64, DType.INT8, DType.INT8), H200).entry());
    assertEquals(Family.WGMMA, ForwardPlan.plan(shape(1, 1000, 32, 300, 512, DType.INT8, DType.INT8), H200).family());
    assertEquals("maxsim_forward_quant_tma_c2_e4m3_e4m3",
        ForwardPlan.plan(shape(1, 10000, 32, 300, 128, DType.FLOAT8_E4M3, DType.FLOAT8_E4M3), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1_e4m3_e4m3",
        ForwardPlan.plan(shape(1, 10000, 32, 300, 64, DType.FLOAT8_E4M3, DType.FLOAT8_E4M3), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1k3_e4m3_e4m3",
        ForwardPlan.plan(shape(1, 4000, 32, 2048, 48, DType.FLOAT8_E4M3, DType.FLOAT8_E4M3), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1k3_s8_s8",
        ForwardPlan.plan(shape(1, 4000, 32, 2048, 48, DType.INT8, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1k2_s8_s8",
        ForwardPlan.plan(shape(1, 10000, 32, 300, 32, DType.INT8, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_quant_tma_c1k1_s8_s8", // 16 dims, one query against 3 documents: any size
        ForwardPlan.plan(shape(1, 3, 32, 300, 16, DType.INT8, DType.INT8), H200).entry());
    for (ForwardShape s : List.of(shape(1, 10000, 33, 300, 128, DType.BINARY, DType.BINARY),
        shape(8, 2000, 32, 300, 128, DType.BINARY, DType.BINARY), shape(1, 10000, 32, 300, 256, DType.BINARY,
            DType.BINARY), shape(1, 10000, 32, 300, 128, DType.INT8, DType.BINARY),
        shape(1, 10000, 32, 300, 128, DType.BINARY, DType.INT8),
        shape(1, 10000, 32, 300, 128, DType.INT8, DType.FLOAT8_E4M3),
        shape(1, 1000, 32, 300, 256, DType.FLOAT8_E4M3, DType.FLOAT8_E4M3),
        shape(8, 2000, 32, 300, 48, DType.INT8, DType.INT8),
        shape(1, 10000, 32, 300, 128, DType.FLOAT8_E4M3, DType.INT8), shape(1, 10000, 33, 300, 128, DType.INT8,
            DType.INT8), shape(8, 2000, 32, 300, 128, DType.INT8, DType.INT8))) {
      assertNotEquals(Family.QUANT_TMA, ForwardPlan.plan(s, H200).family(), s.toString());
    }
    // where it does not run: query groups (rule 19; rule 18's for 1-bit documents), 33 query tokens, d not a
    // multiple of 16 (1-bit: over 128), before sm_90, one document per query (pairwise) with more pairs
    // than resident blocks under 9 tiles per resident block
    assertEquals(Family.WGMMA_GROUPS,
        ForwardPlan.plan(shape(8, 2000, 32, 300, 128, DType.BFLOAT16, DType.INT8), H200).family());
    for (ForwardShape s : List.of(shape(1, 10000, 33, 300, 128, DType.BFLOAT16, DType.INT8),
        shape(1, 10000, 32, 300, 40, DType.BFLOAT16,
            DType.INT8), shape(1, 10000, 32, 300, 256, DType.BFLOAT16, DType.BINARY),
        shape(8, 2000, 32, 300, 128, DType.BFLOAT16, DType.BINARY))) {
      assertNotEquals(Family.QUANT_TMA, ForwardPlan.plan(s, H200).family(), s.toString());
    }
    assertEquals(Family.QUANT, ForwardPlan.plan(shape(1, 10000, 32, 128, DType.BFLOAT16, DType.INT8, false),
        gpu(8, 9)).family());
    assertEquals(Family.QUANT, ForwardPlan.plan(new ForwardShape(LISTED_PAIRS, 1187, 1, 0, 1187, 20, 256, 112,
        DType.BFLOAT16, DType.INT8, false, false), H200).family());
    assertEquals(Family.QUANT_TMA, ForwardPlan.plan(shape(1, 2, 32, 128, DType.BFLOAT16, DType.INT8, false), H200)
        .family()); // 2 documents a query: this kernel
  }

  @Test
  void oneShortQueryAgainstShortDocumentsOrFewItemsTakeTheMmaKernel() {
    // 8-bit documents before sm_90 (on it, the bulk-copy kernel of rule 20 takes a query with 2 documents or more)
    Plan p = ForwardPlan.plan(shape(1, 800, 32, 128, DType.BFLOAT16, DType.INT8, false), gpu(8, 9));
    assertEquals(Family.QUANT, p.family());
    assertEquals("maxsim_forward_quant_c2_dyn_bf16_s8", p.entry()); // one query: pairs taken at run time
    assertEquals("maxsim_forward_quant_c1_dyn_f16_e4m3",
        ForwardPlan.plan(shape(1, 800, 32, 300, 64, DType.FLOAT16, DType.FLOAT8_E4M3), gpu(8, 9)).entry());
    assertEquals(200, p.blocks()); // a warp per pair, 4 per block
    assertEquals(KernelGeometry.QUANT_QUEUE_BYTES, p.sharedBytes());
    assertEquals("maxsim_forward_quant_c1_f16_b1", // 2 groups x 100 documents: under 8 stages per block
        ForwardPlan.plan(shape(5, 100, 32, 64, DType.FLOAT16, DType.BINARY, false), H200).entry());
    assertEquals("maxsim_forward_quant_c1_dyn_bf16_b1", // over 128 query tokens: several passes either way
        ForwardPlan.plan(shape(1, 1000, 1024, 1024, 128, DType.BFLOAT16, DType.BINARY), gpu(8, 9)).entry());
    assertEquals("maxsim_forward_quant_c2_s8_e4m3", // compressed queries, both kernels run: mma.sync
        ForwardPlan.plan(shape(8, 2000, 32, 300, 128, DType.INT8, DType.FLOAT8_E4M3), H200).entry());
    assertEquals("maxsim_forward_quant_c1_dyn_b1_b1",
        ForwardPlan.plan(shape(1, 1000, 100, 300, 128, DType.BINARY, DType.BINARY), H200).entry());
    assertEquals("maxsim_forward_quant_c1_bf16_b1", // groups, but under 8 stages per block
        ForwardPlan.plan(shape(32, 32, 32, 300, 128, DType.BFLOAT16, DType.BINARY), H200).entry());
  }

  @Test
  void onSm90Int8AndE4m3DocumentsTakeTheWgmmaKernelsTiles() {
    Plan p = ForwardPlan.plan(shape(1, 1000, 1024, 1024, 128, DType.INT8, DType.INT8), H200);
    assertEquals(Family.WGMMA, p.family());
    assertEquals("maxsim_forward_wgmma_r128_s6_s8", p.entry());
    // the pad, 128 rows of 128 bytes, the ring of 128 tokens x 128 bytes and their 128 scales a stage
    assertEquals(1024 + 128 * 128 + 6 * (128 * 128 + 128 * 4), p.sharedBytes());
    assertEquals(8, p.split().passes()); // 1024 rows in passes of 128, spread over grid.y
    // expanded to halves: 128 rows of 256 bytes (two k-chunks of 64 dims); one pass of the warp-specialized
    // kernel's 256 rows, so no expansion ahead (rule 21)
    Plan e = ForwardPlan.plan(shape(1, 1000, 256, 1024, 128, DType.BFLOAT16, DType.FLOAT8_E4M3), H200);
    assertEquals("maxsim_forward_wgmma_r128_s6_bf16_e4m3", e.entry());
    assertEquals(1024 + 2 * 128 * 128 + 6 * (128 * 128 + 128 * 4), e.sharedBytes());
    assertEquals("maxsim_forward_wgmma_r128_s6_e4m3", // e4m3 on both sides, expanded to fp16
        ForwardPlan.plan(shape(1, 1000, 1024, 1024, 128, DType.FLOAT8_E4M3, DType.FLOAT8_E4M3), H200).entry());
    assertEquals("maxsim_forward_wgmma_r64_s6_s8",
        ForwardPlan.plan(shape(1, 10000, 33, 300, 128, DType.INT8, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_wgmma_g4_s6_s8", // several short queries: query groups
        ForwardPlan.plan(shape(8, 2000, 32, 300, 128, DType.INT8, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_wgmma_g4_s6_bf16_s8",
        ForwardPlan.plan(shape(8, 2000, 32, 300, 128, DType.BFLOAT16, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_wgmma_g4_s6_f16_e4m3",
        ForwardPlan.plan(shape(5, 100, 32, 64, DType.FLOAT16, DType.FLOAT8_E4M3, false), H200).entry());
    assertEquals("maxsim_forward_wgmma_r32_s6_s8", // d over 128: the mma.sync kernel does not run
        ForwardPlan.plan(shape(1, 10, 32, 300, 256, DType.INT8, DType.INT8), H200).entry());
    // one query of at most 32 tokens: rule 20's bulk-copy kernel reads the documents faster
    assertEquals("maxsim_forward_quant_tma_c2_s8_s8",
        ForwardPlan.plan(shape(1, 10000, 32, 300, 128, DType.INT8, DType.INT8), H200).entry());
    // where it does not apply: d not a multiple of 16, the argmax, queries of another compressed type, 1-bit
    // documents, before sm_90
    assertEquals("maxsim_forward_scaled_s8_s8",
        ForwardPlan.plan(shape(1, 100, 32, 300, 40, DType.INT8, DType.INT8), H200).entry());
    assertEquals("maxsim_forward_scaled_s8_s8",
        ForwardPlan.plan(shape(1, 100, 32, 128, DType.INT8, DType.INT8, true), H200).entry());
    assertEquals(Family.QUANT,
        ForwardPlan.plan(shape(8, 2000, 32, 300, 128, DType.INT8, DType.FLOAT8_E4M3), H200).family());
    assertEquals(Family.QUANT_WGMMA,
        ForwardPlan.plan(shape(8, 2000, 32, 300, 128, DType.BFLOAT16, DType.BINARY), H200).family());
    assertEquals(Family.QUANT, ForwardPlan.plan(shape(8, 2000, 32, 300, 128, DType.INT8, DType.INT8), gpu(8, 9))
        .family());
  }

  @Test
  void beforeSm90CompressedDocumentsTakeTheMmaKernel() {
    GpuCapabilities ada = gpu(8, 9);
    Plan p = ForwardPlan.plan(shape(1, 10000, 32, 128, DType.BFLOAT16, DType.INT8, false), ada);
    assertEquals(Family.QUANT, p.family());
    assertEquals("maxsim_forward_quant_c2_dyn_bf16_s8", p.entry());
    assertEquals("maxsim_forward_quant_c1_f16_e4m3",
        ForwardPlan.plan(shape(8, 2000, 32, 300, 64, DType.FLOAT16, DType.FLOAT8_E4M3), ada).entry());
    assertEquals("maxsim_forward_quant_c1_dyn_b1_b1",
        ForwardPlan.plan(shape(1, 1000, 100, 128, DType.BINARY, DType.BINARY, false), ada).entry());
    assertEquals("maxsim_forward_quant_c1_dyn_s8_s8",
        ForwardPlan.plan(shape(1, 4000, 32, 2048, 48, DType.INT8, DType.INT8), ada).entry());
    assertEquals("maxsim_forward_quant_c1_dyn_bf16_s8",
        ForwardPlan.plan(shape(1, 3, 32, 16, DType.BFLOAT16, DType.INT8, false), gpu(8, 0)).entry());
  }

  @Test
  void everyOtherCompressedLaunchTakesTheScaledFfmaKernel() {
    record Case(ForwardShape shape, GpuCapabilities gpu, String entry) {}
    for (Case c : List.of(
        new Case(shape(1, 100, 32, 128, DType.FLOAT32, DType.INT8, false), H200, "maxsim_forward_scaled_f32_s8"),
        new Case(shape(1, 100, 32, 128, DType.INT8, DType.BFLOAT16, false), H200, "maxsim_forward_scaled_s8_bf16"),
        new Case(shape(1, 100, 32, 128, DType.BINARY, DType.FLOAT32, false), H200, "maxsim_forward_scaled_b1_f32"),
        new Case(shape(1, 100, 32, 33, DType.BFLOAT16, DType.INT8, false), H200, "maxsim_forward_scaled_bf16_s8"),
        new Case(shape(1, 100, 32, 144, DType.BFLOAT16, DType.FLOAT8_E4M3, false), gpu(8, 9),
            "maxsim_forward_scaled_bf16_e4m3"),
        new Case(shape(1, 100, 32, 1040, DType.BFLOAT16, DType.INT8, false), H200, "maxsim_forward_scaled_bf16_s8"),
        new Case(shape(1, 100, 32, 144, DType.BFLOAT16, DType.BINARY, false), H200, "maxsim_forward_scaled_bf16_b1"),
        new Case(shape(1, 100, 32, 48, DType.BFLOAT16, DType.BINARY, false), gpu(8, 9), "maxsim_forward_scaled_bf16_b1"),
        new Case(shape(1, 100, 32, 128, DType.BFLOAT16, DType.INT8, true), H200, "maxsim_forward_scaled_bf16_s8"),
        new Case(shape(1, 100, 32, 128, DType.FLOAT16, DType.INT8, false), gpu(7, 5), "maxsim_forward_scaled_f16_s8"))) {
      Plan p = ForwardPlan.plan(c.shape(), c.gpu());
      assertEquals(Family.FFMA_SCALED, p.family(), c.toString());
      assertEquals(c.entry(), p.entry(), c.toString());
      assertEquals(c.shape().pairs(), p.blocks());
    }
  }

  /** bf16 queries with an fp16 copy read it where the rules send them to the bulk-copy kernel with 8-bit documents. */
  @Test
  void bf16QueriesReadTheirFp16CopyOnTheBulkCopyKernelAgainst8BitDocuments() {
    for (DType d : new DType[] {DType.INT8, DType.FLOAT8_E4M3}) {
      ForwardShape s = shape(1, 10000, 32, 128, DType.BFLOAT16, d, false);
      assertTrue(ForwardPlan.halfOperandsPay(s, ForwardPlan.plan(s, H200)), s.toString());
    }
    // 1-bit documents, fp16 queries, query groups (rule 19), before sm_90 (rule 18): as they are
    for (ForwardShape s : List.of(shape(1, 10000, 32, 300, 128, DType.BFLOAT16, DType.BINARY),
        shape(1, 10000, 32, 300, 128, DType.FLOAT16, DType.INT8),
        shape(8, 2000, 32, 300, 128, DType.BFLOAT16, DType.INT8))) {
      assertFalse(ForwardPlan.halfOperandsPay(s, ForwardPlan.plan(s, H200)), s.toString());
    }
    ForwardShape ampere = shape(1, 10000, 32, 128, DType.BFLOAT16, DType.INT8, false);
    assertFalse(ForwardPlan.halfOperandsPay(ampere, ForwardPlan.plan(ampere, gpu(8, 0))));
  }

  @Test
  void launchesPassBothSidesScalesAndTheWorkCounters() {
    DeviceTokens q = new DeviceTokens(DType.INT8, 128, 1, 32, 32, 0x100, 0x200, 0x300, 0x400, 0, 0x500);
    DeviceTokens d = new DeviceTokens(DType.INT8, 128, 10000, 300, 3_000_000, 0x1100, 0x1200, 0x1300, 0x1400, 0,
        0x1500);
    ForwardShape s = shape(1, 10000, 32, 128, DType.INT8, DType.INT8, false);
    List<KernelLaunch> launches = ForwardLaunches.of(ForwardPlan.plan(s, gpu(8, 9)), s,
        new Operands(q, d, 0x9000, 0, 0));
    assertEquals(1, launches.size());
    KernelArgs.Quant a = assertInstanceOf(KernelArgs.Quant.class, launches.get(0).args());
    assertEquals(0x500, a.qScale());
    assertEquals(0x1500, a.dScale());
    assertNotNull(a.work());
    ForwardShape several = shape(5, 1000, 32, 128, DType.BFLOAT16, DType.INT8, false);
    KernelArgs.Quant b = (KernelArgs.Quant) ForwardLaunches.of(ForwardPlan.plan(several, gpu(8, 9)), several,
        new Operands(q, d, 0x9000, 0, 0)).get(0).args();
    assertNull(b.work()); // queries shared: a static split, no counters
    ForwardShape groups = shape(8, 2000, 32, 300, 128, DType.BFLOAT16, DType.BINARY);
    KernelArgs.Quant w = (KernelArgs.Quant) ForwardLaunches.of(ForwardPlan.plan(groups, H200), groups,
        new Operands(q, d, 0x9000, 0, 0)).get(0).args();
    assertEquals(0x1500, w.dScale());
    assertNull(w.work()); // the expanding wgmma kernel splits statically
    ForwardShape groups8 = shape(8, 2000, 32, 300, 128, DType.INT8, DType.INT8);
    KernelArgs.Wgmma e = assertInstanceOf(KernelArgs.Wgmma.class, ForwardLaunches.of(ForwardPlan.plan(groups8, H200),
        groups8, new Operands(q, d, 0x9000, 0, 0)).get(0).args()); // int8 on both sides, sm_90
    assertEquals(0x500, e.qScale());
    assertEquals(0x1500, e.dScale());
    ForwardShape ffma = shape(1, 100, 32, 33, DType.FLOAT32, DType.INT8, true);
    KernelArgs.FfmaScaled f = assertInstanceOf(KernelArgs.FfmaScaled.class, ForwardLaunches.of(
        ForwardPlan.plan(ffma, H200), ffma, new Operands(q, d, 0x9000, 0x9800, 32)).get(0).args());
    assertEquals(0x1500, f.dScale());
    assertEquals(0x9800, f.argmax());
  }
}
