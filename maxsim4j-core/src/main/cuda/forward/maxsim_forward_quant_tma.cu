// Rule 20's bulk-copy kernel (forward/maxsim_quant_tma.cuh): the entries of d up to 128, each document slot one
// bulk copy. The wider 8-bit entries, read through a tensor map, are maxsim_forward_quant_tma_wide.cu's.
#include "forward/maxsim_quant_tma.cuh"

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
using namespace maxsim4j;

// Same tensors as maxsim_forward_quant_*, documents as raw bytes (16-byte aligned, d a multiple of 16 for 8-bit
// documents; 1-bit ones any d up to 128, in a buffer whose last 16-byte unit is whole), queries of at most 32
// tokens; qScale: each query token's weight (null: 1), for compressed queries its scale; `work`: two zeroed 64-bit
// counters, the pairs after each block's first taken at run time.
// Entry names: maxsim_forward_quant_tma_c{CHUNKS}_{query type}_{document type}, CHUNKS 64-dim chunks (d <= 128;
// 1-bit rows read as 128 dims, c2, or at d <= 64 as 64, c1; `_narrow` for 1-bit tokens of fewer than 16 bytes);
// c1k{STEPS}: 8-bit rows of d = 16 x STEPS, 16 to 48 (c1 reads them as 64 dims).
#define MAXSIM_QT_ENTRY(TQ, TD, CHUNKS, NARROW, ROW_STEPS, NAME)                                              \
  extern "C" __global__ void __launch_bounds__(QT_THREADS, QT_BLOCKS_PER_SM) NAME(                         \
      const TQ::Storage* q, const int* qStart, const int* qLength, const uint8_t* qMask, const float* qScale,  \
      const uint8_t* d, const int* dStart, const int* dLength, const uint8_t* dMask, const float* dScale,      \
      const int* dValid, int dim, int mode, int perQuery, int docOffset, long long pairs, float* scores,       \
      unsigned long long* work) {                                                                             \
    MAXSIM_QT_CALL(TQ, TD, CHUNKS, NARROW, 0, ROW_STEPS, nullptr);                                            \
  }
#define MAXSIM_QT_PAIR(TQ, QN, TD, DN)                                                    \
  MAXSIM_QT_ENTRY(TQ, TD, 1, false, 1, maxsim_forward_quant_tma_c1k1_##QN##_##DN) \
  MAXSIM_QT_ENTRY(TQ, TD, 1, false, 2, maxsim_forward_quant_tma_c1k2_##QN##_##DN) \
  MAXSIM_QT_ENTRY(TQ, TD, 1, false, 3, maxsim_forward_quant_tma_c1k3_##QN##_##DN) \
  MAXSIM_QT_ENTRY(TQ, TD, 1, false, 4, maxsim_forward_quant_tma_c1_##QN##_##DN)   \
  MAXSIM_QT_ENTRY(TQ, TD, 2, false, 4, maxsim_forward_quant_tma_c2_##QN##_##DN)
MAXSIM_QT_PAIR(BF16, bf16, S8, s8)
MAXSIM_QT_PAIR(BF16, bf16, E4M3, e4m3)
MAXSIM_QT_PAIR(F16, f16, S8, s8)
MAXSIM_QT_PAIR(F16, f16, E4M3, e4m3)
MAXSIM_QT_PAIR(S8, s8, S8, s8)
MAXSIM_QT_PAIR(E4M3, e4m3, E4M3, e4m3)
MAXSIM_QT_ENTRY(BF16, B1, 2, false, 4, maxsim_forward_quant_tma_c2_bf16_b1)
MAXSIM_QT_ENTRY(F16, B1, 2, false, 4, maxsim_forward_quant_tma_c2_f16_b1)
MAXSIM_QT_ENTRY(BF16, B1, 2, true, 4, maxsim_forward_quant_tma_c2_bf16_b1_narrow)
MAXSIM_QT_ENTRY(F16, B1, 2, true, 4, maxsim_forward_quant_tma_c2_f16_b1_narrow)
MAXSIM_QT_ENTRY(BF16, B1, 1, true, 4, maxsim_forward_quant_tma_c1_bf16_b1_narrow)
MAXSIM_QT_ENTRY(F16, B1, 1, true, 4, maxsim_forward_quant_tma_c1_f16_b1_narrow)
MAXSIM_QT_ENTRY(B1, B1, 2, false, 4, maxsim_forward_quant_tma_c2_b1_b1)
MAXSIM_QT_ENTRY(B1, B1, 2, true, 4, maxsim_forward_quant_tma_c2_b1_b1_narrow)
MAXSIM_QT_ENTRY(B1, B1, 1, true, 4, maxsim_forward_quant_tma_c1_b1_b1_narrow)
#endif
