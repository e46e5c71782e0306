// Fused MaxSim forward on Hopper's warpgroup tensor cores (wgmma, sm_90a only): bf16 or fp16, fp32
// accumulation; for the launches the streaming kernel does not take (queries over 32 tokens, d over 128,
// few pairs).
//
// Why a third forward. The block kernel (maxsim_forward_mma.cu) feeds mma.sync from query fragments that
// every warp re-reads from shared memory for each 8-token n-tile: at Lq = 128 and 1024 that shared-memory
// traffic, not DRAM or the tensor cores, bounds it (17-23% of the floor, docs/benchmarks.md). wgmma reads
// both operands from shared memory itself, 64 query rows x 128 document tokens per instruction, with no
// per-thread fragment loads at all.
//
// Work:        persistent blocks, each a contiguous run of pairs (consecutive documents); a pair's query
//              rows in passes of ROWS = 64 x WARPGROUPS rows, each pass one scan of the document.
// Tiles:       A = the pass's query rows in shared memory, 128-byte swizzled and K-major, one 64-half
//              "k-chunk" of d after another; loaded when (query, pass) changes, so once per block when
//              Nq = 1 and Lq <= ROWS.
//              B = 128 document tokens x one k-chunk per stage (16 KB), every thread cp.async'ing 16-byte
//              pieces straight into the swizzled slot; a tile of 128 tokens is ceil(d / 64) stages.
// Pipeline:    a ring of STAGES slots; the producer runs STAGES - 2 stages ahead, across passes and pairs.
//              One barrier per stage publishes the stage and retires the slot that is refilled next (its
//              wgmma group was waited for one stage earlier).
// Multiply:    each warpgroup issues 4 wgmma m64n128k16 per stage into 64 fp32 accumulators per thread;
//              the next stage's group may run while this one's accumulators are still being filled.
// Online max:  after a tile's last k-chunk, each thread folds its 2 rows x 32 tokens into a running max
//              (inference: max.NaN; training: also the argmax, strict >, tokens visited in order).
// Epilogue:    max across the quad; rows through shared memory, thread t taking row t; the sum over valid
//              rows in the block kernel's order (a warp's shuffle tree, then warps, then passes in order).
#include "maxsim_async.cuh"
#include "maxsim_mma.cuh"
#include "maxsim_split.cuh"
#include "maxsim_wgmma.cuh"

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace maxsim4j {

constexpr int WGMMA_TOKENS = 128;                                       // N of one wgmma: tokens per tile
constexpr int WGMMA_STAGE_BYTES = WGMMA_TOKENS * SWIZZLE_ROW_BYTES;     // 16 KB
constexpr int WARPGROUP_THREADS = 128;

template <typename T>
struct Operands {
  const T* __restrict__ q;
  Rows qRows;
  const T* __restrict__ d;
  Rows dRows;
  const int* __restrict__ dValid;
  int dim, mode, perQuery, docOffset;
};

// What one pair asks of this block (its slice of the document, when split): stages = 0 means nothing to scan.
struct PairWork {
  int query, qStart, qLength, doc, dStart, tBegin, tEnd;
  bool emptyDocument;
  int passes, tiles;  // tiles = 0: nothing to scan
};

template <typename T, int ROWS>
__device__ __forceinline__ PairWork pairWork(const Operands<T>& in, long long pair, const Split& split) {
  PairWork w;
  w.query = (int)(pair / in.perQuery);
  w.doc = in.mode == ALL_PAIRS ? in.docOffset + (int)(pair % in.perQuery) : (int)pair;
  w.qStart = in.qRows.rowStart[w.query];
  w.qLength = in.qRows.rowLength[w.query];
  w.dStart = in.dRows.rowStart[w.doc];
  const int dLength = in.dRows.rowLength[w.doc];
  w.emptyDocument = in.dValid[w.doc] == 0;
  w.tBegin = isSliced() ? blockIdx.y * split.sliceTokens : 0;
  w.tEnd = isSliced() ? min(dLength, w.tBegin + split.sliceTokens) : dLength;
  w.passes = (w.qLength + ROWS - 1) / ROWS;
  const bool scan = !w.emptyDocument && w.tBegin < w.tEnd && w.passes > 0;
  w.tiles = scan ? (w.tEnd - w.tBegin + WGMMA_TOKENS - 1) / WGMMA_TOKENS : 0;
  return w;
}

// Producer: cp.async of k-chunk kc of tile `tile` of a pass into the slot at shared address `slot`. Thread
// t always copies piece t % 8 of tokens t / 8 + i x THREADS / 8: its shared offsets are fixed (the swizzle
// depends on token % 8 only) and its source advances by whole rows. Tokens past the slice and halves past
// d are zeros.
template <typename T, int THREADS>
__device__ __forceinline__ void issueStage(uint32_t slot, const Operands<T>& in, const PairWork& w, int tile, int kc) {
  constexpr int STEP = THREADS / 8;
  static_assert(STEP % 8 == 0, "every copy of a thread has the same swizzle phase");
  const int piece = threadIdx.x % 8, token = threadIdx.x / 8;
  const int t = w.tBegin + tile * WGMMA_TOKENS + token;
  const int k = kc * SWIZZLE_ROW_HALVES + piece * 8;
  const int remaining = w.tEnd - t;
  const bool inRow = k < in.dim;
  const T* src = in.d + (size_t)(w.dStart + t) * in.dim + k;
  const uint32_t dst = slot + swizzled(token, piece);
#pragma unroll
  for (int i = 0; i < WGMMA_TOKENS / STEP; i++) {
    const bool present = inRow && i * STEP < remaining;
    copyAsync16(dst + i * STEP * SWIZZLE_ROW_BYTES, present ? src + (size_t)i * STEP * in.dim : in.d, present);
  }
}

// The pass's ROWS query rows, k-chunk after k-chunk (rows past the query and halves past d are zeros).
template <typename T, int THREADS, int ROWS>
__device__ __forceinline__ void issueQuery(uint32_t queryTile, const Operands<T>& in, const PairWork& w, int r0,
                                           int kChunks) {
  for (int e = threadIdx.x; e < ROWS * kChunks * 8; e += THREADS) {
    const int row = e / (kChunks * 8), piece = e % (kChunks * 8);
    const int s = r0 + row, k = piece * 8;
    const bool present = s < w.qLength && k < in.dim;
    copyAsync16(queryTile + (piece / 8) * (ROWS * SWIZZLE_ROW_BYTES) + swizzled(row, piece % 8),
                present ? in.q + (size_t)(w.qStart + s) * in.dim + k : in.q, present);
  }
}

// Where the producer is: pair, pass, tile and k-chunk of its run.
struct StageCursor {
  long long pair;  // == end when the run is exhausted
  int pass, tile, kc;
  PairWork work;
};

template <typename T, int ROWS>
__device__ __forceinline__ void seekStages(StageCursor& c, long long pair, long long end, const Operands<T>& in,
                                           const Split& split) {
  for (; pair < end; pair++) {
    c.work = pairWork<T, ROWS>(in, pair, split);
    if (c.work.tiles > 0) {
      c.pair = pair;
      c.pass = c.tile = c.kc = 0;
      return;
    }
  }
  c.pair = end;
}

// Online max over one tile's accumulators (tokens t0 .. t0 + 127 of the document): this thread's rows
// g and g + 8 of its warp, tokens t0 + 8j + 2 tig + {0, 1}, visited in token order. The value is one
// max.NaN per element. The argmax (training) is found in a second pass only when the tile's max beats the
// running one (strictly, or NaN arriving first): on most tiles of a long document it does not, so the
// index costs little. A tie with an earlier tile keeps the earlier token; within a tile the first equal
// token in order wins: the lowest index, as maxUpdate would give.
template <bool ARGMAX>
__device__ __forceinline__ void foldTile(float (&best)[2], int (&bestIndex)[2], const float (&acc)[64],
                                         const Rows& dRows, int dStart, int t0, int tEnd, int tig) {
  const bool whole = t0 + WGMMA_TOKENS <= tEnd && dRows.mask == nullptr;
  float tileMax[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < 16; j++) {
#pragma unroll
    for (int c = 0; c < 2; c++) {
      const int t = t0 + 8 * j + 2 * tig + c;
      const bool valid = whole || (t < tEnd && isValid(dRows, dStart + t));
#pragma unroll
      for (int h = 0; h < 2; h++) tileMax[h] = maxKeepNaN(tileMax[h], valid ? acc[4 * j + 2 * h + c] : -INFINITY);
    }
  }
#pragma unroll
  for (int h = 0; h < 2; h++) {
    const float m = tileMax[h];
    const bool mNaN = m != m;
    if constexpr (ARGMAX) {
      if (m > best[h] || (mNaN && best[h] == best[h])) {
        int index = 0x7fffffff;
#pragma unroll
        for (int j = 15; j >= 0; j--) {  // backwards, so the first match in token order is written last
#pragma unroll
          for (int c = 1; c >= 0; c--) {
            const int t = t0 + 8 * j + 2 * tig + c;
            const float v = acc[4 * j + 2 * h + c];
            const bool valid = whole || (t < tEnd && isValid(dRows, dStart + t));
            if (valid && (v == m || (mNaN && v != v))) index = t;
          }
        }
        bestIndex[h] = index;
        best[h] = m;
      }
    } else {
      best[h] = maxKeepNaN(best[h], m);
    }
  }
}

// ROWS: query rows per pass, 32, 64 (one warpgroup) or 128 (two). With 32, only 32 rows are loaded per
// k-chunk and the warpgroup's m64 operand reads its rows 32-63 from whatever follows (the next k-chunk, or
// the ring): those rows of the product are never used, and the query takes half the shared memory.
template <typename T, int ROWS, int STAGES, bool ARGMAX>
__device__ void forwardWgmma(const Operands<T>& in, long long pairs, float* scores, int* argmax, int argmaxStride,
                             Split split) {
  constexpr int WARPGROUPS = ROWS > 64 ? 2 : 1;
  constexpr int THREADS = WARPGROUPS * WARPGROUP_THREADS;
  constexpr int LOOKAHEAD = STAGES - 2;  // stages in flight while one is multiplied and one drains
  static_assert(LOOKAHEAD >= 1, "the ring holds at least three stages");
  extern __shared__ uint8_t dynamicShared[];
  __shared__ float rowBest[128];
  __shared__ int rowIndex[128];
  __shared__ float passSums[4];

  const int kChunks = (in.dim + SWIZZLE_ROW_HALVES - 1) / SWIZZLE_ROW_HALVES;
  // dynamic shared memory: [alignment pad to 1024][query: kChunks x ROWS x 128 B][ring: STAGES x 16 KB]
  const uint32_t queryTile = ((uint32_t)__cvta_generic_to_shared(dynamicShared) + 1023) & ~1023u;
  const uint32_t ring = queryTile + kChunks * ROWS * SWIZZLE_ROW_BYTES;

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warpgroup = warp / 4, g = lane / 4, tig = lane % 4;
  const int myRow = warpgroup * 64 + (warp % 4) * 16 + g;  // and myRow + 8
  const bool holdsRows = (warp % 4) * 16 < ROWS;
  // descriptors of this warpgroup's first query rows and of ring slot 0; the start address (bits 0-13, in
  // 16-byte units) then advances by plain addition
  const uint64_t queryDescriptor = tileDescriptor(queryTile + warpgroup * 64 * SWIZZLE_ROW_BYTES);
  const uint64_t ringDescriptor = tileDescriptor(ring);

  const long long begin = pairs * blockIdx.x / gridDim.x, end = pairs * (blockIdx.x + 1) / gridDim.x;

  StageCursor producer;
  seekStages<T, ROWS>(producer, begin, end, in, split);
  int producerSlot = 0;
  auto produce = [&]() {
    if (producer.pair < end) {
      issueStage<T, THREADS>(ring + producerSlot * WGMMA_STAGE_BYTES, in, producer.work, producer.tile, producer.kc);
      producerSlot = producerSlot + 1 == STAGES ? 0 : producerSlot + 1;
      if (++producer.kc == kChunks) {
        producer.kc = 0;
        if (++producer.tile == producer.work.tiles) {
          producer.tile = 0;
          if (++producer.pass == producer.work.passes) seekStages<T, ROWS>(producer, producer.pair + 1, end, in, split);
        }
      }
    }
    commitGroup();
  };
#pragma unroll 1
  for (int s = 0; s < LOOKAHEAD; s++) produce();

  int consumerSlot = 0;
  int loadedQuery = -1, loadedPass = -1;
  for (long long pair = begin; pair < end; pair++) {
    const PairWork w = pairWork<T, ROWS>(in, pair, split);
    if (!isSliced()) {
      clearArgmaxTail(argmax, pair, argmaxStride, w.qLength, THREADS);
      if (w.emptyDocument) {
        if (threadIdx.x == 0) scores[pair] = EMPTY_DOCUMENT_SCORE;
        if (argmax != nullptr)
          for (int s = threadIdx.x; s < w.qLength; s += THREADS) argmax[pair * argmaxStride + s] = -1;
        continue;
      }
    }
    float total = 0.f;  // thread 0's running sum over passes
    for (int pass = 0; pass < (w.tiles > 0 ? w.passes : 0); pass++) {
      const int r0 = pass * ROWS;
      if (w.query != loadedQuery || pass != loadedPass) {
        __syncthreads();  // every warpgroup's wgmma on the old rows has completed (waited at its last tile)
        issueQuery<T, THREADS, ROWS>(queryTile, in, w, r0, kChunks);
        commitGroup();
        waitGroups<0>();
        fenceProxyAsync();
        loadedQuery = w.query;
        loadedPass = pass;
      }
      float best[2] = {-INFINITY, -INFINITY};
      int bestIndex[2] = {0x7fffffff, 0x7fffffff};
      float acc[64];
      for (int tile = 0; tile < w.tiles; tile++) {
        // the k-chunks of one tile: only wgmma touches the accumulators here, so a group may still run
        // while the next stage is awaited (reading them in this loop would make the compiler wait)
        for (int kc = 0; kc < kChunks; kc++) {
          waitGroups<LOOKAHEAD - 1>();  // this thread's pieces of the stage have landed
          fenceProxyAsync();
          __syncthreads();  // ... everyone's have, and the slot refilled next is retired
          produce();
          const uint64_t a = queryDescriptor + (uint64_t)(kc * ROWS * SWIZZLE_ROW_BYTES / 16);
          const uint64_t b = ringDescriptor + (uint64_t)(consumerSlot * WGMMA_STAGE_BYTES / 16);
          consumerSlot = consumerSlot + 1 == STAGES ? 0 : consumerSlot + 1;
          wgmmaFence();
#pragma unroll
          for (int k = 0; k < SWIZZLE_ROW_HALVES / 16; k++)  // 16 halves = 32 bytes = 2 descriptor units
            Wgmma<T>::run(acc, a + 2 * k, b + 2 * k, kc > 0 || k > 0);
          wgmmaCommit();
          wgmmaWait<1>();
        }
        wgmmaWait<0>();
        pinAccumulators(acc);
        if (holdsRows)  // with ROWS = 32, warps 2 and 3 hold only the unused rows 32-63
          foldTile<ARGMAX>(best, bestIndex, acc, in.dRows, w.dStart, w.tBegin + tile * WGMMA_TOKENS, w.tEnd, tig);
      }
      // epilogue 1: each row's max across its quad, into shared memory
#pragma unroll
      for (int h = 0; h < 2; h++) {
        float v = best[h];
        int i = bestIndex[h];
        if constexpr (ARGMAX) {
          quadMerge(v, i);
        } else {
          for (int offset = 1; offset < 4; offset *= 2) v = maxKeepNaN(v, __shfl_xor_sync(0xffffffffu, v, offset));
        }
        if (tig == 0 && myRow + 8 * h < ROWS) {
          rowBest[myRow + 8 * h] = v;
          rowIndex[myRow + 8 * h] = i;
        }
      }
      __syncthreads();
      // epilogue 2: thread t takes row t; the valid rows summed per warp, then across warps (thread 0)
      if (threadIdx.x < 128) {
        const int row = threadIdx.x, s = r0 + row;
        float rowValue = 0.f;
        if (row < ROWS && s < w.qLength) {
          if (isSliced()) {
            split.partialMax[partialAt(split, pair, s)] = rowBest[row];
            split.partialArgmax[partialAt(split, pair, s)] = rowIndex[row];
          } else {
            const bool valid = isValid(in.qRows, w.qStart + s);
            if (valid) rowValue = rowBest[row];
            if (argmax != nullptr) argmax[pair * argmaxStride + s] = valid ? rowIndex[row] : -1;
          }
        }
        for (int offset = 16; offset > 0; offset /= 2) rowValue += __shfl_xor_sync(0xffffffffu, rowValue, offset);
        if (lane == 0) passSums[warp] = rowValue;
      }
      __syncthreads();
      if (threadIdx.x == 0)
        for (int s = 0; s < 4; s++) total += passSums[s];
    }
    if (threadIdx.x == 0 && !isSliced()) scores[pair] = total;
  }
  waitGroups<0>();  // nothing may still be copying into shared memory when the block exits
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Same tensors as maxsim_forward_*; pairs: the launch's pair count, one contiguous run per block (grid.x
// blocks); grid.y = slices with the split-Ld parameters of maxsim_forward_mma (see Split). Dynamic shared
// memory: 1024 + ceil(d / 64) x ROWS x 128 + STAGES x 16 KB bytes. Entries
// maxsim_forward_wgmma_r{ROWS}_s{STAGES}[_argmax]_{type}: ROWS query rows per pass (32 and 64: one
// warpgroup; 128: two); 4 or 6 stages, the host taking the deeper ring where it keeps two blocks per SM.
#define MAXSIM_WGMMA_ENTRY(T, ROWS, STAGES, ARGMAX, NAME)                                                       \
  extern "C" __global__ void __launch_bounds__(ROWS > 64 ? 256 : 128) NAME(                                     \
      const T* q, const int* qStart, const int* qLength, const uint8_t* qMask, const T* d, const int* dStart,   \
      const int* dLength, const uint8_t* dMask, const int* dValid, int dim, int mode, int perQuery,             \
      int docOffset, long long pairs, float* scores, int* argmax, int argmaxStride, int sliceTokens,            \
      float* partialMax, int* partialArgmax, int partialStride) {                                               \
    const Operands<T> in{q, Rows{qStart, qLength, qMask}, d, Rows{dStart, dLength, dMask}, dValid, dim, mode,   \
                         perQuery, docOffset};                                                                  \
    forwardWgmma<T, ROWS, STAGES, ARGMAX>(in, pairs, scores, argmax, argmaxStride,                              \
                                          Split{sliceTokens, partialMax, partialArgmax, partialStride});        \
  }
#define MAXSIM_WGMMA_SHAPE(T, SUFFIX, ROWS, STAGES)                                                       \
  MAXSIM_WGMMA_ENTRY(T, ROWS, STAGES, false, maxsim_forward_wgmma_r##ROWS##_s##STAGES##_##SUFFIX)          \
  MAXSIM_WGMMA_ENTRY(T, ROWS, STAGES, true, maxsim_forward_wgmma_r##ROWS##_s##STAGES##_argmax_##SUFFIX)
#define MAXSIM_WGMMA_TYPE(T, SUFFIX)         \
  MAXSIM_WGMMA_SHAPE(T, SUFFIX, 32, 4)       \
  MAXSIM_WGMMA_SHAPE(T, SUFFIX, 32, 6)       \
  MAXSIM_WGMMA_SHAPE(T, SUFFIX, 64, 4)       \
  MAXSIM_WGMMA_SHAPE(T, SUFFIX, 64, 6)       \
  MAXSIM_WGMMA_SHAPE(T, SUFFIX, 128, 4)      \
  MAXSIM_WGMMA_SHAPE(T, SUFFIX, 128, 6)

MAXSIM_WGMMA_TYPE(__nv_bfloat16, bf16)
MAXSIM_WGMMA_TYPE(__half, f16)
#endif
