// Test only: the streaming kernel's A/B entries (scripts/gpu-ab.sh stream_n1 stream_n2 stream_r6). Same parameters
// as the shipped entries.
//   c2_n1, c4_n2: one or two n-tiles per step instead of the shipped two (c2) or one (c4)
//   c2_r6, c4_r6: a 6 KB ring per warp instead of 12 KB
#define MAXSIM4J_TEMPLATES_ONLY
#include "forward/maxsim_forward_stream.cu"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define MAXSIM_STREAM_AB_TYPE(T, SUFFIX)                                    \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 2, 1, STREAM_RING_BYTES, _n1)            \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 4, 2, STREAM_RING_BYTES, _n2)            \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 2, 1, STREAM_RING_BYTES / 2, _r6)        \
  MAXSIM_STREAM_ENTRIES(T, SUFFIX, 4, 1, STREAM_RING_BYTES / 2, _r6)

MAXSIM_STREAM_AB_TYPE(__nv_bfloat16, bf16)
MAXSIM_STREAM_AB_TYPE(__half, f16)
#endif
