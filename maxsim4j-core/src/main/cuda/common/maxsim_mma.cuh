// The tensor-core pieces every mma kernel shares: the mma instruction per type and target, the A fragments
// in the k permutation that maxsim_forward_mma.cu's header explains, and the online (max, argmax) over the
// C fragments of a tile of document tokens.
#pragma once
#include "common/maxsim_common.cuh"

// Targets. sm_80+: m16n8k16 for bf16 and fp16. sm_75 has only m16n8k8 (fp16): one m16n8k16 is then two
// m16n8k8 over the two k halves, on the same A/B registers (a0 a1 | a2 a3, b0 | b1), so the k permutation
// and everything around it stay as they are; bf16 entry points exist from sm_80 only. Older targets get no
// entry points (maxsim_forward serves them). MAXSIM4J_FORCE_SPLIT_K (maxsim_forward_mma_k8.cu) builds the
// sm_75 arithmetic for every target, so a newer GPU can test it.
#if defined(MAXSIM4J_FORCE_SPLIT_K) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800)
#define MAXSIM4J_SPLIT_K 1
#else
#define MAXSIM4J_SPLIT_K 0
#endif
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 750
namespace maxsim4j {

constexpr int CHUNK = 32;  // d per 16-byte load of 8 halves x 4 threads

template <typename T> struct MmaOp;
#if !MAXSIM4J_SPLIT_K
template <> struct MmaOp<__nv_bfloat16> {
  static __device__ __forceinline__ void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
#endif
template <> struct MmaOp<__half> {
  static __device__ __forceinline__ void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if MAXSIM4J_SPLIT_K
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b0));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[2]), "r"(a[3]), "r"(b1));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
  }
};

// Two halves of row `row` at k and k+1 as one 32-bit register (zero outside the row or past d).
template <typename T>
__device__ __forceinline__ uint32_t pairAt(const T* q, int rowStart, int rows, int row, int k, int dim) {
  if (row >= rows || k >= dim) return 0u;
  return *reinterpret_cast<const uint32_t*>(q + (size_t)(rowStart + row) * dim + k);
}

// The A fragments of one lane for one 32-wide chunk: rows A (g) and B (g + 8) of an m-tile, each given by
// its token row (start, length, token), halves tig*8 .. tig*8+7 permuted as the header explains.
template <typename T>
__device__ __forceinline__ void buildFragments(const T* q, int startA, int lengthA, int tokenA, int startB,
                                               int lengthB, int tokenB, int k, int dim, uint4& s0, uint4& s1) {
  s0.x = pairAt(q, startA, lengthA, tokenA, k + 0, dim);
  s0.y = pairAt(q, startB, lengthB, tokenB, k + 0, dim);
  s0.z = pairAt(q, startA, lengthA, tokenA, k + 2, dim);
  s0.w = pairAt(q, startB, lengthB, tokenB, k + 2, dim);
  s1.x = pairAt(q, startA, lengthA, tokenA, k + 4, dim);
  s1.y = pairAt(q, startB, lengthB, tokenB, k + 4, dim);
  s1.z = pairAt(q, startA, lengthA, tokenA, k + 6, dim);
  s1.w = pairAt(q, startB, lengthB, tokenB, k + 6, dim);
}

// Online max: this thread holds tokens t0 + 8n + 2*tig + {0, 1} for rows g and g + 8 of every m-tile.
template <int MT, int NT>
__device__ __forceinline__ void onlineMax(float (&best)[MT][2], int (&bestIndex)[MT][2], const float (&acc)[MT][NT][4],
                                          const Rows& dRows, int dStart, int dLength, int t0, int tig) {
#pragma unroll
  for (int n = 0; n < NT; n++) {
#pragma unroll
    for (int j = 0; j < 2; j++) {
      int t = t0 + 8 * n + 2 * tig + j;
      if (t < dLength && isValid(dRows, dStart + t)) {
#pragma unroll
        for (int m = 0; m < MT; m++) {
          maxUpdate(best[m][0], bestIndex[m][0], acc[m][n][j], t);
          maxUpdate(best[m][1], bestIndex[m][1], acc[m][n][2 + j], t);
        }
      }
    }
  }
}

// A row's (max, argmax) across the quad (the 4 lanes that hold the row for different tokens): afterwards
// every lane of the quad has the row's winner (larger value, NaN first, lower index on ties).
__device__ __forceinline__ void quadMerge(float& v, int& i) {
  for (int offset = 1; offset < 4; offset *= 2) {
    float ov = __shfl_xor_sync(0xffffffffu, v, offset);
    int oi = __shfl_xor_sync(0xffffffffu, i, offset);
    maxMerge(v, i, ov, oi);
  }
}

// The running (max, argmax) of every row a thread holds, before the first document tile: -inf, no token.
template <int MT>
__device__ __forceinline__ void resetRunningMax(float (&best)[MT][2], int (&bestIndex)[MT][2]) {
#pragma unroll
  for (int m = 0; m < MT; m++) {
    best[m][0] = best[m][1] = -INFINITY;
    bestIndex[m][0] = bestIndex[m][1] = NO_TOKEN;
  }
}

template <int MT, int NT>
__device__ __forceinline__ void clear(float (&acc)[MT][NT][4]) {
#pragma unroll
  for (int m = 0; m < MT; m++)
#pragma unroll
    for (int n = 0; n < NT; n++) acc[m][n][0] = acc[m][n][1] = acc[m][n][2] = acc[m][n][3] = 0.f;
}

}  // namespace maxsim4j
#endif
