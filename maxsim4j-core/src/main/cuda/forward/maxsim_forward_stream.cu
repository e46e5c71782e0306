// Fused MaxSim forward for short queries (Lq <= 32) and d <= 128 on tensor cores (sm_80+): one warp per
// (query, document) pair, persistent warps, document tiles streamed through a per-warp ring (cp.async, or bulk copies
// on sm_90).
//
// Why a second tensor-core kernel. The block-per-pair kernel (maxsim_forward_mma.cu) loads document tiles
// straight into registers: bytes in flight are bounded by registers (and the 6 scoreboards a warp has for
// outstanding loads), a block's prologue stages the query through shared memory and its epilogue merges
// four warps behind __syncthreads; under Nsight Compute its warps stalled mostly on those loads with DRAM
// far from busy. Here each warp owns whole pairs, a contiguous run of them (with
// one query, partly taken at run time instead: maxsim_work.cuh):
//
// Tiles:       A = the query's 32 rows as 2 m-tiles in registers (k permutation of maxsim_forward_mma.cu),
//              rebuilt only when the query changes (all pairs with Nq = 1: once per warp).
//              B = an n-tile of 8 document tokens x CHUNKS 32-wide chunks of d. Each thread copies its own
//              16 bytes per chunk with cp.async into its own slot of the warp's ring of STAGES tiles, and
//              reads them back with one 16-byte shared load: no other thread touches them, so no barrier,
//              and the slots are laid out lane-major, so no bank conflicts.
//              Inference on sm_90 over at least STREAM_BULK_PAIRS_PER_WARP pairs a warp, where d fills its
//              chunks (d = 32 x CHUNKS): a tile's rows are contiguous in global memory, so lane 0 copies the
//              whole tile with one bulk copy (TMA) completing on the slot's barrier, and the slot holds the
//              rows as stored. DRAM serves those long copies faster than 8 rows x 64 bytes per warp
//              instruction (scripts/gpu-read-ceiling.cu), at the price of a warp barrier per tile and two-way
//              bank conflicts on the shared loads; a copy's longer latency shows where a warp has few pairs
//              to run ahead across, so launches with fewer keep the per-thread copies.
// Pipeline:    one commit group (or barrier phase) per tile; the producer runs STAGES - 1 tiles ahead of the consumer
//              across document and pair boundaries (it takes the next pair when it reaches the end of one, so the next
//              document's first tiles load during this one's epilogue) and tells the consumer which pairs it took
//              through a small per-warp queue. A warp keeps up to (STAGES - 1) x CHUNKS x 512 bytes in flight without
//              holding them in registers; the per-thread copies carry the 128-byte L2 prefetch hint (a DRAM miss
//              fetches whole 128-byte blocks).
// Online max:  per (row, thread) in registers. Inference keeps the value only (max.NaN: NaN propagates in
//              one instruction); training also keeps the argmax (strict >, ties to the lower token).
// Epilogue:    max across the quad; lane L takes row L and the warp sums valid rows in the same shuffle
//              tree as the block kernels, so every kernel (and top-k) gives the same bits.
#include "common/maxsim_async.cuh"
#include "common/maxsim_mma.cuh"
#include "common/maxsim_tma.cuh"
#include "forward/maxsim_work.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
namespace maxsim4j {

constexpr int STREAM_WARPS = 4;
constexpr int STREAM_THREADS = STREAM_WARPS * 32;
constexpr int STREAM_RING_BYTES = 12 * 1024;  // per warp (default): 4 warps x 12 KB = 48 KB static shared memory
// Pair queue entries per warp the host provides as dynamic shared memory: 4 warps x 32 x 8 bytes = 1 KB.
constexpr int STREAM_QUEUE_ENTRIES = 32;
// Tile barriers per warp the host provides for inference on sm_90 as dynamic shared memory, before the queues: 4
// warps x 32 x 8 bytes (not on older GPUs, whose smaller shared memory would then hold fewer blocks).
constexpr int STREAM_BARRIERS = 32;
// Pairs a warp takes, on average, from which the launch reads tiles by bulk copies (above).
constexpr int STREAM_BULK_PAIRS_PER_WARP = 4;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
constexpr int STREAM_BARRIER_SLOTS = STREAM_WARPS * STREAM_BARRIERS;
#else
constexpr int STREAM_BARRIER_SLOTS = 0;
#endif

__device__ __forceinline__ uint4 loadShared16(uint32_t slot) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(slot));
  return v;
}

// Where the producer is: its pair and the next tile of it.
struct PairCursor {
  long long pair;  // -1 once no pair is left
  int doc, dStart, dLength;
  int tile;
};

__device__ __forceinline__ int documentOf(long long pair, int mode, int perQuery, int docOffset) {
  return mode == ALL_PAIRS ? docOffset + (int)(pair % perQuery) : (int)pair;
}

// Producer: cp.async of the cursor's next tile (NT n-tiles of 8 tokens) into ring slot `slot` (zeros past
// the document or d), with the 128-byte L2 prefetch hint. Slot layout: [slot][n][chunk][lane] x 16 bytes.
template <typename T, int CHUNKS, int NT>
__device__ __forceinline__ void issueTile(uint32_t ring, int slot, const PairCursor& c, const T* __restrict__ d,
                                          int dim, int g, int tig) {
#pragma unroll
  for (int n = 0; n < NT; n++) {
    const int token = c.tile * 8 * NT + 8 * n + g;
    const bool inDocument = token < c.dLength;
    const T* row = d + (size_t)(c.dStart + (inDocument ? token : 0)) * dim + tig * 8;
#pragma unroll
    for (int k = 0; k < CHUNKS; k++) {
      const bool present = inDocument && k * CHUNK + tig * 8 < dim;
      copyAsync16<128>(ring + ((slot * NT + n) * CHUNKS + k) * 512, present ? row + k * CHUNK : d, present);
    }
  }
}

// Producer on sm_90: the cursor's next tile (NT x 8 rows of exactly CHUNKS x 64 bytes, contiguous) into slot
// `slot` of the warp's ring at `base` with one bulk copy by lane 0, completing on barrier `bar`. Rows past the
// document are not copied: the slot keeps an older tile's there, and the consumer counts no token past dLength.
// The bulk-copy helpers compile to nothing below sm_90, where `bulk` is false (their PTX is sm_90's).
template <typename T, int CHUNKS, int NT>
__device__ __forceinline__ void issueBulkTile(uint32_t base, int slot, uint32_t bar, const PairCursor& c,
                                              const T* __restrict__ d, int lane) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  constexpr int ROW_BYTES = CHUNKS * 64;
  if (lane == 0) {
    const int first = c.tile * 8 * NT;
    const int rows = min(8 * NT, c.dLength - first);
    // the consumer's shared loads of this slot (ordered before by the warp barrier) precede the TMA's writes
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    mbarrierExpectBytes(bar, rows * ROW_BYTES);
    bulkCopy(base + slot * (NT * CHUNKS * 512), d + (size_t)(c.dStart + first) * (CHUNKS * 32), rows * ROW_BYTES,
             bar);
  }
#endif
}

// The warp's STAGES tile barriers, one arrival (lane 0's) a phase, before the first copy names them.
template <int STAGES>
__device__ __forceinline__ void initTileBarriers(uint32_t barriers, int lane) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  if (lane == 0) {
    for (int s = 0; s < STAGES; s++) mbarrierInit(barriers + 8 * s, 1);
    fenceBarrierInit();
  }
  __syncwarp();
#endif
}

__device__ __forceinline__ void waitTile(uint32_t bar, uint32_t parity) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  mbarrierWait(bar, parity);
#endif
}

// Index: the argmax element type, int (int32) or int16_t (documents of at most 32766 tokens); unused without ARGMAX.
// DYNAMIC: pairs partly taken at run time (below); otherwise each warp scans a contiguous run of pairs.
template <typename T, int CHUNKS, int NT, int RING, bool ARGMAX, typename Index, bool DYNAMIC>
__device__ void forwardStream(const T* __restrict__ q, Rows qRows, const T* __restrict__ d, Rows dRows,
                              const int* __restrict__ dValid, int dim, int mode, int perQuery, int docOffset,
                              long long pairs, float* scores, Index* argmax, int argmaxStride,
                              unsigned long long* work) {
  constexpr int STAGES = RING / (NT * CHUNKS * 512);
  static_assert(STAGES >= 2, "the ring holds at least two tiles");
  static_assert(STAGES <= STREAM_BARRIERS, "the host sizes the barriers for STREAM_BARRIERS tiles");
  __shared__ __align__(16) uint8_t rings[STREAM_WARPS][RING];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, tig = lane % 4;
  const uint32_t ringBase = (uint32_t)__cvta_generic_to_shared(&rings[warp][0]);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  // inference only: the argmax entries have no registers to spare for the bulk path's addresses and phases
  const bool bulk = !ARGMAX && dim == CHUNKS * 32 && reinterpret_cast<uintptr_t>(d) % 16 == 0 &&
                    pairs >= (long long)STREAM_BULK_PAIRS_PER_WARP * gridDim.x * STREAM_WARPS;
#else
  constexpr bool bulk = false;
#endif
  // where this thread's 16 bytes of chunk 0 of n-tile 0 sit in a slot, and the step to the next chunk: its own
  // lane-major slot, or row g of the rows as stored
  const uint32_t ring = ringBase + (bulk ? g * (CHUNKS * 64) + tig * 16 : lane * 16);
  const uint32_t chunkStep = bulk ? 64 : 512;
  extern __shared__ long long dynamicShared[];
  const uint32_t barriers = (uint32_t)__cvta_generic_to_shared(dynamicShared + warp * STREAM_BARRIERS);
  uint32_t phases = 0;  // bit s: the parity of slot s's next completion
  if (bulk) initTileBarriers<STAGES>(barriers, lane);

  const long long warps = (long long)gridDim.x * STREAM_WARPS;
  const long long w = (long long)blockIdx.x * STREAM_WARPS + warp;
  // Pairs. A static split gives each warp a contiguous run, so that with several queries (all pairs with
  // Nq > 1, candidates) most of its pairs share the query fragments it holds. Taken at run time, nearly
  // every pair would load a new query, which measured slower (rule 4 of docs/design/kernel-selection.md), so
  // the host asks for DYNAMIC only for one query (or one pair per query), where it evens out the warps'
  // finishing times: a warp first takes a contiguous run of half an even share, then pairs one at a time
  // (PairSplit, maxsim_work.cuh).
  PairSplit<DYNAMIC> split(pairs, warps, w, work);
  auto takePair = [&]() -> long long { return split.take(lane); };

  // With DYNAMIC the producer tells the consumer which pairs it took, in order, through this warp's queue
  // (dynamic shared memory: the rings fill the 48 KB of static). Every lane writes each entry (the same
  // value), so each lane reads back its own write: no warp barrier. At most STAGES pairs wait in it
  // (STAGES - 1 tiles in flight, plus the pair just taken). Without, the consumer walks the same run.
  constexpr int QUEUE = STAGES + 1;
  static_assert(QUEUE <= STREAM_QUEUE_ENTRIES, "the host sizes the queues for STREAM_QUEUE_ENTRIES pairs");
  long long* queue = dynamicShared + STREAM_BARRIER_SLOTS + warp * QUEUE;
  int queued = 0, consumed = 0;

  // Producer: takes the next pair whose document has a valid token; answers the others (-1e9, no argmax)
  // itself, so they never reach the queue.
  PairCursor producer;
  // A pair the kernel scores: its document has a valid token, and so a row (both tested, so that the producer,
  // which copies at least one tile a pair, and the consumer, which waits for one a row of 8 x NT, agree).
  auto hasTokens = [&](long long pair) {
    const int doc = documentOf(pair, mode, perQuery, docOffset);
    return dValid[doc] != 0 && dRows.rowLength[doc] > 0;
  };
  auto takeNext = [&]() {
    for (;;) {
      const long long pair = takePair();
      if (pair >= pairs) {
        producer.pair = -1;
        return;
      }
      const int doc = documentOf(pair, mode, perQuery, docOffset);
      if (hasTokens(pair)) {
        producer = PairCursor{pair, doc, dRows.rowStart[doc], dRows.rowLength[doc], 0};
        if (DYNAMIC) queue[queued++ % QUEUE] = pair;
        return;
      }
      if (lane == 0) scores[pair] = EMPTY_DOCUMENT_SCORE;
      if (ARGMAX)
        for (int s = lane; s < argmaxStride; s += 32) argmax[pair * argmaxStride + s] = -1;
    }
  };
  takeNext();
  int producerSlot = 0;
  auto produce = [&]() {
    if (producer.pair >= 0) {
      if (bulk) {
        issueBulkTile<T, CHUNKS, NT>(ringBase, producerSlot, barriers + 8 * producerSlot, producer, d, lane);
      } else {
        issueTile<T, CHUNKS, NT>(ring, producerSlot, producer, d, dim, g, tig);
      }
      producerSlot = producerSlot + 1 == STAGES ? 0 : producerSlot + 1;
      if (++producer.tile * 8 * NT >= producer.dLength) takeNext();
    }
    commitGroup();
  };
  // prologue: STAGES - 1 tiles in flight (one commit group each, empty once no pair is left)
#pragma unroll 1
  for (int s = 0; s < STAGES - 1; s++) produce();

  uint4 frag[2][CHUNKS][2];
  int fragQuery = -1;
  int consumerSlot = 0;
  // Consumer: the pairs with a valid token in the producer's order (the producer answered the others).
  // With DYNAMIC, from the queue: when the consumer finishes a pair the producer, STAGES - 1 tiles ahead,
  // has already taken the next one (or found none left), so an empty queue means the end.
  long long walked = split.begin;
  auto consumeNext = [&]() -> long long {
    if constexpr (DYNAMIC) {
      return consumed < queued ? queue[consumed++ % QUEUE] : -1;
    } else {
      for (; walked < split.end; walked++)
        if (hasTokens(walked)) return walked++;
      return -1;
    }
  };
  for (long long pair = consumeNext(); pair >= 0; pair = consumeNext()) {
    const int query = (int)(pair / perQuery);
    const int doc = documentOf(pair, mode, perQuery, docOffset);
    const int qStart = qRows.rowStart[query], qLength = qRows.rowLength[query];
    if (ARGMAX)
      for (int s = qLength + lane; s < argmaxStride; s += 32) argmax[pair * argmaxStride + s] = -1;
    if (query != fragQuery) {
#pragma unroll
      for (int m = 0; m < 2; m++)
#pragma unroll
        for (int k = 0; k < CHUNKS; k++)
          buildFragments(q, qStart, qLength, m * 16 + g, qStart, qLength, m * 16 + g + 8, k * CHUNK + tig * 8, dim,
                         frag[m][k][0], frag[m][k][1]);
      fragQuery = query;
    }
    const int dStart = dRows.rowStart[doc], dLength = dRows.rowLength[doc];
    const bool secondTile = qLength > 16;

    float best[2][2];
    int bestIndex[2][2];
    resetRunningMax(best, bestIndex);
    // document scan: each step tops the ring up by one tile, waits for the oldest, multiplies it
    for (int t0 = 0; t0 < dLength; t0 += 8 * NT) {
      if (bulk) __syncwarp();  // every lane has read the slot the producer fills next
      produce();
      if (bulk) {
        waitTile(barriers + 8 * consumerSlot, (phases >> consumerSlot) & 1);
        phases ^= 1u << consumerSlot;
      } else {
        waitGroups<STAGES - 1>();
      }
      uint4 b[NT][CHUNKS];
#pragma unroll
      for (int n = 0; n < NT; n++)
#pragma unroll
        for (int k = 0; k < CHUNKS; k++)
          b[n][k] = loadShared16(ring + (consumerSlot * NT + n) * (CHUNKS * 512) + k * chunkStep);
      consumerSlot = consumerSlot + 1 == STAGES ? 0 : consumerSlot + 1;
      float acc[2][NT][4];
#pragma unroll
      for (int m = 0; m < 2; m++) {
#pragma unroll
        for (int n = 0; n < NT; n++) {
          acc[m][n][0] = acc[m][n][1] = acc[m][n][2] = acc[m][n][3] = 0.f;
          if (m == 0 || secondTile) {
#pragma unroll
            for (int k = 0; k < CHUNKS; k++) {
              const uint32_t a0[4] = {frag[m][k][0].x, frag[m][k][0].y, frag[m][k][0].z, frag[m][k][0].w};
              const uint32_t a1[4] = {frag[m][k][1].x, frag[m][k][1].y, frag[m][k][1].z, frag[m][k][1].w};
              MmaOp<T>::run(acc[m][n], a0, b[n][k].x, b[n][k].y);
              MmaOp<T>::run(acc[m][n], a1, b[n][k].z, b[n][k].w);
            }
          }
        }
      }
      if constexpr (ARGMAX) {
        onlineMax<2, NT>(best, bestIndex, acc, dRows, dStart, dLength, t0, tig);
      } else {
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
          for (int j = 0; j < 2; j++) {
            const int t = t0 + 8 * n + 2 * tig + j;
            const bool valid = t < dLength && isValid(dRows, dStart + t);
#pragma unroll
            for (int m = 0; m < 2; m++) {
              best[m][0] = maxKeepNaN(best[m][0], valid ? acc[m][n][j] : -INFINITY);
              best[m][1] = maxKeepNaN(best[m][1], valid ? acc[m][n][2 + j] : -INFINITY);
            }
          }
        }
      }
    }

    // epilogue: rows across the quad, then lane L takes row L (rows m * 16 + g + 8h sit in lanes 4g..4g+3)
    float rowMax[2][2];
    int rowArgmax[2][2];
#pragma unroll
    for (int m = 0; m < 2; m++) {
#pragma unroll
      for (int h = 0; h < 2; h++) {
        float v = best[m][h];
        int i = bestIndex[m][h];
        if constexpr (ARGMAX) {
          quadMerge(v, i);
        } else {
          for (int offset = 1; offset < 4; offset *= 2) v = maxKeepNaN(v, __shfl_xor_sync(0xffffffffu, v, offset));
        }
        rowMax[m][h] = __shfl_sync(0xffffffffu, v, 4 * (lane % 8));
        rowArgmax[m][h] = ARGMAX ? __shfl_sync(0xffffffffu, i, 4 * (lane % 8)) : 0;
      }
    }
    const int m = lane / 16, h = (lane % 16) / 8;  // lane L = row m * 16 + 8h + L % 8
    const float v = m == 0 ? (h == 0 ? rowMax[0][0] : rowMax[0][1]) : (h == 0 ? rowMax[1][0] : rowMax[1][1]);
    float rowSum = 0.f;
    if (lane < qLength) {
      const bool valid = isValid(qRows, qStart + lane);
      if (valid) rowSum = v;
      if (ARGMAX) {
        const int i = m == 0 ? (h == 0 ? rowArgmax[0][0] : rowArgmax[0][1])
                             : (h == 0 ? rowArgmax[1][0] : rowArgmax[1][1]);
        argmax[pair * argmaxStride + lane] = (Index)(valid ? argmaxOrFirstValid(i, dRows, dStart, dLength) : -1);
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) rowSum += __shfl_xor_sync(0xffffffffu, rowSum, offset);
    if (lane == 0) scores[pair] = rowSum;
  }
  // nothing may still be copying into shared memory when the block exits (the consumer waited for every bulk copy)
  waitGroups<0>();
  split.finish(lane, warps);
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Same tensors as maxsim_forward_*; pairs is the launch's pair count, split statically among the grid's
// warps or, by the _dyn entries, partly taken at run time through `work` (two zeroed 64-bit counters, see
// WorkCounters; the pair queues are then dynamic shared memory, STREAM_QUEUE_ENTRIES x 8 bytes per warp, after
// the tile barriers on sm_90, STREAM_BARRIERS x 8 bytes per warp).
// Entry names: maxsim_forward_stream_c{CHUNKS}[_dyn][_argmax|_argmax16]_{type}, CHUNKS = ceil(d / 32).
// Each takes a 12 KB ring per warp and one n-tile per step, except c2 (d <= 64), two: that paid on every
// shape measured, while at c4 two need more than the 128 registers 4 blocks per SM allow (spills). Every
// per-thread copy carries the 128-byte L2 prefetch hint, which pays on work larger than L2
// (docs/design/kernel-selection.md holds the measurements; the other ring sizes and n-tile counts are built for tests
// only, in src/test/cuda/maxsim_forward_stream_ab.cu). c{1..4}_dyn: inference with pairs taken at run time (DYNAMIC).
#define MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, RING, ARGMAX, Index, DYNAMIC, NAME)                                  \
  extern "C" __global__ void __launch_bounds__(STREAM_THREADS, 4) NAME(                                         \
      const T* q, const int* qStart, const int* qLength, const uint8_t* qMask, const T* d, const int* dStart,   \
      const int* dLength, const uint8_t* dMask, const int* dValid, int dim, int mode, int perQuery,             \
      int docOffset, long long pairs, float* scores, void* argmax, int argmaxStride,                            \
      unsigned long long* work) {                                                                               \
    forwardStream<T, CHUNKS, NT, RING, ARGMAX, Index, DYNAMIC>(                                                 \
        q, Rows{qStart, qLength, qMask}, d, Rows{dStart, dLength, dMask}, dValid, dim, mode, perQuery,          \
        docOffset, pairs, scores, static_cast<Index*>(argmax), argmaxStride, work);                             \
  }
// inference, argmax int32 (_argmax), argmax int16 (_argmax16)
#define MAXSIM_STREAM_ENTRIES(T, SUFFIX, CHUNKS, NT, RING, VARIANT)                                                   \
  MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, RING, false, int, false, maxsim_forward_stream_c##CHUNKS##VARIANT##_##SUFFIX)      \
  MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, RING, true, int, false,                                                          \
                      maxsim_forward_stream_c##CHUNKS##VARIANT##_argmax_##SUFFIX)                                     \
  MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, RING, true, int16_t, false,                                                      \
                      maxsim_forward_stream_c##CHUNKS##VARIANT##_argmax16_##SUFFIX)
// inference with pairs taken at run time (one query, or one pair per query)
#define MAXSIM_STREAM_DYNAMIC(T, SUFFIX, CHUNKS, NT) \
  MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, STREAM_RING_BYTES, false, int, true, maxsim_forward_stream_c##CHUNKS##_dyn_##SUFFIX)
#define MAXSIM_STREAM_TYPE(T, SUFFIX)                                       \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 1, 1, STREAM_RING_BYTES, )               \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 2, 2, STREAM_RING_BYTES, )               \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 3, 1, STREAM_RING_BYTES, )               \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 4, 1, STREAM_RING_BYTES, )               \
  MAXSIM_STREAM_DYNAMIC(T, SUFFIX, 1, 1)                                    \
  MAXSIM_STREAM_DYNAMIC(T, SUFFIX, 2, 2)                                    \
  MAXSIM_STREAM_DYNAMIC(T, SUFFIX, 3, 1)                                    \
  MAXSIM_STREAM_DYNAMIC(T, SUFFIX, 4, 1)

// the test-only kernels include this file for its templates and define entries of their own
#ifndef MAXSIM4J_TEMPLATES_ONLY
MAXSIM_STREAM_TYPE(__nv_bfloat16, bf16)
MAXSIM_STREAM_TYPE(__half, f16)
#endif
#endif
