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
  int passes, stagesPerPass;
};

template <typename T, int ROWS>
__device__ __forceinline__ PairWork pairWork(const Operands<T>& in, long long pair, const Split& split, int kChunks) {
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
  const int tiles = (w.tEnd - w.tBegin + WGMMA_TOKENS - 1) / WGMMA_TOKENS;
  w.stagesPerPass = w.emptyDocument || w.tBegin >= w.tEnd || w.passes == 0 ? 0 : tiles * kChunks;
  return w;
}

// Producer: cp.async of stage `stage` of a pass (tile stage / kChunks, k-chunk stage % kChunks) into the
// slot at shared address `slot`. Tokens past the slice and halves past d are zeros.
template <typename T, int THREADS>
__device__ __forceinline__ void issueStage(uint32_t slot, const Operands<T>& in, const PairWork& w, int stage,
                                           int kChunks) {
  const int t0 = w.tBegin + (stage / kChunks) * WGMMA_TOKENS;
  const int k0 = (stage % kChunks) * SWIZZLE_ROW_HALVES;
#pragma unroll
  for (int e = threadIdx.x; e < WGMMA_TOKENS * 8; e += THREADS) {
    const int token = e / 8, chunk = e % 8;
    const int t = t0 + token, k = k0 + chunk * 8;
    const bool present = t < w.tEnd && k < in.dim;
    copyAsync16(slot + swizzled(token, chunk), present ? in.d + (size_t)(w.dStart + t) * in.dim + k : in.d, present);
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

// Where the producer is: pair, pass and stage of its run.
struct StageCursor {
  long long pair;  // == end when the run is exhausted
  int pass, stage;
  PairWork work;
};

template <typename T, int ROWS>
__device__ __forceinline__ void seekStages(StageCursor& c, long long pair, long long end, const Operands<T>& in,
                                           const Split& split, int kChunks) {
  for (; pair < end; pair++) {
    c.work = pairWork<T, ROWS>(in, pair, split, kChunks);
    if (c.work.stagesPerPass > 0) {
      c.pair = pair;
      c.pass = c.stage = 0;
      return;
    }
  }
  c.pair = end;
}

// Online max over one tile's accumulators (tokens t0 .. t0 + 127 of the document): this thread's rows
// g and g + 8 of its warp, tokens t0 + 8j + 2 tig + {0, 1}.
template <bool ARGMAX>
__device__ __forceinline__ void foldTile(float (&best)[2], int (&bestIndex)[2], const float (&acc)[64],
                                         const Rows& dRows, int dStart, int t0, int tEnd, int tig) {
  const bool whole = t0 + WGMMA_TOKENS <= tEnd && dRows.mask == nullptr;
#pragma unroll
  for (int j = 0; j < 16; j++) {
#pragma unroll
    for (int c = 0; c < 2; c++) {
      const int t = t0 + 8 * j + 2 * tig + c;
      const bool valid = whole || (t < tEnd && isValid(dRows, dStart + t));
      if constexpr (ARGMAX) {
        if (valid) {
          maxUpdate(best[0], bestIndex[0], acc[4 * j + c], t);
          maxUpdate(best[1], bestIndex[1], acc[4 * j + 2 + c], t);
        }
      } else {
        best[0] = maxKeepNaN(best[0], valid ? acc[4 * j + c] : -INFINITY);
        best[1] = maxKeepNaN(best[1], valid ? acc[4 * j + 2 + c] : -INFINITY);
      }
    }
  }
}

template <typename T, int WARPGROUPS, int STAGES, bool ARGMAX>
__device__ void forwardWgmma(const Operands<T>& in, long long pairs, float* scores, int* argmax, int argmaxStride,
                             Split split) {
  constexpr int THREADS = WARPGROUPS * WARPGROUP_THREADS;
  constexpr int ROWS = 64 * WARPGROUPS;
  constexpr int LOOKAHEAD = STAGES - 2;  // stages in flight while one is multiplied and one drains
  static_assert(LOOKAHEAD >= 1, "the ring holds at least three stages");
  extern __shared__ uint8_t dynamicShared[];
  __shared__ float rowBest[128];
  __shared__ int rowIndex[128];
  __shared__ float passSums[4];

  const int kChunks = (in.dim + SWIZZLE_ROW_HALVES - 1) / SWIZZLE_ROW_HALVES;
  // dynamic shared memory: [1024-byte alignment pad][ring: STAGES x 16 KB][query: kChunks x ROWS x 128 B]
  const uint32_t base = ((uint32_t)__cvta_generic_to_shared(dynamicShared) + 1023) & ~1023u;
  const uint32_t ring = base;
  const uint32_t queryTile = ring + STAGES * WGMMA_STAGE_BYTES;

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warpgroup = warp / 4, g = lane / 4, tig = lane % 4;
  const int myRow = warpgroup * 64 + (warp % 4) * 16 + g;  // and myRow + 8

  const long long begin = pairs * blockIdx.x / gridDim.x, end = pairs * (blockIdx.x + 1) / gridDim.x;

  StageCursor producer;
  seekStages<T, ROWS>(producer, begin, end, in, split, kChunks);
  int produced = 0;
  auto produce = [&]() {
    if (producer.pair < end) {
      issueStage<T, THREADS>(ring + (produced % STAGES) * WGMMA_STAGE_BYTES, in, producer.work, producer.stage,
                             kChunks);
      produced++;
      if (++producer.stage == producer.work.stagesPerPass) {
        producer.stage = 0;
        if (++producer.pass == producer.work.passes)
          seekStages<T, ROWS>(producer, producer.pair + 1, end, in, split, kChunks);
      }
    }
    commitGroup();
  };
#pragma unroll 1
  for (int s = 0; s < LOOKAHEAD; s++) produce();

  int consumed = 0;
  int loadedQuery = -1, loadedPass = -1;
  for (long long pair = begin; pair < end; pair++) {
    const PairWork w = pairWork<T, ROWS>(in, pair, split, kChunks);
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
    if (w.stagesPerPass > 0) {
      for (int pass = 0; pass < w.passes; pass++) {
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
        const int tiles = w.stagesPerPass / kChunks;
        for (int tile = 0; tile < tiles; tile++) {
          // the k-chunks of one tile: only wgmma touches the accumulators here, so a group may still run
          // while the next stage is awaited (reading them in this loop would make the compiler wait)
          for (int kc = 0; kc < kChunks; kc++) {
            waitGroups<LOOKAHEAD - 1>();  // this thread's pieces of the stage have landed
            fenceProxyAsync();
            __syncthreads();  // ... everyone's have, and the slot refilled next is retired
            produce();
            const uint32_t slot = ring + (consumed % STAGES) * WGMMA_STAGE_BYTES;
            consumed++;
            const uint32_t rows = queryTile + kc * (ROWS * SWIZZLE_ROW_BYTES) + warpgroup * 64 * SWIZZLE_ROW_BYTES;
            wgmmaFence();
#pragma unroll
            for (int k = 0; k < SWIZZLE_ROW_HALVES / 16; k++)
              Wgmma<T>::run(acc, tileDescriptor(rows + 32 * k), tileDescriptor(slot + 32 * k), kc > 0 || k > 0);
            wgmmaCommit();
            wgmmaWait<1>();
          }
          wgmmaWait<0>();
          pinAccumulators(acc);
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
          if (tig == 0) {
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
    }
    if (threadIdx.x == 0 && !isSliced()) scores[pair] = total;
  }
  waitGroups<0>();  // nothing may still be copying into shared memory when the block exits
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Same tensors as maxsim_forward_*; pairs: the launch's pair count, one contiguous run per block (grid.x
// blocks); grid.y = slices with the split-Ld parameters of maxsim_forward_mma (see Split). Dynamic shared
// memory: 1024 + STAGES x 16 KB + ceil(d / 64) x ROWS x 128 bytes. Entries
// maxsim_forward_wgmma_w{WARPGROUPS}[_argmax]_{type}: w1 (64 query rows per pass, 5 stages) for queries of
// at most 64 tokens, w2 (128 rows, 4 stages) for longer ones.
#define MAXSIM_WGMMA_ENTRY(T, WARPGROUPS, STAGES, ARGMAX, NAME)                                                  \
  extern "C" __global__ void __launch_bounds__(WARPGROUPS * WARPGROUP_THREADS) NAME(                            \
      const T* q, const int* qStart, const int* qLength, const uint8_t* qMask, const T* d, const int* dStart,   \
      const int* dLength, const uint8_t* dMask, const int* dValid, int dim, int mode, int perQuery,             \
      int docOffset, long long pairs, float* scores, int* argmax, int argmaxStride, int sliceTokens,            \
      float* partialMax, int* partialArgmax, int partialStride) {                                               \
    const Operands<T> in{q, Rows{qStart, qLength, qMask}, d, Rows{dStart, dLength, dMask}, dValid, dim, mode,   \
                         perQuery, docOffset};                                                                  \
    forwardWgmma<T, WARPGROUPS, STAGES, ARGMAX>(in, pairs, scores, argmax, argmaxStride,                        \
                                                Split{sliceTokens, partialMax, partialArgmax, partialStride});  \
  }
#define MAXSIM_WGMMA_TYPE(T, SUFFIX)                                                \
  MAXSIM_WGMMA_ENTRY(T, 1, 5, false, maxsim_forward_wgmma_w1_##SUFFIX)              \
  MAXSIM_WGMMA_ENTRY(T, 1, 5, true, maxsim_forward_wgmma_w1_argmax_##SUFFIX)        \
  MAXSIM_WGMMA_ENTRY(T, 2, 4, false, maxsim_forward_wgmma_w2_##SUFFIX)              \
  MAXSIM_WGMMA_ENTRY(T, 2, 4, true, maxsim_forward_wgmma_w2_argmax_##SUFFIX)

MAXSIM_WGMMA_TYPE(__nv_bfloat16, bf16)
MAXSIM_WGMMA_TYPE(__half, f16)
#endif
