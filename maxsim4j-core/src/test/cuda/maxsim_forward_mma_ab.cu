// Test only: the block-kernel variants rule 12 of docs/design/kernel-selection.md was measured against, for
// A/B runs (scripts/gpu-ab.sh 2 2p 2r 2rp) and tests. Same parameters as the shipped entries.
//   mma2   32 rows per pass, any d, fragments in shared memory
//   mma2p  as mma2, pipelined (d <= 128: an n-tile is one load group)
//   mma2r  Lq <= 32 per pass, d <= 128, fragments in registers
#define MAXSIM4J_TEMPLATES_ONLY
#include "forward/maxsim_forward_mma.cu"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 750
#define MAXSIM_MMA_AB_VARIANTS(SUFFIX, T)                                \
  MAXSIM_MMA_ENTRY(maxsim_forward_mma2_##SUFFIX, T, 2, 0, 1, false)      \
  MAXSIM_MMA_ENTRY(maxsim_forward_mma2p_##SUFFIX, T, 2, 0, 1, true)      \
  MAXSIM_MMA_ENTRY(maxsim_forward_mma2r_##SUFFIX, T, 2, 4, 1, false)

#if !MAXSIM4J_SPLIT_K
MAXSIM_MMA_AB_VARIANTS(bf16, __nv_bfloat16)
#endif
MAXSIM_MMA_AB_VARIANTS(f16, __half)
#endif
