// Rule 20's kernel (forward/maxsim_quant_tma.cuh) for int8 and e4m3 documents of d over 128, up to 1024: each
// slot one 128-byte slice of a tile's 64 tokens, copied through a tensor map. A module of its own: in one with the
// d <= 128 entries (maxsim_forward_quant_tma.cu), ptxas scheduled those otherwise and one of them scored wrong
// (docs/design/kernel-selection.md, rule 20, "A defect seen once").
#include "forward/maxsim_quant_tma.cuh"

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
using namespace maxsim4j;

// The tensors of maxsim_forward_quant_tma.cu's entries (8-bit documents, d a multiple of 16), and `documents`: a
// tensor map of the stored bytes as a matrix of d columns, its box 128 columns by 64 rows, 128-byte swizzled.
// Entry names: maxsim_forward_quant_tma_w{SLICES}_{query type}_{document type}, d over 128 x SLICES / 2 and up to
// 128 x SLICES.
#define MAXSIM_QT_TILED_ENTRY(TQ, TD, SLICES, NAME)                                                           \
  extern "C" __global__ void __maxnreg__(quantTmaRegisters(SLICES)) NAME(                                    \
      const TQ::Storage* q, const int* qStart, const int* qLength, const uint8_t* qMask, const float* qScale,  \
      const uint8_t* d, const int* dStart, const int* dLength, const uint8_t* dMask, const float* dScale,      \
      const int* dValid, int dim, int mode, int perQuery, int docOffset, long long pairs, float* scores,       \
      unsigned long long* work, const __grid_constant__ TensorMap documents) {                                \
    MAXSIM_QT_CALL(TQ, TD, 2, false, SLICES, 4, &documents);                                                   \
  }
#define MAXSIM_QT_WIDE(TQ, QN, TD, DN)                                    \
  MAXSIM_QT_TILED_ENTRY(TQ, TD, 2, maxsim_forward_quant_tma_w2_##QN##_##DN) \
  MAXSIM_QT_TILED_ENTRY(TQ, TD, 4, maxsim_forward_quant_tma_w4_##QN##_##DN) \
  MAXSIM_QT_TILED_ENTRY(TQ, TD, 8, maxsim_forward_quant_tma_w8_##QN##_##DN)
MAXSIM_QT_WIDE(BF16, bf16, S8, s8)
MAXSIM_QT_WIDE(BF16, bf16, E4M3, e4m3)
MAXSIM_QT_WIDE(F16, f16, S8, s8)
MAXSIM_QT_WIDE(F16, f16, E4M3, e4m3)
#endif
