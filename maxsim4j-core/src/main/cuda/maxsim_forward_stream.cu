// Fused MaxSim forward for short queries (Lq <= 32) and d <= 128 on tensor cores (sm_80+): one warp per
// (query, document) pair, persistent warps, document tiles streamed through a per-warp cp.async ring.
//
// Why a second tensor-core kernel. The block-per-pair kernel (maxsim_forward_mma.cu) loads document tiles
// straight into registers: bytes in flight are bounded by registers (and the 6 scoreboards a warp has for
// outstanding loads), a block's prologue stages the query through shared memory and its epilogue merges
// four warps behind __syncthreads. Nsight Compute on 1 x 10000 x 32 x 300 x 128: DRAM 61% busy, 11-16 warps
// per SM stalled mostly on those loads. Here each warp owns whole pairs, a contiguous run of them:
//
// Tiles:       A = the query's 32 rows as 2 m-tiles in registers (k permutation of maxsim_forward_mma.cu),
//              rebuilt only when the query changes (all pairs with Nq = 1: once per warp).
//              B = an n-tile of 8 document tokens x CHUNKS 32-wide chunks of d. Each thread copies its own
//              16 bytes per chunk with cp.async into its own slot of the warp's ring of STAGES tiles, and
//              reads them back with one 16-byte shared load: no other thread touches them, so no barrier,
//              and the slots are laid out lane-major, so no bank conflicts.
// Pipeline:    one commit group per tile; the producer runs STAGES - 1 tiles ahead of the consumer across
//              document and pair boundaries (the next document's first tiles load during this one's
//              epilogue), so a warp keeps up to (STAGES - 1) x CHUNKS x 512 bytes in flight without
//              holding them in registers.
// Online max:  per (row, thread) in registers. Inference keeps the value only (max.NaN: NaN propagates in
//              one instruction); training also keeps the argmax (strict >, ties to the lower token).
// Epilogue:    max across the quad; lane L takes row L and the warp sums valid rows in the same shuffle
//              tree as the block kernels, so every kernel (and top-k) gives the same bits.
#include "maxsim_async.cuh"
#include "maxsim_mma.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
namespace maxsim4j {

constexpr int STREAM_WARPS = 4;
constexpr int STREAM_THREADS = STREAM_WARPS * 32;
constexpr int STREAM_RING_BYTES = 12 * 1024;  // per warp (default): 4 warps x 12 KB = 48 KB static shared memory

__device__ __forceinline__ uint4 loadShared16(uint32_t slot) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(slot));
  return v;
}

// Where the producer (or the consumer) is in the warp's run of pairs.
struct PairCursor {
  long long pair;  // current pair; == end when the run is done
  int doc, dStart, dLength;
  int tile;  // next tile of the current pair
};

// The next pair at or after `pair` whose document has a valid token (the others have no tiles), with its
// token range; cursor.pair = end when there is none.
__device__ __forceinline__ void seekTiles(PairCursor& c, long long pair, long long end, int mode, int perQuery,
                                          int docOffset, const Rows& dRows, const int* __restrict__ dValid) {
  for (; pair < end; pair++) {
    int doc = mode == ALL_PAIRS ? docOffset + (int)(pair % perQuery) : (int)pair;
    if (dValid[doc] != 0) {
      c = PairCursor{pair, doc, dRows.rowStart[doc], dRows.rowLength[doc], 0};
      return;
    }
  }
  c.pair = end;
}

// Producer: cp.async of the cursor's next tile (NT n-tiles of 8 tokens) into ring slot `slot` (zeros past
// the document or d). Slot layout: [slot][n][chunk][lane] x 16 bytes.
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
      copyAsync16(ring + ((slot * NT + n) * CHUNKS + k) * 512, present ? row + k * CHUNK : d, present);
    }
  }
}

// Index: the argmax element type, int (int32) or int16_t (documents shorter than 32768); unused without ARGMAX.
template <typename T, int CHUNKS, int NT, int RING, bool ARGMAX, typename Index>
__device__ void forwardStream(const T* __restrict__ q, Rows qRows, const T* __restrict__ d, Rows dRows,
                              const int* __restrict__ dValid, int dim, int mode, int perQuery, int docOffset,
                              long long pairs, float* scores, Index* argmax, int argmaxStride) {
  constexpr int STAGES = RING / (NT * CHUNKS * 512);
  static_assert(STAGES >= 2, "the ring holds at least two tiles");
  __shared__ __align__(16) uint8_t rings[STREAM_WARPS][RING];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, tig = lane % 4;
  const uint32_t ring = (uint32_t)__cvta_generic_to_shared(&rings[warp][lane * 16]);

  // this warp's contiguous run of pairs (consecutive documents: sequential reads, the query kept)
  const long long warps = (long long)gridDim.x * STREAM_WARPS;
  const long long w = (long long)blockIdx.x * STREAM_WARPS + warp;
  const long long begin = pairs * w / warps, end = pairs * (w + 1) / warps;

  // prologue: the producer fills STAGES - 1 slots (one commit group each, empty past the run)
  PairCursor producer;
  seekTiles(producer, begin, end, mode, perQuery, docOffset, dRows, dValid);
  int producerSlot = 0;
  auto produce = [&]() {
    if (producer.pair < end) {
      issueTile<T, CHUNKS, NT>(ring, producerSlot, producer, d, dim, g, tig);
      producerSlot = producerSlot + 1 == STAGES ? 0 : producerSlot + 1;
      if (++producer.tile * 8 * NT >= producer.dLength)
        seekTiles(producer, producer.pair + 1, end, mode, perQuery, docOffset, dRows, dValid);
    }
    commitGroup();
  };
#pragma unroll 1
  for (int s = 0; s < STAGES - 1; s++) produce();

  uint4 frag[2][CHUNKS][2];
  int fragQuery = -1;
  int consumerSlot = 0;
  for (long long pair = begin; pair < end; pair++) {
    const int query = (int)(pair / perQuery);
    const int doc = mode == ALL_PAIRS ? docOffset + (int)(pair % perQuery) : (int)pair;
    const int qStart = qRows.rowStart[query], qLength = qRows.rowLength[query];
    if (ARGMAX)
      for (int s = qLength + lane; s < argmaxStride; s += 32) argmax[pair * argmaxStride + s] = -1;
    if (dValid[doc] == 0) {
      if (lane == 0) scores[pair] = EMPTY_DOCUMENT_SCORE;
      if (ARGMAX)
        for (int s = lane; s < qLength; s += 32) argmax[pair * argmaxStride + s] = -1;
      continue;
    }
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
      produce();
      waitGroups<STAGES - 1>();
      uint4 b[NT][CHUNKS];
#pragma unroll
      for (int n = 0; n < NT; n++)
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) b[n][k] = loadShared16(ring + ((consumerSlot * NT + n) * CHUNKS + k) * 512);
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
        argmax[pair * argmaxStride + lane] = (Index)(valid ? i : -1);
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) rowSum += __shfl_xor_sync(0xffffffffu, rowSum, offset);
    if (lane == 0) scores[pair] = rowSum;
  }
  waitGroups<0>();  // nothing may still be copying into shared memory when the block exits
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Same tensors as maxsim_forward_*; pairs is the launch's pair count, split into one contiguous run per
// warp of the grid. Entry names: maxsim_forward_stream_c{CHUNKS}[_VARIANT][_argmax|_argmax16]_{type}, CHUNKS =
// ceil(d / 32). Each takes a 12 KB ring per warp and one n-tile per step, except c2 (d <= 64), two: by an
// A/B on the H200 (docs/benchmarks.md, v12) two n-tiles per step paid 22% on 1x1000x32x2048x48 and 2-4%
// elsewhere; at c4 they need more than the 128 registers 4 blocks per SM allow (spills). Variants kept
// for A/B runs: c2_n1, c4_n2 (n-tiles per step), c2_r6, c4_r6 (a 6 KB ring: within 2% but for
// 1x4000x32x2048x48, 19% slower).
#define MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, RING, ARGMAX, Index, NAME)                                          \
  extern "C" __global__ void __launch_bounds__(STREAM_THREADS, 4) NAME(                                         \
      const T* q, const int* qStart, const int* qLength, const uint8_t* qMask, const T* d, const int* dStart,   \
      const int* dLength, const uint8_t* dMask, const int* dValid, int dim, int mode, int perQuery,             \
      int docOffset, long long pairs, float* scores, void* argmax, int argmaxStride) {                          \
    forwardStream<T, CHUNKS, NT, RING, ARGMAX, Index>(q, Rows{qStart, qLength, qMask}, d,                       \
                                                      Rows{dStart, dLength, dMask}, dValid, dim, mode, perQuery, \
                                                      docOffset, pairs, scores, static_cast<Index*>(argmax),     \
                                                      argmaxStride);                                             \
  }
// inference, argmax int32 (_argmax), argmax int16 (_argmax16)
#define MAXSIM_STREAM_ENTRIES(T, SUFFIX, CHUNKS, NT, RING, VARIANT)                                                    \
  MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, RING, false, int, maxsim_forward_stream_c##CHUNKS##VARIANT##_##SUFFIX)            \
  MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, RING, true, int, maxsim_forward_stream_c##CHUNKS##VARIANT##_argmax_##SUFFIX)      \
  MAXSIM_STREAM_ENTRY(T, CHUNKS, NT, RING, true, int16_t, maxsim_forward_stream_c##CHUNKS##VARIANT##_argmax16_##SUFFIX)
#define MAXSIM_STREAM_TYPE(T, SUFFIX)                                       \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 1, 1, STREAM_RING_BYTES, )               \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 2, 2, STREAM_RING_BYTES, )               \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 3, 1, STREAM_RING_BYTES, )               \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 4, 1, STREAM_RING_BYTES, )               \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 2, 1, STREAM_RING_BYTES, _n1)            \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 4, 2, STREAM_RING_BYTES, _n2)            \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 2, 1, STREAM_RING_BYTES / 2, _r6)        \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 4, 1, STREAM_RING_BYTES / 2, _r6)

MAXSIM_STREAM_TYPE(__nv_bfloat16, bf16)
MAXSIM_STREAM_TYPE(__half, f16)
#endif
