// Fused MaxSim forward on tensor cores (sm_80+): bf16 or fp16 queries and documents, fp32 accumulation.
// One thread block (4 warps) per (query, document) pair.
//
// The k permutation. A dot product does not care in which order k is summed, so the fragments of
// mma.m16n8k16 may take any permutation of k as long as A (queries) and B (documents) use the same one.
// We pick the one that lets each thread load 16 contiguous bytes of a document token: in a 32-wide chunk
// of d, thread (group g = lane / 4, tig = lane % 4) owns k = tig*8 .. tig*8+7 of token g and uses halves
// 0-3 as its B fragment for the chunk's first k-step and halves 4-7 for the second. Documents go straight
// from global memory into registers, coalesced, with no shared-memory staging.
//
// Tiles:       queries in passes of up to MT m-tiles (16 rows each), their A fragments staged once in
//              shared memory in fragment order (each lane reads 32 contiguous bytes: conflict-free);
//              documents in n-tiles of 8 tokens, dealt round-robin to the warps.
// Online max:  the C fragment gives each thread rows g and g+8 of every m-tile for two tokens; a running
//              (max, argmax) per row lives in registers across all n-tiles.
// Epilogue:    max across the 4 threads of a quad, then across warps through shared memory, then the sum
//              over valid query rows in a fixed order.
#include "common/maxsim_mma.cuh"
#include "forward/maxsim_split.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 750
namespace maxsim4j {

constexpr int MMA_WARPS = 4;
constexpr int MMA_THREADS = MMA_WARPS * 32;
constexpr int LOAD_GROUP = 4;  // chunks requested together (d = 128 in one go)

// Stages the A fragments of query rows [r0, r0 + 16 * mActive) into shared memory, fragment order:
// frag[(m * chunks + c) * 32 + lane] = {k-step 0: a0 a1 a2 a3, k-step 1: a0 a1 a2 a3}.
template <typename T>
__device__ void stageQueryFragments(uint4* frag, const T* q, int qStart, int qLength, int r0, int mActive,
                                    int chunks, int dim) {
  for (int e = threadIdx.x; e < mActive * chunks * 32; e += MMA_THREADS) {
    int lane = e % 32;
    int c = (e / 32) % chunks;
    int m = e / (32 * chunks);
    int g = lane / 4, tig = lane % 4;
    int rowA = r0 + m * 16 + g;
    uint4 s0, s1;
    buildFragments(q, qStart, qLength, rowA, qStart, qLength, rowA + 8, c * CHUNK + tig * 8, dim, s0, s1);
    frag[2 * e] = s0;
    frag[2 * e + 1] = s1;
  }
}

// ---- the token loop's three stages -------------------------------------------------------------------

// Load: chunks [c0, c0 + GROUP) of the NT n-tiles starting at token t0 (this thread: token t0 + 8n + g,
// halves tig*8 .. tig*8+7 of each chunk). Tokens past the row and chunks past d read as zeros.
template <typename T, int GROUP, int NT>
__device__ __forceinline__ void loadGroup(uint4 (&b)[GROUP][NT], const T* __restrict__ d, int dStart, int dLength,
                                          int dim, int chunks, int t0, int c0, int g, int tig) {
#pragma unroll
  for (int n = 0; n < NT; n++) {
    int token = t0 + 8 * n + g;
    const T* row = d + (size_t)(dStart + (token < dLength ? token : 0)) * dim + tig * 8;
#pragma unroll
    for (int u = 0; u < GROUP; u++) {
      int c = c0 + u;
      b[u][n] = (token < dLength && c < chunks && c * CHUNK + tig * 8 < dim)
                    ? __ldg(reinterpret_cast<const uint4*>(row + c * CHUNK))
                    : make_uint4(0, 0, 0, 0);
    }
  }
}

// Multiply: acc[m][n] += Q m-tile m x document n-tile n over the group's chunks. Fragments come from
// registers (REG_CHUNKS > 0; c0 must then be a compile-time constant after unrolling) or shared memory.
template <typename T, int MT, int NT, int GROUP, int REG_CHUNKS>
__device__ __forceinline__ void multiplyGroup(float (&acc)[MT][NT][4], const uint4 (&b)[GROUP][NT],
                                              const uint4 (&regFrag)[REG_CHUNKS > 0 ? MT : 1][REG_CHUNKS > 0 ? REG_CHUNKS : 1][2],
                                              const uint4* queryFrag, int c0, int chunks, int mActive, int lane) {
#pragma unroll
  for (int u = 0; u < GROUP; u++) {
    int c = c0 + u;
    if (c < chunks) {
#pragma unroll
      for (int m = 0; m < MT; m++) {
        if (m < mActive) {
          uint4 s0, s1;
          if constexpr (REG_CHUNKS > 0) {
            s0 = regFrag[m][c0 + u][0];
            s1 = regFrag[m][c0 + u][1];
          } else {
            s0 = queryFrag[2 * ((m * chunks + c) * 32 + lane)];
            s1 = queryFrag[2 * ((m * chunks + c) * 32 + lane) + 1];
          }
          const uint32_t a0[4] = {s0.x, s0.y, s0.z, s0.w};
          const uint32_t a1[4] = {s1.x, s1.y, s1.z, s1.w};
#pragma unroll
          for (int n = 0; n < NT; n++) {
            MmaOp<T>::run(acc[m][n], a0, b[u][n].x, b[u][n].y);
            MmaOp<T>::run(acc[m][n], a1, b[u][n].z, b[u][n].w);
          }
        }
      }
    }
  }
}

// The document scan: every warp walks its share of the n-tiles of tokens [tBegin, dEnd) (NT at a time,
// round-robin) and folds each tile's dot products into the running (max, argmax) of its rows. The whole
// document is [0, dLength); a slice of a split document (see "split-Ld" below) is part of it.
template <typename T, int MT, int REG_CHUNKS, int NT, bool PIPELINED>
__device__ __forceinline__ void scanDocument(float (&best)[MT][2], int (&bestIndex)[MT][2],
                                             const uint4 (&regFrag)[REG_CHUNKS > 0 ? MT : 1][REG_CHUNKS > 0 ? REG_CHUNKS : 1][2],
                                             const uint4* queryFrag, const T* __restrict__ d, const Rows& dRows,
                                             int dStart, int tBegin, int dEnd, int dim, int chunks, int mActive) {
  const int dLength = dEnd;  // tokens at or past dEnd are out of this scan (read as zeros, never maxed)
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, tig = lane % 4;
  // NT n-tiles of 8 tokens per warp step, steps round-robin over warps. Each fragment read (from shared
  // memory or registers) feeds NT mma's: NT divides the shared-memory traffic per document byte. A load
  // group of chunks is requested before any is used (bytes in flight cover memory latency, Little's law).
  constexpr int GROUP = LOAD_GROUP / NT;
  const int step = MMA_WARPS * 8 * NT;
  float acc[MT][NT][4];
  if constexpr (PIPELINED) {
    // a whole n-tile is one load group (chunks <= GROUP): the next tile's loads are issued before this
    // tile multiplies, so each warp keeps two groups in flight
    uint4 b[GROUP][NT];
    loadGroup<T, GROUP, NT>(b, d, dStart, dLength, dim, chunks, tBegin + warp * 8 * NT, 0, g, tig);
    for (int t0 = tBegin + warp * 8 * NT; t0 < dLength; t0 += step) {
      uint4 next[GROUP][NT];
      loadGroup<T, GROUP, NT>(next, d, dStart, dLength, dim, chunks, t0 + step, 0, g, tig);
      clear(acc);
      multiplyGroup<T, MT, NT, GROUP, REG_CHUNKS>(acc, b, regFrag, queryFrag, 0, chunks, mActive, lane);
      onlineMax(best, bestIndex, acc, dRows, dStart, dLength, t0, tig);
#pragma unroll
      for (int u = 0; u < GROUP; u++)
#pragma unroll
        for (int n = 0; n < NT; n++) b[u][n] = next[u][n];
    }
  } else {
    // with fragments in registers the chunk bound is the constant REG_CHUNKS: the loop unrolls and every
    // regFrag index is a compile-time constant (a run-time index would move regFrag to local memory)
    const int chunkLimit = REG_CHUNKS > 0 ? REG_CHUNKS : chunks;
    for (int t0 = tBegin + warp * 8 * NT; t0 < dLength; t0 += step) {
      clear(acc);
#pragma unroll
      for (int c0 = 0; c0 < chunkLimit; c0 += GROUP) {
        uint4 b[GROUP][NT];
        loadGroup<T, GROUP, NT>(b, d, dStart, dLength, dim, chunks, t0, c0, g, tig);
        multiplyGroup<T, MT, NT, GROUP, REG_CHUNKS>(acc, b, regFrag, queryFrag, c0, chunks, mActive, lane);
      }
      onlineMax(best, bestIndex, acc, dRows, dStart, dLength, t0, tig);
    }
  }
}

// Epilogue 1: merges each row's maximum across the quad (the 4 threads sharing rows g and g + 8) and
// leaves it in shared memory, one slot per (warp, row), for the cross-warp merge.
template <int MT>
__device__ __forceinline__ void quadMergeToShared(const float (&best)[MT][2], const int (&bestIndex)[MT][2],
                                                  float (*mergeBest)[MT * 16], int (*mergeIndex)[MT * 16]) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, tig = lane % 4;
#pragma unroll
  for (int m = 0; m < MT; m++) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
      float v = best[m][h];
      int i = bestIndex[m][h];
      quadMerge(v, i);
      if (tig == 0) {
        mergeBest[warp][m * 16 + g + 8 * h] = v;
        mergeIndex[warp][m * 16 + g + 8 * h] = i;
      }
    }
  }
}

template <typename T, int MT, int REG_CHUNKS, int NT, bool PIPELINED>
__device__ void forwardPairMma(const T* __restrict__ q, Rows qRows, const T* __restrict__ d, Rows dRows,
                               const int* __restrict__ dValid, int dim, int query, int doc, float* scores,
                               int* argmax, int argmaxStride, int pair, int rowsPerPass, Split split) {
  extern __shared__ uint4 queryFrag[];
  __shared__ float mergeBest[MMA_WARPS][MT * 16];
  __shared__ int mergeIndex[MMA_WARPS][MT * 16];
  __shared__ float passSums[MMA_WARPS];

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int qStart = qRows.rowStart[query], qLength = qRows.rowLength[query];
  const int dStart = dRows.rowStart[doc], dLength = dRows.rowLength[doc];
  const int chunks = (dim + CHUNK - 1) / CHUNK;
  const int tBegin = isSliced() ? blockIdx.y * split.sliceTokens : 0;
  const int tEnd = isSliced() ? min(dLength, tBegin + split.sliceTokens) : dLength;
  if (isSliced()) {
    if (dValid[doc] == 0 || tBegin >= dLength) return;  // the merge writes empty documents' scores
  } else {
    clearArgmaxTail(argmax, pair, argmaxStride, qLength, MMA_THREADS);
  }

  if (dValid[doc] == 0) {
    if (threadIdx.x == 0) scores[pair] = EMPTY_DOCUMENT_SCORE;
    if (argmax != nullptr)
      for (int s = threadIdx.x; s < qLength; s += MMA_THREADS) argmax[(size_t)pair * argmaxStride + s] = -1;
    return;
  }

  float total = 0.f;  // thread 0's running sum over passes
  for (int r0 = 0; r0 < qLength; r0 += rowsPerPass) {
    const int mActive = min(MT, (min(rowsPerPass, qLength - r0) + 15) / 16);
    __syncthreads();  // the previous pass is done with queryFrag and the merge arrays
    stageQueryFragments<T>(queryFrag, q, qStart, qLength, r0, mActive, chunks, dim);
    __syncthreads();
    // REG_CHUNKS > 0: every fragment this thread needs moves to registers once per pass, so the token loop
    // reads no shared memory (ncu: re-reading fragments from shared memory saturated the L1 pipe)
    uint4 regFrag[REG_CHUNKS > 0 ? MT : 1][REG_CHUNKS > 0 ? REG_CHUNKS : 1][2];
    if constexpr (REG_CHUNKS > 0) {
      static_assert(REG_CHUNKS == LOAD_GROUP, "one load group covers the register-resident chunks");
#pragma unroll
      for (int m = 0; m < MT; m++)
#pragma unroll
        for (int c = 0; c < REG_CHUNKS; c++) {
          bool present = m < mActive && c < chunks;
          regFrag[m][c][0] = present ? queryFrag[2 * ((m * chunks + c) * 32 + lane)] : make_uint4(0, 0, 0, 0);
          regFrag[m][c][1] = present ? queryFrag[2 * ((m * chunks + c) * 32 + lane) + 1] : make_uint4(0, 0, 0, 0);
        }
    }

    float best[MT][2];
    int bestIndex[MT][2];
    resetRunningMax(best, bestIndex);
    scanDocument<T, MT, REG_CHUNKS, NT, PIPELINED>(best, bestIndex, regFrag, queryFrag, d, dRows, dStart, tBegin, tEnd,
                                                   dim, chunks, mActive);
    quadMergeToShared<MT>(best, bestIndex, mergeBest, mergeIndex);
    __syncthreads();
    // epilogue 2: across warps, one thread per row; then a fixed-order sum of the valid rows (or, for a
    // slice, the rows' partial maxima for the merge)
    float rowValue = 0.f;
    int row = threadIdx.x;
    if (row < mActive * 16) {
      float v = mergeBest[0][row];
      int i = mergeIndex[0][row];
      for (int w = 1; w < MMA_WARPS; w++) maxMerge(v, i, mergeBest[w][row], mergeIndex[w][row]);
      if (argmax != nullptr) i = argmaxOrFirstValid(i, dRows, dStart, tEnd);
      int s = r0 + row;
      if (s < qLength && isSliced()) {
        split.partialMax[partialAt(split, pair, s)] = v;
        split.partialArgmax[partialAt(split, pair, s)] = i;
      } else if (s < qLength) {
        bool valid = isValid(qRows, qStart + s);
        if (valid) rowValue = v;
        if (argmax != nullptr) argmax[(size_t)pair * argmaxStride + s] = valid ? i : -1;
      }
    }
    // rows live in threads 0..MT*16-1 (at most 128 = all threads): reduce per warp, then across warps
    for (int offset = 16; offset > 0; offset /= 2) rowValue += __shfl_xor_sync(0xffffffffu, rowValue, offset);
    if (lane == 0) passSums[warp] = rowValue;
    __syncthreads();
    if (threadIdx.x == 0)
      for (int w = 0; w < MMA_WARPS; w++) total += passSums[w];
  }
  if (threadIdx.x == 0 && !isSliced()) scores[pair] = total;
}

// ---- query groups -------------------------------------------------------------------------------------
// All pairs with Nq > 1 and queries of at most 32 tokens: GROUP_QUERIES queries share a block, their tokens
// stacked as 128 rows (query slot s = rows 32s .. 32s + 31), so one pass over a document tile feeds all
// of them. Blocks that share a document run next to each other (block = doc * groups + group): the first
// reads it from memory, the others mostly from L2.
constexpr int GROUP_QUERIES = 4;
constexpr int GROUP_ROWS = 32;

template <typename T>
__device__ void stageGroupFragments(uint4* frag, const T* q, const Rows& qRows, int firstQuery, int queries,
                                    int chunks, int dim) {
  for (int e = threadIdx.x; e < 8 * chunks * 32; e += MMA_THREADS) {
    int lane = e % 32;
    int c = (e / 32) % chunks;
    int m = e / (32 * chunks);
    int g = lane / 4, tig = lane % 4;
    int row = m * 16 + g;  // row and row + 8 belong to one query slot
    int query = firstQuery + row / GROUP_ROWS;
    int start = query < queries ? qRows.rowStart[query] : 0;
    int length = query < queries ? qRows.rowLength[query] : 0;
    int token = row % GROUP_ROWS;
    uint4 s0, s1;
    buildFragments(q, start, length, token, start, length, token + 8, c * CHUNK + tig * 8, dim, s0, s1);
    frag[2 * e] = s0;
    frag[2 * e + 1] = s1;
  }
}

template <typename T>
__device__ void forwardGroupMma(const T* __restrict__ q, Rows qRows, const T* __restrict__ d, Rows dRows,
                                const int* __restrict__ dValid, int dim, int queries, int documents, float* scores,
                                int* argmax, int argmaxStride) {
  extern __shared__ uint4 queryFrag[];
  __shared__ float mergeBest[MMA_WARPS][8 * 16];
  __shared__ int mergeIndex[MMA_WARPS][8 * 16];

  const int groups = (queries + GROUP_QUERIES - 1) / GROUP_QUERIES;
  const int doc = blockIdx.x / groups;
  const int firstQuery = (blockIdx.x % groups) * GROUP_QUERIES;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int query = firstQuery + warp;  // in the epilogue, warp w owns query slot w
  const long long pair = (long long)query * documents + doc;
  const int qLength = query < queries ? qRows.rowLength[query] : 0;
  const int qStart = query < queries ? qRows.rowStart[query] : 0;
  const int dStart = dRows.rowStart[doc], dLength = dRows.rowLength[doc];
  const int chunks = (dim + CHUNK - 1) / CHUNK;
  if (query < queries && argmax != nullptr) {
    for (int s = qLength + lane; s < argmaxStride; s += 32) argmax[pair * argmaxStride + s] = -1;
  }

  if (dValid[doc] == 0) {
    if (query < queries) {
      if (lane == 0) scores[pair] = EMPTY_DOCUMENT_SCORE;
      if (argmax != nullptr)
        for (int s = lane; s < qLength; s += 32) argmax[pair * argmaxStride + s] = -1;
    }
    return;
  }
  stageGroupFragments<T>(queryFrag, q, qRows, firstQuery, queries, chunks, dim);
  __syncthreads();
  float best[8][2];
  int bestIndex[8][2];
  resetRunningMax(best, bestIndex);
  const uint4 noRegisters[1][1][2] = {};
  scanDocument<T, 8, 0, 2, false>(best, bestIndex, noRegisters, queryFrag, d, dRows, dStart, 0, dLength, dim, chunks,
                                  8);
  quadMergeToShared<8>(best, bestIndex, mergeBest, mergeIndex);
  __syncthreads();
  // epilogue 2: thread t owns row t (query slot t / 32, token t % 32): merge across warps, then each warp
  // sums its query's valid rows in a fixed order
  float v = mergeBest[0][threadIdx.x];
  int i = mergeIndex[0][threadIdx.x];
  for (int w = 1; w < MMA_WARPS; w++) maxMerge(v, i, mergeBest[w][threadIdx.x], mergeIndex[w][threadIdx.x]);
  if (argmax != nullptr) i = argmaxOrFirstValid(i, dRows, dStart, dLength);
  float rowValue = 0.f;
  if (query < queries && lane < qLength) {
    bool valid = isValid(qRows, qStart + lane);
    if (valid) rowValue = v;
    if (argmax != nullptr) argmax[pair * argmaxStride + lane] = valid ? i : -1;
  }
  for (int offset = 16; offset > 0; offset /= 2) rowValue += __shfl_xor_sync(0xffffffffu, rowValue, offset);
  if (lane == 0 && query < queries) scores[pair] = rowValue;
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Same parameters as maxsim_forward_*, plus rowsPerPass (query rows staged per pass, a multiple of 16,
// at most 16 * MT, chosen by the host so the fragments fit the dynamic shared memory it passes) and the
// split-Ld parameters (see Split; ignored when gridDim.y == 1).
#define MAXSIM_MMA_ENTRY(NAME, T, MT, REG_CHUNKS, NT, PIPELINED)                                                                      \
  extern "C" __global__ void __launch_bounds__(MMA_THREADS) NAME(                                          \
      const T* q, const int* qStart, const int* qLength, const uint8_t* qMask, const T* d,                \
      const int* dStart, const int* dLength, const uint8_t* dMask, const int* dValid, int dim, int mode,    \
      int perQuery, int docOffset, float* scores, int* argmax, int argmaxStride, int rowsPerPass,          \
      int sliceTokens, float* partialMax, int* partialArgmax, int partialStride) {                         \
    long long pair = blockIdx.x;                                                                         \
    int query = (int)(pair / perQuery);                                                                  \
    int doc = mode == ALL_PAIRS ? docOffset + (int)(pair % perQuery) : (int)pair;                        \
    forwardPairMma<T, MT, REG_CHUNKS, NT, PIPELINED>(q, Rows{qStart, qLength, qMask}, d, Rows{dStart, dLength, dMask}, dValid, dim,  \
                          query, doc, scores, argmax, argmaxStride, (int)pair, rowsPerPass,              \
                          Split{sliceTokens, partialMax, partialArgmax, partialStride});                  \
  }

// Entries (query m-tiles per pass, fragments in registers or shared memory, n-tiles per warp step, whether
// the next n-tile's loads are issued before this one multiplies), as the host's rule 12 picks them:
//   mma2rp 32 rows per pass, d <= 128, fragments in registers, pipelined
//   mma2n  32 rows per pass, any d, two n-tiles per step (half the shared-memory reads per document byte)
//   mma8n  128 rows per pass, any d, two n-tiles per step
// The variants it was measured against are built for tests only (src/test/cuda/maxsim_forward_mma_ab.cu).
#define MAXSIM_MMA_VARIANTS(SUFFIX, T)                                   \
  MAXSIM_MMA_ENTRY(maxsim_forward_mma2rp_##SUFFIX, T, 2, 4, 1, true)     \
  MAXSIM_MMA_ENTRY(maxsim_forward_mma2n_##SUFFIX, T, 2, 0, 2, false)     \
  MAXSIM_MMA_ENTRY(maxsim_forward_mma8n_##SUFFIX, T, 8, 0, 2, false)

// the test-only kernels include this file for its templates and define entries of their own
#ifndef MAXSIM4J_TEMPLATES_ONLY
#if !MAXSIM4J_SPLIT_K
MAXSIM_MMA_VARIANTS(bf16, __nv_bfloat16)
#endif
MAXSIM_MMA_VARIANTS(f16, __half)

// All pairs, Nq > 1, queries of at most 32 tokens: GROUP_QUERIES queries per block, one block per
// (document, query group), each document whole (rule 11 never splits query groups).
// grid = documents * ceil(queries / GROUP_QUERIES).
#define MAXSIM_GROUP_ENTRY(NAME, T)                                                                        \
  extern "C" __global__ void __launch_bounds__(MMA_THREADS) NAME(                                          \
      const T* q, const int* qStart, const int* qLength, const uint8_t* qMask, const T* d,                \
      const int* dStart, const int* dLength, const uint8_t* dMask, const int* dValid, int dim, int queries, \
      int documents, float* scores, int* argmax, int argmaxStride) {                                      \
    forwardGroupMma<T>(q, Rows{qStart, qLength, qMask}, d, Rows{dStart, dLength, dMask}, dValid, dim,     \
                       queries, documents, scores, argmax, argmaxStride);                                  \
  }
#if !MAXSIM4J_SPLIT_K
MAXSIM_GROUP_ENTRY(maxsim_forward_group4_bf16, __nv_bfloat16)
#endif
MAXSIM_GROUP_ENTRY(maxsim_forward_group4_f16, __half)
#endif  // MAXSIM4J_TEMPLATES_ONLY
#endif
