// Fused MaxSim backward: dL/dQ and dL/dD from dL/dscores and the argmax the forward saved, never the
// similarity grid. score(p) = sum over valid query slots s of <Q[i,s], D[j, argmax(p,s)]>, so
//   dQ[i,s] = sum over pairs p of query i of dScores[p] * D[j(p), argmax(p,s)]            (a gather)
//   dD[j,t] = sum over pairs p of document j, slots s with argmax(p,s) == t of dScores[p] * Q[i(p),s]
// The argmax is int32, or int16 (Index) when the forward saved it narrow (documents of at most 32766 tokens).
// argmax is -1 for masked query slots, slots past a query's length and empty documents: no gradient, so
// masked tokens get exactly zero. Sums are fp32; the gradients are written in fp32 or in the input dtype
// (`outType`: the input's dtype when the caller asks for it), laid out like the inputs' storage; the host zeroes both buffers first (storage slots
// outside every row stay zero). The atomic variant accumulates in fp32 only.
//
// dQ: one warp per query slot, the query's pairs in order (loads run ahead, the sum does not): deterministic,
//   no atomics.
// dD, deterministic ("owned"): one warp owns TOKENS consecutive tokens of one document and accumulates
//   their rows in its own shared memory; it scans every (pair, slot) of its document in a fixed order
//   (query, then slot) and adds the contributions that land in its tokens. The order of the sum is fixed,
//   so the result is bitwise the same on every run.
// dD, atomic: one warp per (pair, slot), atomicAdd into dD. Faster when a document meets few queries, but
//   the order of float additions (and so the last bits) varies from run to run.
#include "common/maxsim_common.cuh"

namespace maxsim4j {

constexpr int BACKWARD_WARPS = 8;
constexpr int OWNED_WARPS = 4;
constexpr int OWNED_FLOATS_PER_WARP = 2048;  // TOKENS * dim: 8 KB of shared memory per warp

// Gradient storage types, the codes the Java side passes (KernelType.gradientCode).
enum GradientType { GRADIENT_F32 = 0, GRADIENT_F16 = 1, GRADIENT_BF16 = 2 };

__device__ __forceinline__ void storeGradient(void* out, size_t i, float v, int type) {
  if (type == GRADIENT_BF16) {
    static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(v);
  } else if (type == GRADIENT_F16) {
    static_cast<__half*>(out)[i] = __float2half_rn(v);
  } else {
    static_cast<float*>(out)[i] = v;
  }
}

__device__ __forceinline__ int documentOf(int mode, int perQuery, int query, int c, int docOffset) {
  return mode == ALL_PAIRS ? docOffset + c : query * perQuery + c;
}

// dQ gather. The pairs of the query are taken in order (the fixed order of the sum), but their loads are
// not serialised: each lane first fetches one pair's (argmax, weight, row) for 32 pairs at once, then the
// rows of GATHER_AHEAD pairs are loaded before any is accumulated.
constexpr int GATHER_AHEAD = 8;

template <typename T, typename Index>
__device__ void gatherQueryGradient(const T* __restrict__ d, Rows dRows, Rows qRows, const Index* __restrict__ argmax,
                                    int argmaxStride, const float* __restrict__ dScores, int mode, int perQuery,
                                    int dim, int query, int slot, void* dQ, int outType) {
  const int lane = threadIdx.x % 32;
  const int qLength = qRows.rowLength[query];
  if (slot >= qLength) return;
  const size_t out = (size_t)(qRows.rowStart[query] + slot) * dim;
  for (int k0 = 0; k0 < dim; k0 += 128) {  // 4 elements per lane per round
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int c0 = 0; c0 < perQuery; c0 += 32) {
      // lane j: pair c0 + j's winning document row (-1: no gradient) and weight
      const int n = min(32, perQuery - c0);
      long long row = -1;
      float w = 0.f;
      if (lane < n) {
        const long long pair = (long long)query * perQuery + c0 + lane;
        const int a = argmax[pair * argmaxStride + slot];
        if (a >= 0) {
          w = dScores[pair];
          row = (long long)dRows.rowStart[documentOf(mode, perQuery, query, c0 + lane, 0)] + a;
        }
      }
      for (int j0 = 0; j0 < n; j0 += GATHER_AHEAD) {
        float x[GATHER_AHEAD][4];
        float wj[GATHER_AHEAD];
        bool present[GATHER_AHEAD];
#pragma unroll
        for (int u = 0; u < GATHER_AHEAD; u++) {  // loads first ...
          const int j = j0 + u;
          const long long r = __shfl_sync(0xffffffffu, row, j & 31);
          wj[u] = __shfl_sync(0xffffffffu, w, j & 31);
          present[u] = j < n && r >= 0;
          const T* src = d + (size_t)(present[u] ? r : 0) * dim;
#pragma unroll
          for (int v = 0; v < 4; v++) {
            const int k = k0 + 32 * v + lane;
            x[u][v] = present[u] && k < dim ? widen(src[k]) : 0.f;
          }
        }
#pragma unroll
        for (int u = 0; u < GATHER_AHEAD; u++) {  // ... then the sum, pair by pair in order
          if (present[u]) {
#pragma unroll
            for (int v = 0; v < 4; v++) acc[v] += wj[u] * x[u][v];
          }
        }
      }
    }
#pragma unroll
    for (int v = 0; v < 4; v++) {
      int k = k0 + 32 * v + lane;
      if (k < dim) storeGradient(dQ, out + k, acc[v], outType);
    }
  }
}

template <typename T, typename Index>
__device__ void ownedDocumentGradient(const T* __restrict__ q, Rows qRows, Rows dRows, const Index* __restrict__ argmax,
                                      int argmaxStride, const float* __restrict__ dScores, int mode, int perQuery,
                                      int queries, int dim, int doc, void* dD, int outType) {
  extern __shared__ float owned[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int tokens = max(1, min(32, OWNED_FLOATS_PER_WARP / dim));
  const int tLo = (blockIdx.y * OWNED_WARPS + warp) * tokens;
  const int dLength = dRows.rowLength[doc];
  if (tLo >= dLength) return;  // warp-uniform: nothing below uses the block's other warps
  float* acc = owned + warp * tokens * dim;
  for (int e = lane; e < tokens * dim; e += 32) acc[e] = 0.f;
  __syncwarp();
  // the pairs this document takes part in: all queries (all pairs) or its one query (pairwise, candidates)
  const int first = mode == ALL_PAIRS ? 0 : doc / perQuery;
  const int end = mode == ALL_PAIRS ? queries : first + 1;
  for (int i = first; i < end; i++) {
    long long pair = mode == ALL_PAIRS ? (long long)i * perQuery + doc : doc;
    const int qLength = qRows.rowLength[i], qStart = qRows.rowStart[i];
    const float w = dScores[pair];
    for (int s0 = 0; s0 < qLength; s0 += 32) {
      int a = s0 + lane < qLength ? argmax[pair * argmaxStride + s0 + lane] : -1;
      unsigned hits = __ballot_sync(0xffffffffu, a >= tLo && a < tLo + tokens);
      while (hits != 0) {  // in slot order: the fixed order of the sum
        int b = __ffs(hits) - 1;
        hits &= hits - 1;
        int t = __shfl_sync(0xffffffffu, a, b) - tLo;
        const T* row = q + (size_t)(qStart + s0 + b) * dim;
        for (int k = lane; k < dim; k += 32) acc[t * dim + k] += w * widen(row[k]);
      }
    }
  }
  __syncwarp();
  const int dStart = dRows.rowStart[doc];
  for (int e = lane; e < tokens * dim; e += 32) {
    int t = tLo + e / dim;
    if (t < dLength) storeGradient(dD, (size_t)(dStart + t) * dim + e % dim, acc[e], outType);
  }
}

template <typename T, typename Index>
__device__ void atomicDocumentGradient(const T* __restrict__ q, Rows qRows, Rows dRows, const Index* __restrict__ argmax,
                                       int argmaxStride, const float* __restrict__ dScores, int mode, int perQuery,
                                       int dim, long long pair, int slot, float* __restrict__ dD) {
  const int lane = threadIdx.x % 32;
  const int query = (int)(pair / perQuery);
  if (slot >= qRows.rowLength[query]) return;
  const int a = argmax[pair * argmaxStride + slot];
  if (a < 0) return;
  const int doc = mode == ALL_PAIRS ? (int)(pair % perQuery) : (int)pair;
  const float w = dScores[pair];
  const T* row = q + (size_t)(qRows.rowStart[query] + slot) * dim;
  float* out = dD + (size_t)(dRows.rowStart[doc] + a) * dim;
  for (int k = lane; k < dim; k += 32) atomicAdd(out + k, w * widen(row[k]));
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Entry points per input dtype and argmax width (_a16: int16). Parameters: queries and documents as in
// maxsim_forward_*, the saved argmax ([pairs][argmaxStride]), dScores ([pairs]), the pair mapping (mode,
// perQuery), the output and whether it is in the input type (outType) or fp32.
#define MAXSIM_BACKWARD_ENTRIES(SUFFIX, T, Index)                                                             \
  /* grid (queries, ceil(maxQueryLength / BACKWARD_WARPS)), BACKWARD_WARPS warps */                         \
  extern "C" __global__ void __launch_bounds__(BACKWARD_WARPS * 32) maxsim_backward_dq_##SUFFIX(             \
      const T* d, const int* dStart, const int* dLength, const int* qStart, const int* qLength,             \
      const Index* argmax, int argmaxStride, const float* dScores, int mode, int perQuery, int dim, void* dQ, \
      int outType) {                                                                                        \
    gatherQueryGradient<T, Index>(d, Rows{dStart, dLength, nullptr}, Rows{qStart, qLength, nullptr}, argmax, \
                                  argmaxStride, dScores, mode, perQuery, dim, blockIdx.x,                   \
                                  blockIdx.y * BACKWARD_WARPS + threadIdx.x / 32, dQ, outType);             \
  }                                                                                                         \
  /* grid (documents, ceil(maxDocumentLength / (OWNED_WARPS * tokens))), OWNED_WARPS warps, */              \
  /* OWNED_WARPS * tokens * dim * 4 bytes of dynamic shared memory */                                       \
  extern "C" __global__ void __launch_bounds__(OWNED_WARPS * 32) maxsim_backward_dd_owned_##SUFFIX(          \
      const T* q, const int* qStart, const int* qLength, const int* dStart, const int* dLength,             \
      const Index* argmax, int argmaxStride, const float* dScores, int mode, int perQuery, int queries,      \
      int dim, void* dD, int outType) {                                                                     \
    ownedDocumentGradient<T, Index>(q, Rows{qStart, qLength, nullptr}, Rows{dStart, dLength, nullptr},       \
                                    argmax, argmaxStride, dScores, mode, perQuery, queries, dim, blockIdx.x, \
                                    dD, outType);                                                           \
  }                                                                                                         \
  /* grid (pairs, ceil(argmaxStride / BACKWARD_WARPS)), BACKWARD_WARPS warps */                             \
  extern "C" __global__ void __launch_bounds__(BACKWARD_WARPS * 32) maxsim_backward_dd_atomic_##SUFFIX(      \
      const T* q, const int* qStart, const int* qLength, const int* dStart, const int* dLength,             \
      const Index* argmax, int argmaxStride, const float* dScores, int mode, int perQuery, int dim,          \
      float* dD) {                                                                                          \
    atomicDocumentGradient<T, Index>(q, Rows{qStart, qLength, nullptr}, Rows{dStart, dLength, nullptr},      \
                                     argmax, argmaxStride, dScores, mode, perQuery, dim, blockIdx.x,        \
                                     blockIdx.y * BACKWARD_WARPS + threadIdx.x / 32, dD);                   \
  }

MAXSIM_BACKWARD_ENTRIES(f32, float, int)
MAXSIM_BACKWARD_ENTRIES(f16, __half, int)
MAXSIM_BACKWARD_ENTRIES(bf16, __nv_bfloat16, int)
MAXSIM_BACKWARD_ENTRIES(a16_f16, __half, int16_t)
MAXSIM_BACKWARD_ENTRIES(a16_bf16, __nv_bfloat16, int16_t)
