// Fused MaxSim forward for int8, e4m3 and 1-bit documents against short bf16 or fp16 queries, for 1-bit documents
// against short 1-bit queries and for int8 and e4m3 documents against short queries of their own type (int8 rows of
// 64 or 128 dims as stored, narrower ones as bf16; e4m3 as fp16) (at most 32 tokens; d <= 128, or for 8-bit
// documents against float queries up to 1024), on
// Hopper (sm_90a only): the launches that read many documents once each, where the time is the bytes read, so
// every instruction spent per byte shows (docs/design/kernel-selection.md, rule 20).
//
// Roles:       warp 4, the producer: lane 0 takes the pairs (the first one per block, then one at a time at
//              run time) and loads each slot of a document's stored bytes with one bulk copy (its tokens are
//              contiguous; 1-bit tokens narrower than 16 bytes from the 16-byte unit holding the first, the
//              offset into it carried in the slot's Tile) and its scales with another where they are whole
//              16-byte units (else the 32 lanes copy them); warps 0-3, the consumer warpgroup, expand and
//              multiply. They meet only at the ring's barriers, and each slot carries its Tile, so the consumers
//              read no work metadata from global memory. The producer takes the next pair and reads its
//              document's row while the current one's slots go out, so those round trips to memory never leave
//              the ring unfilled.
// Tiles:       A = 64 document tokens x 16 k per wgmma, from registers: each thread loads the 16-byte pieces
//              of its two rows (16w + g, + 8; 8-bit rows of 16-48 dims, a word per k-step) and expands them
//              exactly into bf16 or fp16 pairs (every int8 and e4m3 value is exact in both; a 1-bit row is
//              read as four words, thread t's word its 32 dims, or at d <= 64 as four halfwords, each bit a
//              +-1, the bytes past a narrower row meeting zeros in B); B = the query's 32 rows in shared
//              memory, 128-byte swizzled and K-major, in the k order the expansion leaves (pieceDim,
//              maxsim_quant_expand.cuh), written when the query changes (once per block for one query: the
//              block's first, while its first slot is on its way). int8 queries against int8 rows of 64 or
//              128 dims skip the expansion: the loaded words are A as they stand, 64 tokens x 32 k on the
//              integer tensor cores (s32 accumulators), B the query's int8 rows in the k order of those words.
//              A slot holds four tiles (256 tokens) of 8-bit tokens of d <= 64, two (128) of wider ones, or
//              five (320) of 1-bit tokens, since taking a slot costs about as much as expanding a tile.
// Wide d:      8-bit documents of d over 128 (the "_w" entries) come through a tensor map instead, a slot one
//              128-byte slice of a tile's 64 tokens (128-byte swizzled, so that a thread's rows, taken in the
//              order 0 4 1 5 2 6 3 7 within each 8, read distinct banks; columns past d arrive as zeros). The
//              consumers expand each slice into one of two sets of A registers while the previous slice's
//              wgmmas run, accumulating the tile's products over its slices before the fold.
// Pipeline:    the producer runs ahead by the ring (40 KB: 2 slots at d = 64 and 128, 3 at d = 48, 6 for 1-bit).
//              The consumers take a slot's tiles one at a time: each tile's bytes loaded from the slot
//              (released after its last tile's), expanded into one set of A registers just before its wgmmas,
//              and folded; while its wgmmas run the next tile's scales are loaded, and once the slot's last
//              tile's are done the next slot is taken with its first tile's scales. One set of A registers and
//              accumulators, so four blocks fit on an SM and their warps hide each other's expansion and folds.
//              The producer waits for free slots suspended, not spinning on the scheduler it shares.
// Online max:  each dot product times its document token's scale (for compressed queries times the pair's scale
//              product, query scale x document scale, as rule 18's kernels round it), then per query row a
//              running max over this thread's valid rows (max.NaN: NaN propagates); rows past the document or
//              masked are skipped.
// Epilogue:    at a document's last tile, the max across the warp's rows (shuffles) and the 4 warps (shared
//              memory, one barrier of the warpgroup), then warp 0 sums the query's valid rows, each times its
//              weight: 1 (also for compressed queries, whose scales the fold applied), or for an fp16 copy of bf16
//              queries the power of two that undoes the token's scaling on the host (HalfOperands.java).
#pragma once
#include "common/maxsim_async.cuh"
#include "forward/maxsim_quant_expand.cuh"
#include "common/maxsim_tma.cuh"
#include "common/maxsim_wgmma.cuh"
#include "forward/maxsim_work.cuh"
#include <type_traits>

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace maxsim4j {

constexpr int QT_CONSUMERS = 128;                 // one warpgroup
constexpr int QT_THREADS = QT_CONSUMERS + 32;     // and the producer warp
constexpr int QT_TOKENS = 64;                     // document tokens per tile: wgmma's M
constexpr int QT_ROWS = 32;                       // query rows: wgmma's N
constexpr int QT_RING_BYTES = 40 * 1024;
constexpr int QT_MAX_STAGES = 16;
constexpr int QT_CONSUMER_BARRIER = 1;            // named barrier of the consumer warpgroup

// Blocks per SM the registers are bounded for: each tile waits in its slot and is expanded just before its own
// wgmmas, so one set of A registers does, and the other blocks' warps hide the expansion.
constexpr int QT_BLOCKS_PER_SM = 4;
// The registers of a thread of the tensor-map entries, which hold two sets of A registers: 128 at d up to 256
// (three blocks per SM), 136 up to 512 (two blocks: three at 128 registers spill and measured slower), and what
// d = 1024's two blocks leave.
__host__ __device__ constexpr int quantTmaRegisters(int slices) { return slices <= 2 ? 128 : slices <= 4 ? 136 : 200; }

// What a slot holds: the tile of `pair` (query `query`) from its document's token `first`, `tokens` of them; the
// document's first stored token `start`, whether this is its last tile, and the byte at which its first token
// begins in the slot (`lead`: 0 but for 1-bit tokens narrower than 16 bytes). Pair -1 ends the work.
struct Tile {
  long long pair;
  int query, first, tokens, start, last, lead;
};
constexpr int QT_TILE_BYTES = 32;
static_assert(sizeof(Tile) == QT_TILE_BYTES, "the host counts 32 bytes per slot's tile");

// A pair as the producer reads it: its query, its document's first stored token, length and valid tokens.
struct PairRow {
  int query, start, length, valid;
};

// Two floats from shared memory in a read the compiler may not hoist out of the tile loop, where registers are
// short (the query's scales, hoisted, made the tile loop spill).
__device__ __forceinline__ float2 sharedFloat2(const float* p) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n"
               : "=f"(v.x), "=f"(v.y)
               : "r"((uint32_t)__cvta_generic_to_shared(p)));
  return v;
}

// Keeps A registers that an asynchronous wgmma may still read from being reused before the wait that ends it.
template <int STEPS>
__device__ __forceinline__ void keepRegisters(const uint32_t (&a)[STEPS][4]) {
#pragma unroll
  for (int s = 0; s < STEPS; s++) {
#pragma unroll
    for (int i = 0; i < 4; i++) asm volatile("" ::"r"(a[s][i]) : "memory");
  }
}

// The dim within a 1-bit piece of 16 (a halfword, its bytes moved to bytes 0 and 2 of a word, expanded as a word's
// steps 4-7) of element e of step j (0-3): pieceDim<B1>'s order for the rows read as 64 dims.
__device__ __forceinline__ int halfPieceDim(int j, int e) {
  const int bit = (e == 0 ? 15 : e == 1 ? 31 : e == 2 ? 14 : 30) - 2 * (j + 4);  // 0-7 or 16-23
  return bit < 8 ? 7 - bit : 8 + 23 - bit;
}

// The dynamic shared memory the host gives: query rows, ring, tiles, barriers, the epilogue's maxima [2][4][32],
// the rows' weights [32] (0 for rows that do not count) and the rows' scales [32] (compressed queries).
template <int CHUNKS>
__host__ __device__ constexpr int quantTmaSharedBytes() {
  return CHUNKS * QT_ROWS * SWIZZLE_ROW_BYTES + QT_RING_BYTES + QT_MAX_STAGES * (QT_TILE_BYTES + 2 * 8)
         + (2 * 4 + 2) * QT_ROWS * 4;
}

// A thread's row g (0-7) of each 8 rows where slots are 128-byte swizzled: the rows of lanes 4g..4g+3 and
// 4g+4..4g+7 (read in the same phase of a 16-byte load) then lie 4 apart, their pieces in opposite halves of
// the banks.
__device__ __forceinline__ int swizzledRowOf(int g) { return (g >> 1) | ((g & 1) << 2); }

// CHUNKS: 64-dim chunks of d (1 for d <= 64, else 2), also for 1-bit rows, read as 64 or 128 dims; for the
// tensor-map entries, of each slice. ROW_STEPS: the k-steps of 16 dims an 8-bit row of one chunk takes, d / 16
// for the c1k entries, 4 for every other entry: a row of 16, 32 or 48 dims expands and multiplies only its own
// steps, where the 64-dim entry reads the bytes past the row too; step j sums dims 16j to 16j + 15 (a word of
// them per thread of a quad), as rule 19's tiles do (which take such rows in query groups), in another order
// within the step, which the tensor cores' sum does not see (measured: kernel-selection.md, rule 20). NARROW:
// 1-bit tokens of fewer than 16 bytes, which start anywhere in a slot (the 16-byte ones keep aligned loads and
// copies). SLICES: 0 for bulk copies, else the 128-byte slices of the widest d the entry takes through
// `documents` (8-bit only, 128 * SLICES / 2 < d <= 128 * SLICES).
template <typename TQ, typename TD, int CHUNKS, bool NARROW, int SLICES, int ROW_STEPS>
__device__ void forwardQuantTma(const typename TQ::Storage* __restrict__ q, Rows qRows,
                                const float* __restrict__ qWeight, const uint8_t* __restrict__ d, Rows dRows,
                                const float* __restrict__ dScale, const int* __restrict__ dValid, int dim,
                                int mode, int perQuery, int docOffset, long long pairs, float* scores,
                                unsigned long long* work, const TensorMap* documents) {
  constexpr bool Q_SCALED = Compressed<TQ>::value;  // compressed queries: qWeight holds each token's scale
  // 1-bit queries: bf16 (+-1 is exact); e4m3 ones fp16, which holds every e4m3 value; int8 ones bf16 (exact) below
  // 64 dims, and none above (INTEGER)
  using O = std::conditional_t<std::is_same<TQ, E4M3>::value, __half, typename Operand<TQ>::Type>;
  // int8 queries against int8 rows of 64 or 128 dims multiply the stored bytes on the integer tensor cores: no
  // expansion, k-steps of 32, s32 accumulators (exact: |dot| <= 128^2 x 128 = 2^21, so its fp32 value is too)
  constexpr bool INTEGER =
      std::is_same<TQ, S8>::value && std::is_same<TD, S8>::value && ROW_STEPS == 4 && SLICES == 0;
  using Accumulator = std::conditional_t<INTEGER, int, float>;
  constexpr int STEPS = INTEGER ? 2 * CHUNKS : CHUNKS * ROW_STEPS;  // wgmma k-steps per tile (per slice)
  static_assert(!Q_SCALED || std::is_same<TQ, TD>::value && SLICES == 0,
                "compressed queries against their own type, of at most 128 dims");
  constexpr bool TILED = SLICES > 0;
  static_assert(!TILED || (SLICES >= 2 && CHUNKS == 2 && !NARROW && !std::is_same<TD, B1>::value),
                "8-bit slices of 128 bytes, d over 128");
  constexpr int B_CHUNKS = TILED ? 2 * SLICES : CHUNKS;  // the query rows' 64-dim chunks
  constexpr int B_BYTES = B_CHUNKS * QT_ROWS * SWIZZLE_ROW_BYTES;
  extern __shared__ __align__(1024) uint8_t shared[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  constexpr bool BITS = std::is_same<TD, B1>::value;
  // 1-bit rows are read as 128 dims (a word per thread of a quad) or, at d <= 64, as 64 (a halfword each)
  static_assert(!BITS || CHUNKS == 2 || NARROW, "1-bit rows read as 64 dims are narrow ones");
  static_assert(BITS || !NARROW, "8-bit tiles are whole 16-byte units");
  static_assert(ROW_STEPS == 4 || (CHUNKS == 1 && !BITS && ROW_STEPS >= 1 && ROW_STEPS < 4),
                "rows of fewer k-steps are 8-bit rows of one chunk");
  // wgmma tiles a slot: taking and releasing a slot costs about as much as expanding a short tile, so tiles
  // share it: five for 1-bit tokens (320, a 300-token passage in one slot, with 16 bytes a token still six
  // stages in the ring), for 8-bit tokens four at d <= 64 (256 tokens) and two above (128; at d = 128 the ring then
  // holds two slots, which still keep the consumers fed)
  // (wide d: one tile a slot, each slot a slice)
  constexpr int SUB = BITS ? 5 : TILED ? 1 : CHUNKS == 1 ? 4 : 2;
  constexpr int SLOT_TOKENS = QT_TOKENS * SUB;
  // one byte per value (d % 16 == 0: every tile is whole 16-byte units) or ceil(d / 8) per 1-bit token; narrow
  // ones' slots take 32 bytes more: the copy's lead into its first 16-byte unit, and words read past the last row.
  // A tensor-map slot is its box, 128 bytes a token whatever d, its scales apart (the box keeps 1024-byte atoms).
  const int tokenBytes = BITS ? (dim + 7) / 8 : dim;
  if (tid == 0 && BITS && NARROW == (tokenBytes == 16)) __trap();  // the host picked the other entry
  if (tid == 0 && ROW_STEPS < 4 && dim != 16 * ROW_STEPS) __trap();  // the host picked another row width
  const int slices = TILED ? (dim + 127) / 128 : 1;
  if (tid == 0 && TILED && (slices > SLICES || 2 * slices <= SLICES)) __trap();  // the host picked another entry
  const int dataBytes = TILED ? SLOT_TOKENS * SWIZZLE_ROW_BYTES : SLOT_TOKENS * tokenBytes + (NARROW ? 32 : 0);
  const int stageBytes = dataBytes + SLOT_TOKENS * 4;
  const int stages = min(QT_MAX_STAGES, QT_RING_BYTES / stageBytes);
  const uint32_t bBase = (uint32_t)__cvta_generic_to_shared(shared);
  const uint32_t ringBase = bBase + B_BYTES;
  // a slot's bytes and its scales: together for bulk copies, apart (after every slot's box) for tensor maps
  auto dataOf = [&](int s) { return ringBase + s * (TILED ? dataBytes : stageBytes); };
  auto scalesOf = [&](int s) {
    return TILED ? ringBase + stages * dataBytes + s * SLOT_TOKENS * 4 : ringBase + s * stageBytes + dataBytes;
  };
  Tile* tiles = reinterpret_cast<Tile*>(shared + B_BYTES + QT_RING_BYTES);
  const uint32_t fullBars = (uint32_t)__cvta_generic_to_shared(tiles + QT_MAX_STAGES);
  const uint32_t emptyBars = fullBars + 8 * QT_MAX_STAGES;
  float* red = reinterpret_cast<float*>(shared + B_BYTES + QT_RING_BYTES + QT_MAX_STAGES * (QT_TILE_BYTES + 2 * 8));
  float* rowWeight = red + 2 * 4 * QT_ROWS;  // per query row: 0 where it does not count, else its weight
  float* rowScale = rowWeight + QT_ROWS;     // compressed queries: per row its scale (0 past the query)
  if (tid == 0) {
    if (dynamicSharedBytes() < (uint32_t)quantTmaSharedBytes<B_CHUNKS>()) __trap();  // the host sized it for another kernel
    for (int s = 0; s < QT_MAX_STAGES; s++) {
      mbarrierInit(fullBars + 8 * s, 1 + 32);        // the producer's expect_tx, and each lane (its scale copies)
      mbarrierInit(emptyBars + 8 * s, QT_CONSUMERS);  // each consumer thread, its pieces in registers
    }
    fenceBarrierInit();
  }
  __syncthreads();

  if (warp == QT_CONSUMERS / 32) {
    // ------------------------------------------------------------------------------------------- producer
    const WorkCounters counters{work};
    int slot = 0;
    uint32_t phase = 0;
    auto next = [&]() {
      if (++slot == stages) {
        slot = 0;
        phase ^= 1;
      }
    };
    auto rowOf = [&](long long pair) {
      const int doc = quantDocumentOf(pair, mode, perQuery, docOffset);
      return PairRow{(int)(pair / perQuery), dRows.rowStart[doc], dRows.rowLength[doc], dValid[doc]};
    };
    // the pair after next is taken, and the next one's row read, while this one's tiles are issued
    long long pair = blockIdx.x;
    PairRow row = pair < pairs ? rowOf(pair) : PairRow{};
    long long taken = lane == 0 ? counters.take(gridDim.x) : 0;
    while (pair < pairs) {
      const long long current = pair;
      const PairRow r = row;
      pair = __shfl_sync(0xffffffffu, taken, 0);
      if (pair < pairs) {
        row = rowOf(pair);
        if (lane == 0) taken = counters.take(gridDim.x);
      }
      if (r.valid == 0) {
        if (lane == 0) scores[current] = EMPTY_DOCUMENT_SCORE;
        continue;
      }
      for (int first = 0; first < r.length; first += SLOT_TOKENS) {
        const int tokens = min(SLOT_TOKENS, r.length - first);
        for (int slice = 0; slice < slices; slice++) {
          const uint32_t full = fullBars + 8 * slot, stage = dataOf(slot);
          mbarrierWaitSuspended(emptyBars + 8 * slot, phase ^ 1);
          const float* scales = dScale + r.start + first;
          const uint32_t scaleSlot = scalesOf(slot);
          // the bulk copy moves whole, aligned 16-byte units: narrow 1-bit tokens from the unit holding the first
          const uint8_t* bytes = d + (size_t)(r.start + first) * tokenBytes;
          const int lead = NARROW ? (int)((uintptr_t)bytes & 15) : 0;
          const uint32_t copyBytes =
              TILED ? (uint32_t)dataBytes : (uint32_t)((lead + tokens * tokenBytes + 15) & ~15);
          // the scales ride in a second bulk copy where they are whole 16-byte units (padded layouts, and packed
          // documents starting at a multiple of 4 tokens), else each lane copies one in 32; with a tile's first
          // slice
          const bool bulkScales = tokens % 4 == 0 && ((uintptr_t)scales & 15) == 0;
          if (lane == 0) {
            tiles[slot] = Tile{current, r.query, first, tokens, r.start, first + tokens >= r.length, lead};
            mbarrierExpectBytes(full, copyBytes + (slice == 0 && bulkScales ? tokens * 4 : 0));
            if constexpr (TILED) {
              tmaLoadBox(stage, documents, SWIZZLE_ROW_BYTES * slice, r.start + first, full);
            } else {
              bulkCopy(stage, bytes - lead, copyBytes, full);
            }
            if (slice == 0 && bulkScales) bulkCopy(scaleSlot, scales, tokens * 4, full);
          }
          if (slice > 0 || bulkScales) {
            mbarrierArrive(full);
          } else {
#pragma unroll
            for (int i = lane; i < SLOT_TOKENS; i += 32) {
              copyAsyncSmall<4>(scaleSlot + 4 * i, i < tokens ? scales + i : dScale, i < tokens);
            }
            copyAsyncArrive(full);
          }
          next();
        }
      }
    }
    mbarrierWait(emptyBars + 8 * slot, phase ^ 1);
    if (lane == 0) {
      tiles[slot] = Tile{-1, 0, 0, 0, 0, 0, 0};
      mbarrierArrive(fullBars + 8 * slot);
      counters.finish(gridDim.x);
    }
    mbarrierArrive(fullBars + 8 * slot);
    // the last tiles' scale copies land before the warp exits (their arrivals complete those tiles)
    commitGroup();
    waitGroups<0>();
    return;
  }

  // --------------------------------------------------------------------------------------------- consumers
  const int g = lane / 4, t = lane % 4;
  const int gRow = TILED ? swizzledRowOf(g) : g;
  const int row0 = 16 * warp + gRow;  // this thread's rows of a tile: row0 and row0 + 8
  // where a thread's bytes of a row's chunk start: a piece of 16 bytes (4 k-steps), or for the k entries the
  // word of the first step, the next step's 16 bytes on
  constexpr int PIECE_BYTES = BITS ? 2 * CHUNKS : ROW_STEPS == 4 ? 16 : 4;
  const uint32_t pieceOffset = TILED ? row0 * SWIZZLE_ROW_BYTES : row0 * tokenBytes + PIECE_BYTES * t;
  // e4m3 pieces past d (d not a multiple of 64) are zeroed: B is zero at those dims, but a byte there may be NaN
  // (a tensor map's columns past d arrive as zeros)
  bool present[CHUNKS];
#pragma unroll
  for (int c = 0; c < CHUNKS; c++) {
    present[c] = TILED || !std::is_same<TD, E4M3>::value || 64 * c + PIECE_BYTES * t < tokenBytes;
  }

  // compressed queries: the largest magnitude of the query's scales (rows past the query hold 0; a masked row's NaN is
  // ignored, as its max is not summed), which tells the tiles whose scale products cannot overflow
  float qScaleMax = 0.f;
  // compressed queries: this thread's rows' scales (rows 8 jj + 2 t and + 1), read from shared memory once per
  // query where registers allow it (8-bit rows of one chunk), else at every fold
  constexpr bool SCALES_HELD = Q_SCALED && CHUNKS == 1 && !BITS;
  float qs[QT_ROWS / 4];
  auto loadRowScales = [&](int jj) {
    const float2 s2 = sharedFloat2(rowScale + 8 * jj + 2 * t);
    qs[2 * jj] = s2.x;
    qs[2 * jj + 1] = s2.y;
  };
  // The query's rows as B, in the k order of the pieces; masked rows, rows past the query and dims past d are
  // zero, and rows that count have their weight in rowWeight. Called with no wgmma in flight.
  auto loadQuery = [&](int query) {
    namedBarrierSync(QT_CONSUMER_BARRIER, QT_CONSUMERS);  // every warp's wgmmas reading the previous rows are done
    const int start = qRows.rowStart[query], length = qRows.rowLength[query];
    if (length > QT_ROWS) __trap();  // the plan sends longer queries elsewhere
    if constexpr (INTEGER) {
      // int8 rows of 128 bytes (4 k-steps of 32), 128-byte swizzled: word p / 4 of step s holds the 4 dims from
      // 64 (s / 2) + 16 (p % 16 / 4) + 8 (s % 2) + 4 (p / 16), as A's words of that step (expandChunk); a batch's
      // loads are all issued before its first store
      constexpr int WORDS = QT_ROWS * SWIZZLE_ROW_BYTES / 4 / QT_CONSUMERS, BATCH = 4;
      for (int first = 0; first < WORDS; first += BATCH) {
        uint32_t words[BATCH];
#pragma unroll
        for (int i = 0; i < BATCH; i++) {
          const int w = tid + QT_CONSUMERS * (first + i), n = w / 32, s = w % 32 / 8, p = 4 * (w % 8);
          const int k = 64 * (s / 2) + 16 * (p % 16 / 4) + 8 * (s % 2) + 4 * (p / 16);
          words[i] = 0;
          if (s < STEPS && k < dim && n < length && isValid(qRows, start + n)) {
            const uint8_t* at = reinterpret_cast<const uint8_t*>(q) + (size_t)(start + n) * dim + k;
            words[i] = at[0] | at[1] << 8 | at[2] << 16 | (uint32_t)at[3] << 24;
          }
        }
#pragma unroll
        for (int i = 0; i < BATCH; i++) {
          const int w = tid + QT_CONSUMERS * (first + i), n = w / 32, kb = 4 * (w % 32);
          *reinterpret_cast<uint32_t*>(shared + n * SWIZZLE_ROW_BYTES + (((kb >> 4) ^ (n & 7)) << 4) + (kb & 15)) =
              words[i];
        }
      }
    } else {
      O* b = reinterpret_cast<O*>(shared);
      // each thread fills a column of B (position kk of a row's halves) in every ROW_STEP-th row, or for wide d
      // several whole columns, so where a column's dim and swizzled place come from is worked out once, not per
      // element
      constexpr int HALVES = B_CHUNKS * SWIZZLE_ROW_HALVES;
      constexpr int ROW_STEP = HALVES >= QT_CONSUMERS ? 1 : QT_CONSUMERS / HALVES;
      constexpr int COLUMNS = HALVES >= QT_CONSUMERS ? HALVES / QT_CONSUMERS : 1;
      constexpr int PER_THREAD = QT_ROWS / ROW_STEP, BATCH = PER_THREAD < 8 ? PER_THREAD : 8;
      static_assert(PER_THREAD % BATCH == 0, "whole batches of a thread's query elements");
      int thread;  // read here, not hoisted with what follows out of the tile loop, where registers are short
      asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(thread));
      for (int column = 0; column < COLUMNS; column++) {
        const int kk = (thread + QT_CONSUMERS * column) % HALVES, firstRow = thread / HALVES;
        const int step = kk / 16, pos = kk % 16;
        const int owner = (pos % 8) / 2, e = pos % 2 + 2 * (pos / 8);  // the thread t and element of position pos
        // (steps past a k entry's row are never multiplied: their columns stay zero)
        const int physical = BITS && CHUNKS == 2 ? owner * 32 + pieceDim<B1>(step, e)
                             : BITS              ? owner * 16 + halfPieceDim(step, e)
                             : ROW_STEPS == 4    ? (step / 4) * 64 + owner * 16 + pieceDim<TD>(step % 4, e)
                             : step < ROW_STEPS  ? 16 * step + 4 * owner + pieceDim<TD>(0, e)
                                                 : dim;
        const uint32_t at = (kk / SWIZZLE_ROW_HALVES) * QT_ROWS * SWIZZLE_ROW_BYTES + (kk % 8) * 2;
        const int chunk16 = (kk % SWIZZLE_ROW_HALVES) / 8;
        // a batch's loads are all issued before its first store: one trip to memory per batch, not per element
        for (int first = 0; first < PER_THREAD; first += BATCH) {
          float v[BATCH];
#pragma unroll
          for (int i = 0; i < BATCH; i++) {
            const int n = firstRow + (first + i) * ROW_STEP;
            const bool valid = n < length && isValid(qRows, start + n);
            v[i] = valid && physical < dim ? Element<TQ>::at(q, (size_t)(start + n), physical, dim) : 0.f;
          }
#pragma unroll
          for (int i = 0; i < BATCH; i++) {
            const int n = firstRow + (first + i) * ROW_STEP;
            b[(at + swizzled(n, chunk16)) / 2] = operandOf<O>(v[i]);
          }
        }
      }
    }
    if (tid < QT_ROWS) {
      rowWeight[tid] = tid >= length || !isValid(qRows, start + tid) ? 0.f
                       : !Q_SCALED && qWeight != nullptr             ? qWeight[start + tid]
                                                                     : 1.f;
    }
    if (Q_SCALED && tid < QT_ROWS) rowScale[tid] = tid < length ? scaleOf(qWeight, start + tid) : 0.f;
    fenceProxyAsync();
    namedBarrierSync(QT_CONSUMER_BARRIER, QT_CONSUMERS);
    if constexpr (Q_SCALED) {
      if constexpr (SCALES_HELD) {
#pragma unroll
        for (int jj = 0; jj < QT_ROWS / 8; jj++) loadRowScales(jj);
      }
      qScaleMax = fabsf(rowScale[lane]);
      for (int offset = 16; offset > 0; offset /= 2) {
        qScaleMax = fmaxf(qScaleMax, __shfl_xor_sync(0xffffffffu, qScaleMax, offset));
      }
    }
  };

  // A chunk of a tile's bytes of this thread as loaded (its two rows' 16-byte pieces, for the c1k entries a word
  // per k-step in .x, .y, .z, or for 1-bit documents the two rows' words in .x and .y) expanded into A fragments:
  // a[s][0] row g and a[s][1] row g + 8 at k = 2t, 2t + 1; a[s][2], a[s][3] at 2t + 8, 2t + 9.
  auto expandChunk = [&](int c, const uint4(&raw)[2], uint32_t(&a)[STEPS][4]) {
    if constexpr (BITS) {
      // a halfword's bits sit in bytes 0 and 2 of its word (loadChunk), which steps 4-7 of a word take
      constexpr int FIRST = CHUNKS == 2 ? 0 : 4;
#pragma unroll
      for (int j = 0; j < STEPS; j++) {
        expandBits<O>(raw[0].x, FIRST + j, a[j][0], a[j][2]);
        expandBits<O>(raw[0].y, FIRST + j, a[j][1], a[j][3]);
      }
    } else if constexpr (INTEGER) {
      // the stored bytes are A's: words 2j and 2j + 1 of a row's piece are k-step j's columns 4t.. and 16 + 4t..
#pragma unroll
      for (int j = 0; j < 2; j++) {
        uint32_t(&f)[4] = a[2 * c + j];
        f[0] = j == 0 ? raw[0].x : raw[0].z;
        f[1] = j == 0 ? raw[1].x : raw[1].z;
        f[2] = j == 0 ? raw[0].y : raw[0].w;
        f[3] = j == 0 ? raw[1].y : raw[1].w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < ROW_STEPS; j++) {
        uint32_t(&f)[4] = a[ROW_STEPS * c + j];
        expand<O>(TD{}, j == 0 ? raw[0].x : j == 1 ? raw[0].y : j == 2 ? raw[0].z : raw[0].w, f[0], f[2]);
        expand<O>(TD{}, j == 0 ? raw[1].x : j == 1 ? raw[1].y : j == 2 ? raw[1].z : raw[1].w, f[1], f[3]);
      }
    }
  };
  constexpr int RAW_CHUNKS = BITS ? 1 : CHUNKS;

  // This thread's bytes of chunk c of wgmma tile `sub` of the slot at `stage` (raw[h]: row g + 8h). A 1-bit row
  // narrower than 16 bytes may start anywhere: its word is two aligned ones, funnel-shifted.
  auto loadChunk = [&](uint32_t stage, int sub, int c, uint4(&raw)[2]) {
    raw[0] = raw[1] = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int h = 0; h < 2; h++) {
      // a tensor-map slot's 16-byte piece j of row r sits at piece j ^ (r % 8), and r % 8 is this thread's gRow
      const uint32_t at = TILED ? stage + pieceOffset + (sub * QT_TOKENS + h * 8) * SWIZZLE_ROW_BYTES
                                      + (((t + 4 * c) ^ gRow) << 4)
                                : stage + pieceOffset + (sub * QT_TOKENS + h * 8) * tokenBytes + 64 * c;
      if constexpr (BITS) {
        uint32_t word;
        if constexpr (!NARROW) {
          asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(word) : "r"(at));
        } else {
          uint32_t lo, hi;
          asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(lo) : "r"(at & ~3u));
          asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(hi) : "r"((at & ~3u) + 4));
          word = __funnelshift_r(lo, hi, 8 * (at & 3u));
          if constexpr (CHUNKS == 1) word = __byte_perm(word, 0u, 0x4140);  // halfword bytes to bytes 0 and 2
        }
        (h == 0 ? raw[0].x : raw[0].y) = word;
      } else if constexpr (ROW_STEPS == 4) {
        asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(raw[h].x), "=r"(raw[h].y), "=r"(raw[h].z), "=r"(raw[h].w)
                     : "r"(at));
        if (!present[c]) raw[h] = make_uint4(0u, 0u, 0u, 0u);
      } else {  // a word per k-step, 16 bytes apart (rows of 16 or 48 bytes meet no bank twice, of 32 twice)
        asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(raw[h].x) : "r"(at));
        if constexpr (ROW_STEPS >= 2) asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(raw[h].y) : "r"(at + 16));
        if constexpr (ROW_STEPS == 3) asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(raw[h].z) : "r"(at + 32));
      }
    }
  };

  // The scales of wgmma tile `sub` of the held slot (ds[h]: its row g + 8h), loaded a tile ahead of its fold.
  int slot = 0, held = 0;
  auto loadScales = [&](int sub, float(&ds)[2]) {
    const uint32_t scales = scalesOf(held) + 4 * (QT_TOKENS * sub + row0);
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(ds[0]) : "r"(scales));
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(ds[1]) : "r"(scales + 4 * 8));
  };
  // The next filled slot's tile and, unless it ends the work, its first wgmma tile's scales; its bytes stay in the
  // slot, `held`, until score loads each wgmma tile's just before its wgmmas.
  uint32_t phase = 0;
  auto take = [&](float(&ds)[2]) -> Tile {
    mbarrierWait(fullBars + 8 * slot, phase);
    const Tile tile = tiles[slot];
    if (tile.pair >= 0) {
      held = slot;
      loadScales(0, ds);
    }
    if (++slot == stages) {
      slot = 0;
      phase ^= 1;
    }
    return tile;
  };
  // The next slice of the held tile (wide d): its slot, held in turn.
  auto takeSlice = [&]() {
    mbarrierWait(fullBars + 8 * slot, phase);
    held = slot;
    if (++slot == stages) {
      slot = 0;
      phase ^= 1;
    }
  };

  // B's descriptor per k-step: the steps only move the address field of its low word, and its high word is the
  // same for every address, so the loop adds to one 32-bit word
  const uint64_t bDescriptor = tileDescriptor(bBase);
  const uint32_t bDescriptorLow = (uint32_t)bDescriptor, bDescriptorHigh = (uint32_t)(bDescriptor >> 32);
  int loadedQuery = -1, parity = 0;
  float best[QT_ROWS / 4];
  // Each dot product of wgmma tile `sub` times its document token's scale, then the running max over valid rows;
  // a slot wholly inside an unmasked document needs no validity test.
  auto fold = [&](const Tile& tile, int sub, const Accumulator(&acc)[QT_ROWS / 2], const float(&ds)[2]) {
    const bool whole = dRows.mask == nullptr && tile.tokens == SLOT_TOKENS;
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int r = QT_TOKENS * sub + row0 + 8 * h;
      if (whole || (r < tile.tokens && isValid(dRows, tile.start + tile.first + r))) {
        if constexpr (Q_SCALED) {
          // where no scale product of the row can overflow, 0 x product needs no care (else scaledDot keeps 0)
          if (isfinite(qScaleMax * fabsf(ds[h]))) {
#pragma unroll
            for (int jj = 0; jj < QT_ROWS / 8; jj++) {
              if constexpr (!SCALES_HELD) loadRowScales(jj);
              best[2 * jj] = maxKeepNaN(best[2 * jj], acc[4 * jj + 2 * h] * (qs[2 * jj] * ds[h]));
              best[2 * jj + 1] =
                  maxKeepNaN(best[2 * jj + 1], acc[4 * jj + 2 * h + 1] * (qs[2 * jj + 1] * ds[h]));
            }
          } else {
#pragma unroll
            for (int jj = 0; jj < QT_ROWS / 8; jj++) {
              if constexpr (!SCALES_HELD) loadRowScales(jj);
              best[2 * jj] = maxKeepNaN(best[2 * jj], scaledDot(acc[4 * jj + 2 * h], qs[2 * jj] * ds[h]));
              best[2 * jj + 1] =
                  maxKeepNaN(best[2 * jj + 1], scaledDot(acc[4 * jj + 2 * h + 1], qs[2 * jj + 1] * ds[h]));
            }
          }
        } else {
#pragma unroll
          for (int jj = 0; jj < QT_ROWS / 8; jj++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
              best[2 * jj + e] = maxKeepNaN(best[2 * jj + e], acc[4 * jj + 2 * h + e] * ds[h]);
            }
          }
        }
      }
    }
  };
  // Scores the slot `tile`, held in the ring, one wgmma tile at a time: its bytes loaded (the slot given back after
  // the last tile's), expanded into one set of A registers and multiplied, the products folded with the scales in
  // ds. While a tile's wgmmas run the next tile's scales are loaded into ds; after the last, the next slot is taken.
  auto score = [&](const Tile& tile, float(&ds)[2]) -> Tile {
    if (tile.first == 0) {
#pragma unroll
      for (int x = 0; x < QT_ROWS / 4; x++) best[x] = -INFINITY;
    }
    Tile next;
#pragma unroll
    for (int sub = 0; sub < SUB; sub++) {
      if (sub * QT_TOKENS >= tile.tokens) break;  // a document's last slot may hold one tile only
      const bool lastTile = sub == SUB - 1 || (sub + 1) * QT_TOKENS >= tile.tokens;
      Accumulator acc[QT_ROWS / 2];
      // wide d: two sets, a slice expanded into one while the previous slice's wgmmas read the other
      uint32_t a[TILED ? 2 : 1][STEPS][4];
#pragma unroll
      for (int slice = 0; slice < (TILED ? SLICES : 1); slice++) {
        if (slice > 0) {
          if (slice >= slices) break;
          takeSlice();
        }
        uint32_t(&set)[STEPS][4] = a[slice % 2];
        uint4 raw[RAW_CHUNKS][2];
#pragma unroll
        for (int c = 0; c < RAW_CHUNKS; c++) loadChunk(dataOf(held) + (NARROW ? tile.lead : 0), sub, c, raw[c]);
        if (lastTile) mbarrierArrive(emptyBars + 8 * held);
        if (slice >= 2) {
          wgmmaWait<1>();  // the wgmmas of slice - 2, the last to read this set
          keepRegisters(set);
        }
#pragma unroll
        for (int c = 0; c < RAW_CHUNKS; c++) expandChunk(c, raw[c], set);
        wgmmaFence();
#pragma unroll
        for (int s = 0; s < STEPS; s++) {
          if constexpr (INTEGER) {  // one row of 128 bytes holds every step's 32
            Wgmma<int8_t>::n32(acc, set[s], (uint64_t)bDescriptorHigh << 32 | (bDescriptorLow + 2 * s), s > 0);
          } else {
            const int chunk = CHUNKS * slice + s / 4;
            const uint32_t low = bDescriptorLow + chunk * (QT_ROWS * SWIZZLE_ROW_BYTES >> 4) + 2 * (s % 4);
            Wgmma<O>::template run<QT_ROWS>(acc, set[s], (uint64_t)bDescriptorHigh << 32 | low, slice > 0 || s > 0);
          }
        }
        wgmmaCommit();
      }
      float nextDs[2];
      if (!lastTile) loadScales(sub + 1, nextDs);
      wgmmaWait<0>();
      // the next slot is taken only once these wgmmas are done: taken while they run, blocks' first pairs are
      // sometimes scored wrong (kernel-selection.md, rule 20)
      if (lastTile) next = take(nextDs);
      pinAccumulators(acc);
#pragma unroll
      for (int x = 0; x < (TILED ? 2 : 1); x++) keepRegisters(a[x]);
      fold(tile, sub, acc, ds);
      ds[0] = nextDs[0], ds[1] = nextDs[1];
    }
    if (!tile.last) return next;

    // the document's last tile: the max over the warp's rows (lanes of one t share columns), then the warps'
#pragma unroll
    for (int x = 0; x < QT_ROWS / 4; x++) {
      float v = best[x];
      for (int offset = 4; offset < 32; offset *= 2) v = maxKeepNaN(v, __shfl_xor_sync(0xffffffffu, v, offset));
      best[x] = v;
    }
    float* maxima = red + parity * 4 * QT_ROWS;
    if (g == 0) {
#pragma unroll
      for (int jj = 0; jj < QT_ROWS / 8; jj++) {
        maxima[warp * QT_ROWS + 8 * jj + 2 * t] = best[2 * jj];
        maxima[warp * QT_ROWS + 8 * jj + 2 * t + 1] = best[2 * jj + 1];
      }
    }
    namedBarrierSync(QT_CONSUMER_BARRIER, QT_CONSUMERS);
    parity ^= 1;
    if (warp == 0) {
      float rowSum = 0.f;
      const float weight = rowWeight[lane];
      if (weight != 0.f) {
        rowSum = maxKeepNaN(maxKeepNaN(maxima[lane], maxima[QT_ROWS + lane]),
                            maxKeepNaN(maxima[2 * QT_ROWS + lane], maxima[3 * QT_ROWS + lane])) * weight;
      }
      for (int offset = 16; offset > 0; offset /= 2) rowSum += __shfl_xor_sync(0xffffffffu, rowSum, offset);
      if (lane == 0) scores[tile.pair] = rowSum;
    }
    return next;
  };

  // The tiles of one query at a time, its rows loaded first (one call site: loadQuery is long). The block's first
  // pair is blockIdx.x (the producer's too), so its query's rows are read while its first tile is on its way.
  int query = blockIdx.x < pairs ? (int)(blockIdx.x / perQuery) : -1;
  Tile tile;
  float ds[2];
  bool started = false;
  for (;;) {
    if (query >= 0) {
      loadQuery(query);
      loadedQuery = query;
    }
    if (!started) {
      tile = take(ds);
      started = true;
    }
    while (tile.pair >= 0 && (tile.first != 0 || tile.query == loadedQuery)) {
      tile = score(tile, ds);
    }
    if (tile.pair < 0) break;
    query = tile.query;
  }
}

}  // namespace maxsim4j

// The kernel as an entry point calls it, the parameters named as the entries of maxsim_forward_quant_tma.cu and
// maxsim_forward_quant_tma_wide.cu name them (in the namespace's scope).
#define MAXSIM_QT_CALL(TQ, TD, CHUNKS, NARROW, SLICES, ROW_STEPS, MAP)                                        \
  forwardQuantTma<TQ, TD, CHUNKS, NARROW, SLICES, ROW_STEPS>(q, Rows{qStart, qLength, qMask}, qScale, d,     \
                                                             Rows{dStart, dLength, dMask}, dScale, dValid, dim, \
                                                             mode, perQuery, docOffset, pairs, scores, work, MAP)
#endif
