// Test only: A/B entries of the tensor-core kernel for compressed documents (ForcedKernels' quant_* names),
// bf16 queries, dynamic pairs, the shipped parameters but for:
//   _v1: no document scales   _v2: no expansion (raw bytes as operands)   _v4: accumulators split over k
//   _n2: one n-tile per step instead of the shipped two
#define MAXSIM4J_TEMPLATES_ONLY
#include "maxsim_forward_quant.cu"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define MAXSIM_QUANT_AB(TD, DN, CHUNKS, NT, NT2)                                                                 \
  MAXSIM_QUANT_ENTRY(BF16, TD, CHUNKS, NT, true, 1, maxsim_forward_quant_c##CHUNKS##_v1_dyn_bf16_##DN)          \
  MAXSIM_QUANT_ENTRY(BF16, TD, CHUNKS, NT, true, 2, maxsim_forward_quant_c##CHUNKS##_v2_dyn_bf16_##DN)          \
  MAXSIM_QUANT_ENTRY(BF16, TD, CHUNKS, NT, true, 4, maxsim_forward_quant_c##CHUNKS##_v4_dyn_bf16_##DN)          \
  MAXSIM_QUANT_ENTRY(BF16, TD, CHUNKS, NT2, true, 0, maxsim_forward_quant_c##CHUNKS##_n2_dyn_bf16_##DN)
MAXSIM_QUANT_AB(S8, s8, 2, 2, 1)
MAXSIM_QUANT_AB(S8, s8, 1, 2, 1)
MAXSIM_QUANT_AB(E4M3, e4m3, 2, 2, 1)
MAXSIM_QUANT_AB(B1, b1, 1, 2, 1)
#endif
