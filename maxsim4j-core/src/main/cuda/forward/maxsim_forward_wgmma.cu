// Fused MaxSim forward on Hopper's warpgroup tensor cores (wgmma, sm_90a only): bf16 or fp16, fp32
// accumulation; and (rule 19) int8 on both sides multiplied as stored with s32 accumulation (exact), 128
// elements per k-chunk instead of 64, or int8 and e4m3 tokens expanded exactly to bf16 or fp16 on their way into
// the tiles. Of the half-type launches it
// takes those the streaming kernel does not (queries over 32 tokens, d over 128, few pairs) and, as query
// groups, all pairs of several short queries against long documents; of those, queries of more than 64
// tokens with d <= 128 go to the warp-specialized kernel (maxsim_forward_wgmma_ws.cu).
//
// Why a third forward. The block kernel (maxsim_forward_mma.cu) feeds mma.sync from query fragments that
// every warp re-reads from shared memory for each 8-token n-tile: at Lq = 128 and 1024 that shared-memory
// traffic, not DRAM or the tensor cores, bounds it (docs/design/kernel-selection.md, rule 9). wgmma reads
// both operands from shared memory itself, 64 query rows x 128 document tokens per instruction, with no
// per-thread fragment loads at all.
//
// Work:        persistent blocks, each a contiguous run of work items: pairs (a pair's query rows in passes
//              of ROWS = 32, 64 or 128 rows, each pass one scan of the document), or with query groups
//              (document, 4 queries of <= 32 tokens as the 128 rows of one pass), one group per block
//              against a segment of the documents (groupRun).
// Tiles:       A = the pass's query rows in shared memory, 128-byte swizzled and K-major, one 64-half
//              "k-chunk" of d after another; loaded when (query, pass) changes, so once per block when
//              Nq = 1 and Lq <= ROWS, or with split passes (Split), or with query groups.
//              B = 128 document tokens x one k-chunk per stage (16 KB), every thread cp.async'ing 16-byte
//              pieces straight into the swizzled slot; a tile of 128 tokens is ceil(d / 64) stages.
// Pipeline:    a ring of STAGES slots; the producer runs STAGES - 2 stages ahead, across passes and items.
//              One barrier per stage publishes the stage and retires the slot that is refilled next (its
//              wgmma group was waited for one stage earlier).
// Multiply:    each warpgroup issues 4 wgmma m64n128k16 per stage into 64 fp32 accumulators per thread
//              (m64n64k16 into the first 32 for a document's last tile of at most 64 tokens); the next
//              stage's group may run while this one's accumulators are still being filled.
// Online max:  after a tile's last k-chunk, each thread folds its 2 rows x 32 tokens into a running max
//              (max.NaN); training also keeps the argmax, searched only in tiles that raise the max. Products
//              of compressed tokens are first multiplied by their document token's scale, and the row's max by
//              its query token's in epilogue 1 (foldScaledTile, rowScaled).
// Epilogue:    max across the quad; rows through shared memory, thread t taking row t; the sum over valid
//              rows in the block kernel's order (a warp's shuffle tree, then warps, then passes in order;
//              split passes and slices leave per-row partials that maxsim_merge.cu sums); with query
//              groups each warp's sum is one query's score.
#include <type_traits>

#include "common/maxsim_async.cuh"
#include "forward/maxsim_fold.cuh"
#include "common/maxsim_mma.cuh"
#include "forward/maxsim_quant_expand.cuh"
#include "forward/maxsim_split.cuh"
#include "common/maxsim_wgmma.cuh"

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace maxsim4j {

constexpr int WGMMA_TOKENS = 128;                                       // N of one wgmma: tokens per tile
constexpr int WGMMA_STAGE_BYTES = WGMMA_TOKENS * SWIZZLE_ROW_BYTES;     // 16 KB
constexpr int WARPGROUP_THREADS = 128;
constexpr int WGMMA_K_BYTES = 32;                                       // of each row per instruction
constexpr int WGMMA_SCALE_BYTES = WGMMA_TOKENS * 4;                     // a tile's document scales

// An operand type's layout in the swizzled tiles: elements per 128-byte row (a k-chunk) and per 16-byte piece.
template <typename T>
struct Layout {
  static constexpr int ROW = SWIZZLE_ROW_BYTES / (int)sizeof(T);
  static constexpr int PIECE = 16 / (int)sizeof(T);
};

// How one side's tokens are stored for operand type T: as T itself (copied into the tiles as they are), or
// as int8 or e4m3 bytes (S = S8, E4M3: EXPANDED to T, exactly, on their way into the tiles).
template <typename T, typename S> struct Side {
  using Storage = T;
  static constexpr bool EXPANDED = false;
};
template <typename T> struct Side<T, S8> {
  using Storage = int8_t;
  static constexpr bool EXPANDED = true;
};
template <typename T> struct Side<T, E4M3> {
  using Storage = uint8_t;
  static constexpr bool EXPANDED = true;
};

// A launch's tensors: T_ is what the tensor cores multiply (bf16, fp16, or int8 on both sides), SQ_ and SD_ how
// the queries and the documents are stored. SCALED: tokens with scales (int8 or e4m3 on either side).
template <typename T_, typename SQ_ = T_, typename SD_ = T_>
struct Operands {
  using T = T_;
  using SQ = SQ_;
  using SD = SD_;
  using QStorage = typename Side<T, SQ>::Storage;
  using DStorage = typename Side<T, SD>::Storage;
  static constexpr bool SCALED = sizeof(T) == 1 || Side<T, SQ>::EXPANDED || Side<T, SD>::EXPANDED;
  const QStorage* __restrict__ q;
  Rows qRows;
  const float* __restrict__ qScale;  // compressed queries: per stored token; else null
  const DStorage* __restrict__ d;
  Rows dRows;
  const float* __restrict__ dScale;  // compressed documents: per stored token; else null
  const int* __restrict__ dValid;
  int dim, mode, perQuery, docOffset;
};

// What one work item asks of this block (its slice of the document, when split). An item is one pair
// (GROUP = 1) or, with query groups, one document against GROUP consecutive queries of at most 32 tokens,
// query slot s in rows 32s .. 32s + 31 (all pairs only).
struct ItemWork {
  int query, queries;   // the first query and how many (1, or up to GROUP)
  int qStart, qLength;  // of the first query (GROUP = 1)
  int doc, dStart, tBegin, tEnd;
  bool emptyDocument;
  int passes;              // of the whole query
  int firstPass, endPass;  // the passes this block scans: all, or with split passes pass blockIdx.y alone
  int tiles;               // 0: nothing to scan
};

// A query-group block's run of items (GROUP = 4): the grid is `groups` x S blocks, block b taking group
// b % groups against the documents of segment b / groups of S. Why not equal runs of one item order: a
// block keeps its group's query rows loaded for its whole run (a reload drains the ring, cp.async groups
// completing in order; with a document's groups adjacent, every item would reload), and the
// blocks of one segment all start at its first document together, so the groups read a document at
// about the same time, once from DRAM and then from L2, whatever the corpus size.
__device__ __forceinline__ void groupRun(long long pairs, int documents, long long& begin, long long& end) {
  const int queries = (int)(pairs / documents), groups = (queries + 3) / 4;
  const int segments = max(1, (int)gridDim.x / groups);
  const int group = blockIdx.x % groups, segment = blockIdx.x / groups;
  const long long first = (long long)group * documents;
  begin = first + (long long)documents * segment / segments;
  end = segment < segments ? first + (long long)documents * (segment + 1) / segments : begin;
}

template <typename In, int ROWS, int GROUP>
__device__ __forceinline__ ItemWork itemWork(const In& in, long long item, long long pairs, const Split& split) {
  ItemWork w;
  if constexpr (GROUP == 1) {
    w.query = (int)(item / in.perQuery);
    w.queries = 1;
    w.doc = in.mode == ALL_PAIRS ? in.docOffset + (int)(item % in.perQuery) : (int)item;
  } else {
    // items of one query group are adjacent (see groupRun): its rows stay in shared memory
    const int queries = (int)(pairs / in.perQuery);
    w.query = (int)(item / in.perQuery) * GROUP;
    w.queries = min(GROUP, queries - w.query);
    w.doc = in.docOffset + (int)(item % in.perQuery);
  }
  w.qStart = in.qRows.rowStart[w.query];
  w.qLength = in.qRows.rowLength[w.query];
  w.dStart = in.dRows.rowStart[w.doc];
  const int dLength = in.dRows.rowLength[w.doc];
  w.emptyDocument = in.dValid[w.doc] == 0;
  w.tBegin = slicesDocument(split) ? blockIdx.y * split.sliceTokens : 0;
  w.tEnd = slicesDocument(split) ? min(dLength, w.tBegin + split.sliceTokens) : dLength;
  w.passes = GROUP == 1 ? (w.qLength + ROWS - 1) / ROWS : 1;
  w.firstPass = GROUP == 1 && split.passSplit ? (int)blockIdx.y : 0;  // constants for query groups
  w.endPass = GROUP > 1 ? 1 : split.passSplit ? min(w.passes, w.firstPass + 1) : w.passes;
  const bool scan = !w.emptyDocument && w.tBegin < w.tEnd && w.firstPass < w.endPass;
  w.tiles = scan ? (w.tEnd - w.tBegin + WGMMA_TOKENS - 1) / WGMMA_TOKENS : 0;
  return w;
}

// Producer: cp.async of k-chunk kc of tile `tile` of a pass into the slot at shared address `slot`. Thread
// t always copies piece t % 8 of tokens t / 8 + i x THREADS / 8: its shared offsets are fixed (the swizzle
// depends on token % 8 only) and its source advances by whole rows. Tokens past the slice and elements past
// d are zeros.
template <typename In, int THREADS>
__device__ __forceinline__ void issueStage(uint32_t slot, const In& in, const ItemWork& w, int tile, int kc) {
  using T = typename In::T;
  constexpr int STEP = THREADS / 8;
  static_assert(STEP % 8 == 0, "every copy of a thread has the same swizzle phase");
  const int piece = threadIdx.x % 8, token = threadIdx.x / 8;
  const int t = w.tBegin + tile * WGMMA_TOKENS + token;
  const int k = kc * Layout<T>::ROW + piece * Layout<T>::PIECE;
  const int remaining = w.tEnd - t;
  const bool inRow = k < in.dim;
  const auto* src = in.d + (size_t)(w.dStart + t) * in.dim + k;
  const uint32_t dst = slot + swizzled(token, piece);
#pragma unroll
  for (int i = 0; i < WGMMA_TOKENS / STEP; i++) {
    const bool present = inRow && i * STEP < remaining;
    copyAsync16(dst + i * STEP * SWIZZLE_ROW_BYTES, present ? src + (size_t)i * STEP * in.dim : in.d, present);
  }
}

// Expanded documents: thread t loads 16 stored bytes (16 dims) of tokens t / 4 + i x THREADS / 4, dims
// 16 (t % 4) onwards of the k-chunk, into registers; the next produce() expands them (exactly) into the two
// 8-dim pieces of the operand tile they make and stores those, so the loads have a stage to land. Tokens past
// the slice and dims past d are zeros.
template <int THREADS>
struct PendingStage {
  static constexpr int COPIES = WGMMA_TOKENS * 4 / THREADS;
  uint4 raw[COPIES];
  uint32_t slot;
  bool live;
};

template <typename In, int THREADS>
__device__ __forceinline__ void loadExpandedStage(PendingStage<THREADS>& p, uint32_t slot, const In& in,
                                                  const ItemWork& w, int tile, int kc) {
  constexpr int STEP = THREADS / 4;
  const int token = threadIdx.x / 4, part = threadIdx.x % 4;
  const int t = w.tBegin + tile * WGMMA_TOKENS + token;
  const int k = kc * Layout<typename In::T>::ROW + part * 16;
  const auto* src = in.d + (size_t)(w.dStart + t) * in.dim + k;
#pragma unroll
  for (int i = 0; i < PendingStage<THREADS>::COPIES; i++) {
    const bool present = k < in.dim && t + i * STEP < w.tEnd;
    p.raw[i] = present ? __ldg(reinterpret_cast<const uint4*>(src + (size_t)i * STEP * in.dim)) : make_uint4(0, 0, 0, 0);
  }
  p.slot = slot;
  p.live = true;
}

template <typename In, int THREADS>
__device__ __forceinline__ void storeExpandedStage(const PendingStage<THREADS>& p) {
  constexpr int STEP = THREADS / 4;
  const int token = threadIdx.x / 4, part = threadIdx.x % 4;
#pragma unroll
  for (int i = 0; i < PendingStage<THREADS>::COPIES; i++) {
    const int row = token + i * STEP;
    storeExpandedPiece<typename In::T, typename In::SD>(p.slot + swizzled(row, 2 * part), p.raw[i].x, p.raw[i].y);
    storeExpandedPiece<typename In::T, typename In::SD>(p.slot + swizzled(row, 2 * part + 1), p.raw[i].z, p.raw[i].w);
  }
}

// Scaled tokens: the document scales of tile `tile` into `slot` (thread t < 128 copies token t's; zeros past the
// slice). They ride with the tile's last k-chunk, so the fold that follows that stage reads them from shared
// memory instead of waiting on global loads; the slot is refilled two stages later.
template <typename In>
__device__ __forceinline__ void issueTileScales(uint32_t slot, const In& in, const ItemWork& w, int tile) {
  if (threadIdx.x < WGMMA_TOKENS) {
    const int t = w.tBegin + tile * WGMMA_TOKENS + threadIdx.x;
    const bool present = t < w.tEnd;
    copyAsyncSmall<4>(slot + 4 * threadIdx.x, present ? in.dScale + w.dStart + t : in.dScale, present);
  }
}

// The pass's ROWS query rows, k-chunk after k-chunk (rows past a query and elements past d are zeros):
// cp.async, or for expanded queries loaded, expanded and stored. With query groups, row r is token r % 32 of
// query slot r / 32.
template <typename In, int THREADS, int ROWS, int GROUP>
__device__ __forceinline__ void issueQuery(uint32_t queryTile, const In& in, const ItemWork& w, int r0,
                                           int kChunks) {
  using T = typename In::T;
  for (int e = threadIdx.x; e < ROWS * kChunks * 8; e += THREADS) {
    const int row = e / (kChunks * 8), piece = e % (kChunks * 8);
    const int k = piece * Layout<T>::PIECE;
    int s = r0 + row, qStart = w.qStart, qLength = w.qLength;
    if constexpr (GROUP > 1) {
      const int slot = row / 32;
      s = row % 32;
      qStart = slot < w.queries ? in.qRows.rowStart[w.query + slot] : 0;
      qLength = slot < w.queries ? in.qRows.rowLength[w.query + slot] : 0;
    }
    const bool present = s < qLength && k < in.dim;
    const uint32_t address = queryTile + (piece / 8) * (ROWS * SWIZZLE_ROW_BYTES) + swizzled(row, piece % 8);
    if constexpr (Side<T, typename In::SQ>::EXPANDED) {
      const uint2 raw = present ? __ldg(reinterpret_cast<const uint2*>(in.q + (size_t)(qStart + s) * in.dim + k))
                                : make_uint2(0, 0);
      storeExpandedPiece<T, typename In::SQ>(address, raw.x, raw.y);
    } else {
      copyAsync16(address, present ? in.q + (size_t)(qStart + s) * in.dim + k : in.q, present);
    }
  }
}

// Where the producer is: item, pass, tile and k-chunk of its run.
struct StageCursor {
  long long item;  // == end when the run is exhausted
  int pass, tile, kc;
  ItemWork work;
};

template <typename In, int ROWS, int GROUP>
__device__ __forceinline__ void seekStages(StageCursor& c, long long item, long long end, long long pairs,
                                           const In& in, const Split& split) {
  for (; item < end; item++) {
    c.work = itemWork<In, ROWS, GROUP>(in, item, pairs, split);
    if (c.work.tiles > 0) {
      c.item = item;
      c.pass = c.work.firstPass;
      c.tile = c.kc = 0;
      return;
    }
  }
  c.item = end;
}

// The query scale of this thread's pass row `row` (scaled tokens; 1 for uncompressed queries and for rows past
// the query, which are unused).
template <typename In, int ROWS, int GROUP>
__device__ __forceinline__ float passRowScale(const In& in, const ItemWork& w, int r0, int row) {
  if (in.qScale == nullptr) return 1.f;
  int s = r0 + row, qStart = w.qStart, qLength = w.qLength;
  if constexpr (GROUP > 1) {
    const int slot = row / 32;
    if (slot >= w.queries) return 1.f;
    s = row % 32;
    qStart = in.qRows.rowStart[w.query + slot];
    qLength = in.qRows.rowLength[w.query + slot];
  }
  return row < ROWS && s < qLength ? in.qScale[qStart + s] : 1.f;
}

// Epilogue 2 of a pair (GROUP = 1): thread t takes row t of the pass; the valid rows summed per warp, then
// across warps by thread 0 into `total`, in the block kernels' order.
template <int ROWS, typename Index>
__device__ __forceinline__ void sumPassRows(const Rows& qRows, const ItemWork& w,
                                            long long pair, int r0, const float* rowBest, const int* rowIndex,
                                            float* passSums, float& total, Index* argmax, int argmaxStride,
                                            const Split& split) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x < 128) {
    const int row = threadIdx.x, s = r0 + row;
    float rowValue = 0.f;
    if (row < ROWS && s < w.qLength) {
      if (isSliced()) {
        split.partialMax[partialAt(split, pair, s)] = rowBest[row];
        split.partialArgmax[partialAt(split, pair, s)] = rowIndex[row];
      } else {
        const bool valid = isValid(qRows, w.qStart + s);
        if (valid) rowValue = rowBest[row];
        if (argmax != nullptr) argmax[pair * argmaxStride + s] = (Index)(valid ? rowIndex[row] : -1);
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) rowValue += __shfl_xor_sync(0xffffffffu, rowValue, offset);
    if (lane == 0) passSums[warp] = rowValue;
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < 4; s++) total += passSums[s];
}

// Epilogue 2 of a query group: warp s takes query slot s, lane t its token t; the warp's sum is the score
// (the same shuffle tree as a pass of one query). An empty document (rowBest == nullptr) scores -1e9.
template <typename Index>
__device__ __forceinline__ void sumGroupRows(const Rows& qRows, const ItemWork& w, int perQuery, int docOffset,
                                             const float* rowBest, const int* rowIndex, float* scores, Index* argmax,
                                             int argmaxStride) {
  const int lane = threadIdx.x % 32, slot = threadIdx.x / 32;
  if (slot >= w.queries) return;
  const int query = w.query + slot;
  const long long pair = (long long)query * perQuery + (w.doc - docOffset);
  const int qLength = qRows.rowLength[query];
  float rowValue = 0.f;
  int index = -1;
  if (lane < qLength && rowBest != nullptr && isValid(qRows, qRows.rowStart[query] + lane)) {
    rowValue = rowBest[32 * slot + lane];
    index = rowIndex[32 * slot + lane];
  }
  if (argmax != nullptr && lane < argmaxStride) argmax[pair * argmaxStride + lane] = (Index)index;
  for (int offset = 16; offset > 0; offset /= 2) rowValue += __shfl_xor_sync(0xffffffffu, rowValue, offset);
  if (lane == 0) scores[pair] = rowBest == nullptr ? EMPTY_DOCUMENT_SCORE : rowValue;
}

// ROWS: query rows per pass, 32, 64 (one warpgroup) or 128 (two). With 32, only 32 rows are loaded per
// k-chunk and the warpgroup's m64 operand reads its rows 32-63 from whatever follows (the next k-chunk, or
// the ring): those rows of the product are never used, and the query takes half the shared memory.
// GROUP: queries per item (1, or 4 with ROWS = 128: query groups, all pairs, queries of <= 32 tokens,
// not split). Index: the argmax type (int, or int16_t for documents of at most 32766 tokens).
template <typename In, int ROWS, int STAGES, int GROUP, bool ARGMAX, typename Index>
__device__ void forwardWgmma(const In& in, long long pairs, float* scores, Index* argmax, int argmaxStride,
                             Split split) {
  constexpr int WARPGROUPS = ROWS > 64 ? 2 : 1;
  constexpr int THREADS = WARPGROUPS * WARPGROUP_THREADS;
  constexpr int LOOKAHEAD = STAGES - 2;  // stages in flight while one is multiplied and one drains
  static_assert(LOOKAHEAD >= 1, "the ring holds at least three stages");
  static_assert(GROUP == 1 || GROUP * 32 == ROWS, "a query group fills the pass's rows, 32 per query");
  using T = typename In::T;
  constexpr bool SCALED = In::SCALED;
  constexpr bool EXPAND_D = Side<T, typename In::SD>::EXPANDED;
  static_assert(!(SCALED && ARGMAX), "compressed tokens are for inference");
  using Acc = typename Wgmma<T>::Accumulator;
  extern __shared__ uint8_t dynamicShared[];
  __shared__ float rowBest[128];
  __shared__ int rowIndex[128];
  __shared__ float passSums[4];

  const int kChunks = (in.dim + Layout<T>::ROW - 1) / Layout<T>::ROW;
  // dynamic shared memory: [alignment pad to 1024][query: kChunks x ROWS x 128 B][ring: STAGES x 16 KB]
  // [compressed tokens: the ring's tile scales, STAGES x 512 B]
  const uint32_t queryTile = ((uint32_t)__cvta_generic_to_shared(dynamicShared) + 1023) & ~1023u;
  const uint32_t ring = queryTile + kChunks * ROWS * SWIZZLE_ROW_BYTES;
  const uint32_t scaleRing = ring + STAGES * WGMMA_STAGE_BYTES;

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warpgroup = warp / 4, g = lane / 4, tig = lane % 4;
  const int myRow = warpgroup * 64 + (warp % 4) * 16 + g;  // and myRow + 8
  const bool holdsRows = (warp % 4) * 16 < ROWS;
  // descriptors of this warpgroup's first query rows and of ring slot 0; the start address (bits 0-13, in
  // 16-byte units) then advances by plain addition
  const uint64_t queryDescriptor = tileDescriptor(queryTile + warpgroup * 64 * SWIZZLE_ROW_BYTES);
  const uint64_t ringDescriptor = tileDescriptor(ring);

  long long begin, end;
  if constexpr (GROUP > 1) {
    groupRun(pairs, in.perQuery, begin, end);
  } else {
    begin = pairs * blockIdx.x / gridDim.x;
    end = pairs * (blockIdx.x + 1) / gridDim.x;
  }

  StageCursor producer;
  seekStages<In, ROWS, GROUP>(producer, begin, end, pairs, in, split);
  int producerSlot = 0;
  PendingStage<THREADS> pending;
  pending.live = false;
  // With expanded documents a call stores the stage the previous call loaded: stage s is stored by the
  // consumer's stage s - 1 at the latest (LOOKAHEAD >= 2), into a slot whose wgmma (stage s - STAGES) is done.
  auto produce = [&]() {
    if constexpr (EXPAND_D) {
      if (pending.live) storeExpandedStage<In, THREADS>(pending);
      pending.live = false;
    }
    if (producer.item < end) {
      const uint32_t slot = ring + producerSlot * WGMMA_STAGE_BYTES;
      if constexpr (EXPAND_D) {
        loadExpandedStage<In, THREADS>(pending, slot, in, producer.work, producer.tile, producer.kc);
      } else {
        issueStage<In, THREADS>(slot, in, producer.work, producer.tile, producer.kc);
      }
      if (SCALED && producer.kc == kChunks - 1)
        issueTileScales<In>(scaleRing + producerSlot * WGMMA_SCALE_BYTES, in, producer.work, producer.tile);
      producerSlot = producerSlot + 1 == STAGES ? 0 : producerSlot + 1;
      if (++producer.kc == kChunks) {
        producer.kc = 0;
        if (++producer.tile == producer.work.tiles) {
          producer.tile = 0;
          if (++producer.pass == producer.work.endPass)
            seekStages<In, ROWS, GROUP>(producer, producer.item + 1, end, pairs, in, split);
        }
      }
    }
    commitGroup();
  };
#pragma unroll 1
  for (int s = 0; s < LOOKAHEAD; s++) produce();

  int consumerSlot = 0;
  int loadedQuery = -1, loadedPass = -1;
  for (long long item = begin; item < end; item++) {
    const ItemWork w = itemWork<In, ROWS, GROUP>(in, item, pairs, split);
    if constexpr (GROUP > 1) {
      if (w.emptyDocument) {
        sumGroupRows<Index>(in.qRows, w, in.perQuery, in.docOffset, nullptr, nullptr, scores, argmax, argmaxStride);
        continue;
      }
    } else if (!isSliced()) {
      clearArgmaxTail(argmax, item, argmaxStride, w.qLength, THREADS);
      if (w.emptyDocument) {
        if (threadIdx.x == 0) scores[item] = EMPTY_DOCUMENT_SCORE;
        if (argmax != nullptr)
          for (int s = threadIdx.x; s < w.qLength; s += THREADS) argmax[item * argmaxStride + s] = -1;
        continue;
      }
    }
    float total = 0.f;  // thread 0's running sum over passes (GROUP = 1)
    // the consumer walks the same passes as the producer (StageCursor), stage for stage
    for (int pass = w.firstPass; pass < (w.tiles > 0 ? w.endPass : 0); pass++) {
      const int r0 = pass * ROWS;
      if (w.query != loadedQuery || pass != loadedPass) {
        __syncthreads();  // every warpgroup's wgmma on the old rows has completed (waited at its last tile)
        issueQuery<In, THREADS, ROWS, GROUP>(queryTile, in, w, r0, kChunks);
        commitGroup();
        waitGroups<0>();
        fenceProxyAsync();
        loadedQuery = w.query;
        loadedPass = pass;
      }
      float best[2] = {-INFINITY, -INFINITY};
      int bestIndex[2] = {NO_TOKEN, NO_TOKEN};
      float rowScale[2] = {1.f, 1.f};
      bool flip[2] = {false, false};
      if constexpr (SCALED) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
          rowScale[h] = passRowScale<In, ROWS, GROUP>(in, w, r0, myRow + 8 * h);
          flip[h] = rowScale[h] < 0.f;
        }
      }
      // One tile of N tokens from t0 into `acc` (N / 2 registers), then folded into the running max. Its
      // k-chunks: only wgmma touches the accumulators here, so a group may still run while the next stage
      // is awaited (reading them in this loop would make the compiler wait).
      auto multiplyAndFold = [&](auto& acc, auto columns, int t0) {
        constexpr int N = decltype(columns)::value;
        uint32_t tileScales = 0;
        for (int kc = 0; kc < kChunks; kc++) {
          waitGroups<LOOKAHEAD - 1>();  // this thread's pieces of the stage have landed
          fenceProxyAsync();
          __syncthreads();  // ... everyone's have, and the slot refilled next is retired
          produce();
          const uint64_t a = queryDescriptor + (uint64_t)(kc * ROWS * SWIZZLE_ROW_BYTES / 16);
          const uint64_t b = ringDescriptor + (uint64_t)(consumerSlot * WGMMA_STAGE_BYTES / 16);
          tileScales = scaleRing + consumerSlot * WGMMA_SCALE_BYTES;  // the last k-chunk's are the tile's
          consumerSlot = consumerSlot + 1 == STAGES ? 0 : consumerSlot + 1;
          wgmmaFence();
#pragma unroll
          for (int k = 0; k < SWIZZLE_ROW_BYTES / WGMMA_K_BYTES; k++)  // 32 bytes = 2 descriptor units
            Wgmma<T>::template run<N>(acc, a + 2 * k, b + 2 * k, kc > 0 || k > 0);
          wgmmaCommit();
          wgmmaWait<1>();
        }
        wgmmaWait<0>();
        pinAccumulators(acc);
        if (holdsRows) {  // with ROWS = 32, warps 2 and 3 hold only the unused rows 32-63
          if constexpr (SCALED) {
            foldScaledTile<N>(best, acc, flip, tileScales, in.dRows, w.dStart, t0, w.tEnd, tig);
          } else {
            foldTile<ARGMAX, N, false>(best, bestIndex, acc, in.dRows, w.dStart, t0, w.tEnd, tig);
          }
        }
      };
      // A document's last tile of at most 64 tokens is multiplied 64 wide (300 tokens: 128 + 128 + 64
      // columns instead of 3 x 128) into the first 32 accumulators, in a loop of its own: the two shapes
      // behind an if made ptxas serialise every wgmma of the kernel, and a second array spilled.
      const int narrowTiles = w.tiles > 0 && w.tEnd - (w.tBegin + (w.tiles - 1) * WGMMA_TOKENS) <= 64 ? 1 : 0;
      Acc acc[64];
      for (int tile = 0; tile < w.tiles - narrowTiles; tile++)
        multiplyAndFold(acc, std::integral_constant<int, 128>{}, w.tBegin + tile * WGMMA_TOKENS);
      for (int tile = w.tiles - narrowTiles; tile < w.tiles; tile++)
        multiplyAndFold(reinterpret_cast<Acc(&)[32]>(acc), std::integral_constant<int, 64>{},
                        w.tBegin + tile * WGMMA_TOKENS);
      // epilogue 1: each row's max across its quad, into shared memory
#pragma unroll
      for (int h = 0; h < 2; h++) {
        float v = best[h];
        int i = bestIndex[h];
        quadMax<ARGMAX>(v, i);
        if constexpr (SCALED) v = rowScaled(v, rowScale[h]);
        if (tig == 0 && myRow + 8 * h < ROWS) {  // (with 32 rows, warps 2-3 hold none)
          rowBest[myRow + 8 * h] = v;
          rowIndex[myRow + 8 * h] = ARGMAX ? argmaxOrFirstValid(i, in.dRows, w.dStart, w.tEnd) : i;
        }
      }
      __syncthreads();
      if constexpr (GROUP == 1) {
        sumPassRows<ROWS, Index>(in.qRows, w, item, r0, rowBest, rowIndex, passSums, total, argmax,
                                 argmaxStride, split);
      } else {
        sumGroupRows<Index>(in.qRows, w, in.perQuery, in.docOffset, rowBest, rowIndex, scores, argmax, argmaxStride);
      }
    }
    if (GROUP == 1 && threadIdx.x == 0 && !isSliced()) scores[item] = total;
  }
  waitGroups<0>();  // nothing may still be copying into shared memory when the block exits
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Same tensors as maxsim_forward_*, with each side's per-token scales (read where that side is compressed,
// null otherwise); pairs: the launch's pair count; work items (pairs, or with query groups (document,
// 4 queries)) in one contiguous run per block (grid.x blocks; with query groups a multiple of ceil(queries / 4),
// see groupRun); grid.y = slices with the split-Ld parameters of maxsim_forward_mma, or with passSplit = 1 the
// query's passes (see Split; neither with query groups). Dynamic shared memory: 1024 + ceil(d x operand bytes /
// 128) x ROWS x 128 + STAGES x 16 KB (+ STAGES x 512 with compressed tokens) bytes. Entries:
//   maxsim_forward_wgmma_r{ROWS}_s{STAGES}[_argmax]_{types}: one pair per item, ROWS query rows per pass
//     (32 and 64: one warpgroup; 128: two);
//   maxsim_forward_wgmma_g4_s{STAGES}[_argmax|_argmax16]_{types}: query groups of 4 (all pairs, Lq <= 32);
// 4 or 6 stages, the host taking the deeper ring where it keeps two blocks per SM (two warpgroups: at most
// 128 registers a thread, so that two blocks fit the register file). {types}: one type for both sides (bf16,
// f16; s8 and e4m3, inference only), or the queries' then the documents' (bf16_s8, f16_e4m3, ...).
#define MAXSIM_WGMMA_ENTRY(IN, ROWS, STAGES, GROUP, ARGMAX, Index, NAME)                                         \
  extern "C" __global__ void __launch_bounds__(ROWS > 64 ? 256 : 128, ROWS > 64 ? 2 : 1) NAME(                \
      const IN::QStorage* q, const int* qStart, const int* qLength, const uint8_t* qMask, const float* qScale,  \
      const IN::DStorage* d, const int* dStart, const int* dLength, const uint8_t* dMask, const float* dScale,  \
      const int* dValid, int dim, int mode, int perQuery, int docOffset, long long pairs, float* scores,        \
      void* argmax, int argmaxStride, int sliceTokens, float* partialMax, int* partialArgmax,                   \
      int partialStride, int passSplit) {                                                                       \
    const IN in{q, Rows{qStart, qLength, qMask}, qScale, d, Rows{dStart, dLength, dMask}, dScale, dValid, dim,  \
                mode, perQuery, docOffset};                                                                     \
    forwardWgmma<IN, ROWS, STAGES, GROUP, ARGMAX, Index>(                                                       \
        in, pairs, scores, static_cast<Index*>(argmax), argmaxStride,                                           \
        Split{sliceTokens, partialMax, partialArgmax, partialStride, passSplit});                               \
  }
#define MAXSIM_WGMMA_PAIRS(IN, SUFFIX, ROWS, STAGES)                                                             \
  MAXSIM_WGMMA_ENTRY(IN, ROWS, STAGES, 1, false, int, maxsim_forward_wgmma_r##ROWS##_s##STAGES##_##SUFFIX)        \
  MAXSIM_WGMMA_ENTRY(IN, ROWS, STAGES, 1, true, int, maxsim_forward_wgmma_r##ROWS##_s##STAGES##_argmax_##SUFFIX)
#define MAXSIM_WGMMA_GROUPS(IN, SUFFIX, STAGES)                                                                  \
  MAXSIM_WGMMA_ENTRY(IN, 128, STAGES, 4, false, int, maxsim_forward_wgmma_g4_s##STAGES##_##SUFFIX)                \
  MAXSIM_WGMMA_ENTRY(IN, 128, STAGES, 4, true, int, maxsim_forward_wgmma_g4_s##STAGES##_argmax_##SUFFIX)          \
  MAXSIM_WGMMA_ENTRY(IN, 128, STAGES, 4, true, int16_t, maxsim_forward_wgmma_g4_s##STAGES##_argmax16_##SUFFIX)
#define MAXSIM_WGMMA_TYPE(IN, SUFFIX)         \
  MAXSIM_WGMMA_PAIRS(IN, SUFFIX, 32, 4)       \
  MAXSIM_WGMMA_PAIRS(IN, SUFFIX, 32, 6)       \
  MAXSIM_WGMMA_PAIRS(IN, SUFFIX, 64, 4)       \
  MAXSIM_WGMMA_PAIRS(IN, SUFFIX, 64, 6)       \
  MAXSIM_WGMMA_PAIRS(IN, SUFFIX, 128, 4)      \
  MAXSIM_WGMMA_PAIRS(IN, SUFFIX, 128, 6)      \
  MAXSIM_WGMMA_GROUPS(IN, SUFFIX, 4)          \
  MAXSIM_WGMMA_GROUPS(IN, SUFFIX, 6)
// compressed tokens (inference only): the same passes and query groups, no argmax
#define MAXSIM_WGMMA_COMPRESSED(IN, SUFFIX)                                                     \
  MAXSIM_WGMMA_ENTRY(IN, 32, 4, 1, false, int, maxsim_forward_wgmma_r32_s4_##SUFFIX)             \
  MAXSIM_WGMMA_ENTRY(IN, 32, 6, 1, false, int, maxsim_forward_wgmma_r32_s6_##SUFFIX)             \
  MAXSIM_WGMMA_ENTRY(IN, 64, 4, 1, false, int, maxsim_forward_wgmma_r64_s4_##SUFFIX)             \
  MAXSIM_WGMMA_ENTRY(IN, 64, 6, 1, false, int, maxsim_forward_wgmma_r64_s6_##SUFFIX)             \
  MAXSIM_WGMMA_ENTRY(IN, 128, 4, 1, false, int, maxsim_forward_wgmma_r128_s4_##SUFFIX)           \
  MAXSIM_WGMMA_ENTRY(IN, 128, 6, 1, false, int, maxsim_forward_wgmma_r128_s6_##SUFFIX)           \
  MAXSIM_WGMMA_ENTRY(IN, 128, 4, 4, false, int, maxsim_forward_wgmma_g4_s4_##SUFFIX)             \
  MAXSIM_WGMMA_ENTRY(IN, 128, 6, 4, false, int, maxsim_forward_wgmma_g4_s6_##SUFFIX)

using WgmmaBf16 = Operands<__nv_bfloat16>;
using WgmmaF16 = Operands<__half>;
MAXSIM_WGMMA_TYPE(WgmmaBf16, bf16)
MAXSIM_WGMMA_TYPE(WgmmaF16, f16)

// int8 on both sides: the bytes as stored, on the s8 tensor cores
using WgmmaS8 = Operands<int8_t>;
MAXSIM_WGMMA_COMPRESSED(WgmmaS8, s8)
// bf16 or fp16 queries against int8 or e4m3 documents, and e4m3 on both sides (fp16 holds every e4m3 value):
// expanded on their way into the tiles
using WgmmaBf16S8 = Operands<__nv_bfloat16, __nv_bfloat16, S8>;
using WgmmaBf16E4m3 = Operands<__nv_bfloat16, __nv_bfloat16, E4M3>;
using WgmmaF16S8 = Operands<__half, __half, S8>;
using WgmmaF16E4m3 = Operands<__half, __half, E4M3>;
using WgmmaE4m3 = Operands<__half, E4M3, E4M3>;
MAXSIM_WGMMA_COMPRESSED(WgmmaBf16S8, bf16_s8)
MAXSIM_WGMMA_COMPRESSED(WgmmaBf16E4m3, bf16_e4m3)
MAXSIM_WGMMA_COMPRESSED(WgmmaF16S8, f16_s8)
MAXSIM_WGMMA_COMPRESSED(WgmmaF16E4m3, f16_e4m3)
MAXSIM_WGMMA_COMPRESSED(WgmmaE4m3, e4m3)
#endif
