// Fused MaxSim forward, FFMA path: one thread block per (query, document) pair.
//
//   score(q, d) = sum over valid query tokens s of  max over valid document tokens t of  <q_s, d_t>
//
// Tiles:      QUERY_TILE query tokens x DOC_TILE document tokens; the dot products accumulate over d in
//             chunks of K_CHUNK, both operands staged in shared memory widened to fp32.
// Online max: each thread owns ROWS_PER_THREAD query rows x COLS_PER_THREAD document columns and keeps
//             a running (max, argmax) per row in registers across all document tiles: the
//             [Lq, Ld] similarity block is never written anywhere.
// Epilogue:   a warp-shuffle max across the 32 column owners of each row, then a fixed-order sum over
//             query tokens (deterministic: no atomics).
// Arithmetic is fp32 FFMA whatever the input dtype: the fp32-accuracy path of the library.
#include "common/maxsim_common.cuh"

namespace maxsim4j {

constexpr int THREADS = 256;
constexpr int QUERY_TILE = 32;
constexpr int DOC_TILE = 64;
constexpr int K_CHUNK = 32;
constexpr int ROWS_PER_THREAD = 4;                        // 8 row groups x 4 = QUERY_TILE
constexpr int COLS_PER_THREAD = 2;                        // 32 column owners x 2 = DOC_TILE
static_assert(ROWS_PER_THREAD * (THREADS / 32) == QUERY_TILE, "row tiling");
static_assert(COLS_PER_THREAD * 32 == DOC_TILE, "column tiling");

// Stages tokens [first, first + count) x dims [k0, k0 + K_CHUNK) of one row into tile[count][K_CHUNK + 1],
// fp32, zero outside the row or past d (zeros add nothing to a dot product).
template <typename T, int TILE>
__device__ __forceinline__ void stageTile(float (*tile)[K_CHUNK + 1], const T* data, int rowStart, int rowLength,
                                          int first, int k0, int dim) {
  for (int e = threadIdx.x; e < TILE * K_CHUNK; e += THREADS) {
    int t = e / K_CHUNK;
    int k = e % K_CHUNK;
    int token = first + t;
    float v = 0.f;
    if (token < rowLength && k0 + k < dim) {
      v = widen(data[(size_t)(rowStart + token) * dim + k0 + k]);
    }
    tile[t][k] = v;
  }
}

template <typename TQ, typename TD>
__device__ void forwardPair(const TQ* __restrict__ q, Rows qRows, const TD* __restrict__ d, Rows dRows,
                            const int* __restrict__ dValid, int dim, int query, int doc, float* scores,
                            int* argmax, int argmaxStride, int pair) {
  __shared__ float qTile[QUERY_TILE][K_CHUNK + 1];
  __shared__ float dTile[DOC_TILE][K_CHUNK + 1];
  __shared__ float warpSums[THREADS / 32];

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int qStart = qRows.rowStart[query];
  const int qLength = qRows.rowLength[query];
  const int dStart = dRows.rowStart[doc];
  const int dLength = dRows.rowLength[doc];
  clearArgmaxTail(argmax, pair, argmaxStride, qLength, THREADS);

  if (dValid[doc] == 0) {  // a document with no valid token
    if (threadIdx.x == 0) scores[pair] = EMPTY_DOCUMENT_SCORE;
    if (argmax != nullptr) {
      for (int s = threadIdx.x; s < qLength; s += THREADS) argmax[(size_t)pair * argmaxStride + s] = -1;
    }
    return;
  }

  float partial = 0.f;  // this warp's share of the sum over query tokens
  for (int q0 = 0; q0 < qLength; q0 += QUERY_TILE) {
    float best[ROWS_PER_THREAD];
    int bestIndex[ROWS_PER_THREAD];
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; r++) {
      best[r] = -INFINITY;
      bestIndex[r] = NO_TOKEN;
    }
    for (int t0 = 0; t0 < dLength; t0 += DOC_TILE) {
      float acc[ROWS_PER_THREAD][COLS_PER_THREAD] = {};
      for (int k0 = 0; k0 < dim; k0 += K_CHUNK) {
        stageTile<TQ, QUERY_TILE>(qTile, q, qStart, qLength, q0, k0, dim);
        stageTile<TD, DOC_TILE>(dTile, d, dStart, dLength, t0, k0, dim);
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < K_CHUNK; k++) {
          float a[ROWS_PER_THREAD];
          float b[COLS_PER_THREAD];
#pragma unroll
          for (int r = 0; r < ROWS_PER_THREAD; r++) a[r] = qTile[warp * ROWS_PER_THREAD + r][k];
#pragma unroll
          for (int c = 0; c < COLS_PER_THREAD; c++) b[c] = dTile[lane + 32 * c][k];
#pragma unroll
          for (int r = 0; r < ROWS_PER_THREAD; r++)
#pragma unroll
            for (int c = 0; c < COLS_PER_THREAD; c++) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
        }
        __syncthreads();
      }
      // online max over this tile's valid document tokens, in column order
#pragma unroll
      for (int c = 0; c < COLS_PER_THREAD; c++) {
        int t = t0 + lane + 32 * c;
        if (t < dLength && isValid(dRows, dStart + t)) {
#pragma unroll
          for (int r = 0; r < ROWS_PER_THREAD; r++) maxUpdate(best[r], bestIndex[r], acc[r][c], t);
        }
      }
    }
    // epilogue: max across the 32 column owners of each row, then add the valid rows
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; r++) {
      float v = best[r];
      int i = bestIndex[r];
      for (int offset = 16; offset > 0; offset /= 2) {
        float ov = __shfl_xor_sync(0xffffffffu, v, offset);
        int oi = __shfl_xor_sync(0xffffffffu, i, offset);
        maxMerge(v, i, ov, oi);
      }
      int s = q0 + warp * ROWS_PER_THREAD + r;
      if (lane == 0 && s < qLength) {
        bool valid = isValid(qRows, qStart + s);
        if (valid) partial += v;
        if (argmax != nullptr)
          argmax[(size_t)pair * argmaxStride + s] = valid ? argmaxOrFirstValid(i, dRows, dStart, dLength) : -1;
      }
    }
  }
  if (lane == 0) warpSums[warp] = partial;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0.f;
    for (int w = 0; w < THREADS / 32; w++) sum += warpSums[w];  // fixed order: deterministic
    scores[pair] = sum;
  }
}

}  // namespace maxsim4j

using namespace maxsim4j;

// One entry point per (query dtype, document dtype). mode 0 = all pairs: query = pair / perQuery, document
// = docOffset + pair % perQuery (docOffset lets top-k score the corpus block by block); mode 1 = each
// query owns documents [query * perQuery, (query + 1) * perQuery) (pairwise: perQuery = 1; candidates: K).
// Block b computes pair b and writes scores[pair] (and argmax[pair * argmaxStride + slot]).
#define MAXSIM_FORWARD_ENTRY(NAME, TQ, TD)                                                                 \
  extern "C" __global__ void __launch_bounds__(THREADS) NAME(                                              \
      const TQ* q, const int* qStart, const int* qLength, const uint8_t* qMask, const TD* d,              \
      const int* dStart, const int* dLength, const uint8_t* dMask, const int* dValid, int dim, int mode,    \
      int perQuery, int docOffset, float* scores, int* argmax, int argmaxStride) {                          \
    long long pair = blockIdx.x;                                                                         \
    int query = (int)(pair / perQuery);                                                                  \
    int doc = mode == ALL_PAIRS ? docOffset + (int)(pair % perQuery) : (int)pair;                        \
    forwardPair<TQ, TD>(q, Rows{qStart, qLength, qMask}, d, Rows{dStart, dLength, dMask}, dValid, dim,    \
                        query, doc, scores, argmax, argmaxStride, (int)pair);                            \
  }

MAXSIM_FORWARD_ENTRY(maxsim_forward_f32_f32, float, float)
MAXSIM_FORWARD_ENTRY(maxsim_forward_f32_f16, float, __half)
MAXSIM_FORWARD_ENTRY(maxsim_forward_f32_bf16, float, __nv_bfloat16)
MAXSIM_FORWARD_ENTRY(maxsim_forward_f16_f32, __half, float)
MAXSIM_FORWARD_ENTRY(maxsim_forward_f16_f16, __half, __half)
MAXSIM_FORWARD_ENTRY(maxsim_forward_f16_bf16, __half, __nv_bfloat16)
MAXSIM_FORWARD_ENTRY(maxsim_forward_bf16_f32, __nv_bfloat16, float)
MAXSIM_FORWARD_ENTRY(maxsim_forward_bf16_f16, __nv_bfloat16, __half)
MAXSIM_FORWARD_ENTRY(maxsim_forward_bf16_bf16, __nv_bfloat16, __nv_bfloat16)
