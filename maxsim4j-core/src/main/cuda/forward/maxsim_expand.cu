// Compressed document tokens (int8, e4m3, 1-bit) written out as bf16 or fp16 operands, exactly (every int8 and
// e4m3 value, and +-1, is exact in both), for the launches that read each document tile many times (rule 21 of
// docs/design/kernel-selection.md): expanded once here, a tile is then read by the warp-specialized kernel as
// bf16 documents are, where expanding it in registers on every read cost more than the tensor cores' work. The
// scales stay apart, applied to each dot product in that kernel's fold.
#include "forward/maxsim_quant_expand.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
using namespace maxsim4j;

namespace {

// The bits of a 1-bit piece (2 bytes, most significant bit first) as 8 pairs of +-1 in dimension order.
template <typename O>
__device__ __forceinline__ void expandBitPiece(uint32_t bytes, uint32_t (&out)[8]) {
  constexpr bool HALF = std::is_same<O, __half>::value;
  constexpr uint32_t ONE = HALF ? 0x3C00u : 0x3F80u, MINUS_ONE = HALF ? 0xBC00u : 0xBF80u;
#pragma unroll
  for (int j = 0; j < 8; j++) {
    const uint32_t byte = (bytes >> (8 * (j / 4))) & 0xffu;
    const int bit = 7 - 2 * (j % 4);
    const uint32_t lo = (byte >> bit) & 1u ? ONE : MINUS_ONE;
    const uint32_t hi = (byte >> (bit - 1)) & 1u ? ONE : MINUS_ONE;
    out[j] = lo | hi << 16;
  }
}

// The pieces of documents firstDoc .. firstDoc + docs - 1, a block per document (strided): piece p of a document
// is values 16 p to 16 p + 15 of its tokens in order (d is a multiple of 16, so a piece lies within one token),
// written where the document's tokens lie in `in`; other tokens of `out` are left as they are.
template <typename TD, typename O>
__device__ __forceinline__ void expandDocuments(const uint8_t* __restrict__ in, uint4* __restrict__ out,
                                                const int* __restrict__ dStart, const int* __restrict__ dLength,
                                                int firstDoc, int docs, int dim) {
  for (int doc = firstDoc + blockIdx.x; doc < firstDoc + docs; doc += gridDim.x) {
    const long long base = (long long)dStart[doc] * (dim / 16), pieces = (long long)dLength[doc] * (dim / 16);
    for (long long i = threadIdx.x; i < pieces; i += blockDim.x) {
      const long long p = base + i;
      uint32_t v[8];
      if constexpr (std::is_same<TD, B1>::value) {
        expandBitPiece<O>(*reinterpret_cast<const uint16_t*>(in + 2 * p), v);
      } else {
        const uint4 w = __ldg(reinterpret_cast<const uint4*>(in) + p);
        expandInOrder<O>(TD{}, w.x, v[0], v[1]);
        expandInOrder<O>(TD{}, w.y, v[2], v[3]);
        expandInOrder<O>(TD{}, w.z, v[4], v[5]);
        expandInOrder<O>(TD{}, w.w, v[6], v[7]);
      }
      out[2 * p] = make_uint4(v[0], v[1], v[2], v[3]);
      out[2 * p + 1] = make_uint4(v[4], v[5], v[6], v[7]);
    }
  }
}

}  // namespace

// `in`: the stored tokens (int8 or e4m3 bytes, or 1-bit tokens of d / 8 bytes), 16-byte aligned; `out`: room for
// as many bf16 or fp16 values, 16-byte aligned; the documents' row starts and lengths; the documents a launch reads
// (all pairs: perQuery from docOffset; listed pairs: the first `pairs`).
// Entries: maxsim_expand_{s8,e4m3,b1}_{bf16,f16}.
#define MAXSIM_EXPAND_ENTRY(TD, O, NAME)                                                                      \
  extern "C" __global__ void __launch_bounds__(256)                                                           \
      NAME(const uint8_t* in, uint4* out, const int* dStart, const int* dLength, int firstDoc, int docs, int dim) { \
    expandDocuments<TD, O>(in, out, dStart, dLength, firstDoc, docs, dim);                                   \
  }
MAXSIM_EXPAND_ENTRY(S8, __nv_bfloat16, maxsim_expand_s8_bf16)
MAXSIM_EXPAND_ENTRY(S8, __half, maxsim_expand_s8_f16)
MAXSIM_EXPAND_ENTRY(E4M3, __nv_bfloat16, maxsim_expand_e4m3_bf16)
MAXSIM_EXPAND_ENTRY(E4M3, __half, maxsim_expand_e4m3_f16)
MAXSIM_EXPAND_ENTRY(B1, __nv_bfloat16, maxsim_expand_b1_bf16)
MAXSIM_EXPAND_ENTRY(B1, __half, maxsim_expand_b1_f16)
#endif
