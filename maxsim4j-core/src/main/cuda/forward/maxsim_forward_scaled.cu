// Fused MaxSim forward, FFMA path for compressed tokens (int8, fp8 e4m3, 1-bit) on either side, with any
// other type on the other: one thread block per (query, document) pair, as maxsim_forward.cu (same tiles,
// online max and fixed-order epilogue), every type widened to fp32 when staged. A compressed token's scale
// multiplies each dot product before the max (a negative scale turns a max into a min, so it cannot come
// after), one multiply per (query token, document token). It serves every shape the tensor-core kernel for
// compressed documents (maxsim_forward_quant.cu) does not take, and training's argmax.
#include "common/maxsim_quant.cuh"

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
__device__ __forceinline__ void stageTile(float (*tile)[K_CHUNK + 1], const typename T::Storage* data, int rowStart,
                                          int rowLength, int first, int k0, int dim) {
  for (int e = threadIdx.x; e < TILE * K_CHUNK; e += THREADS) {
    int t = e / K_CHUNK;
    int k = e % K_CHUNK;
    int token = first + t;
    float v = 0.f;
    if (token < rowLength && k0 + k < dim) {
      v = Element<T>::at(data, (size_t)(rowStart + token), k0 + k, dim);
    }
    tile[t][k] = v;
  }
}

template <typename TQ, typename TD>
__device__ void forwardPair(const typename TQ::Storage* __restrict__ q, Rows qRows, const float* qScale,
                            const typename TD::Storage* __restrict__ d, Rows dRows, const float* dScale,
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
    float qs[ROWS_PER_THREAD];
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; r++) {
      const int s = q0 + warp * ROWS_PER_THREAD + r;
      qs[r] = s < qLength ? scaleOf(qScale, qStart + s) : 1.f;
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
      // online max over this tile's valid document tokens, in column order, of the scaled dot products
#pragma unroll
      for (int c = 0; c < COLS_PER_THREAD; c++) {
        int t = t0 + lane + 32 * c;
        if (t < dLength && isValid(dRows, dStart + t)) {
          const float ds = scaleOf(dScale, dStart + t);
#pragma unroll
          for (int r = 0; r < ROWS_PER_THREAD; r++) maxUpdate(best[r], bestIndex[r], scaledDot(acc[r][c], qs[r] * ds), t);
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

// As maxsim_forward_*, with each side's per-token scales (null: all 1). Entry points
// maxsim_forward_scaled_{query type}_{document type} for every pair of types with a compressed side.
#define MAXSIM_SCALED_ENTRY(NAME, TQ, TD)                                                                   \
  extern "C" __global__ void __launch_bounds__(THREADS) NAME(                                              \
      const TQ::Storage* q, const int* qStart, const int* qLength, const uint8_t* qMask, const float* qScale, \
      const TD::Storage* d, const int* dStart, const int* dLength, const uint8_t* dMask, const float* dScale, \
      const int* dValid, int dim, int mode, int perQuery, int docOffset, float* scores, int* argmax,       \
      int argmaxStride) {                                                                                  \
    long long pair = blockIdx.x;                                                                         \
    int query = (int)(pair / perQuery);                                                                  \
    int doc = mode == ALL_PAIRS ? docOffset + (int)(pair % perQuery) : (int)pair;                        \
    forwardPair<TQ, TD>(q, Rows{qStart, qLength, qMask}, qScale, d, Rows{dStart, dLength, dMask}, dScale,  \
                        dValid, dim, query, doc, scores, argmax, argmaxStride, (int)pair);               \
  }
#define MAXSIM_SCALED_QUERY(TQ, QN)                                          \
  MAXSIM_SCALED_ENTRY(maxsim_forward_scaled_##QN##_s8, TQ, S8)               \
  MAXSIM_SCALED_ENTRY(maxsim_forward_scaled_##QN##_e4m3, TQ, E4M3)           \
  MAXSIM_SCALED_ENTRY(maxsim_forward_scaled_##QN##_b1, TQ, B1)
MAXSIM_SCALED_QUERY(F32, f32)
MAXSIM_SCALED_QUERY(F16, f16)
MAXSIM_SCALED_QUERY(BF16, bf16)
MAXSIM_SCALED_QUERY(S8, s8)
MAXSIM_SCALED_QUERY(E4M3, e4m3)
MAXSIM_SCALED_QUERY(B1, b1)
// compressed queries against uncompressed documents
#define MAXSIM_SCALED_DOCUMENT(TD, DN)                                       \
  MAXSIM_SCALED_ENTRY(maxsim_forward_scaled_s8_##DN, S8, TD)                 \
  MAXSIM_SCALED_ENTRY(maxsim_forward_scaled_e4m3_##DN, E4M3, TD)             \
  MAXSIM_SCALED_ENTRY(maxsim_forward_scaled_b1_##DN, B1, TD)
MAXSIM_SCALED_DOCUMENT(F32, f32)
MAXSIM_SCALED_DOCUMENT(F16, f16)
MAXSIM_SCALED_DOCUMENT(BF16, bf16)
