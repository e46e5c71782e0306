// How the compressed-document kernels (maxsim_forward_quant.cu on mma.sync, maxsim_forward_quant_wgmma.cu on
// wgmma) load and expand document bytes: the piece of a token each thread copies, the exact expansion of its bytes
// into bf16 or fp16 operand pairs, and the k order (pieceDim) that expansion leaves, which the query operand follows;
// and the same expansion in dimension order, stored as 16-byte pieces of the wgmma kernel's swizzled tiles
// (maxsim_forward_wgmma.cu).
#pragma once
#include <type_traits>
#include "common/maxsim_async.cuh"
#include "common/maxsim_quant.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
namespace maxsim4j {

// How a document type is stored and expanded: bytes per thread per chunk, the dims they hold.
template <typename TD> struct Piece;
template <> struct Piece<S8> {
  static constexpr int BYTES = 16, DIMS = 16;
};
template <> struct Piece<E4M3> {
  static constexpr int BYTES = 16, DIMS = 16;
};
template <> struct Piece<B1> {
  static constexpr int BYTES = 4, DIMS = 32;
};

// The mma operand type: fp16 for fp16 queries, bf16 otherwise.
template <typename TQ> struct Operand {
  using Type = __nv_bfloat16;
};
template <> struct Operand<F16> {
  using Type = __half;
};

template <typename O> __device__ __forceinline__ uint32_t pack(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
template <> __device__ __forceinline__ uint32_t pack<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// One operand value (exact where v is: the callers pass query values of bf16, fp16 or a compressed type).
template <typename O> __device__ __forceinline__ O operandOf(float v);
template <> __device__ __forceinline__ __nv_bfloat16 operandOf<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half operandOf<__half>(float v) { return __float2half_rn(v); }

// 4 signed bytes of `w` as b0 = (byte 0, byte 2), b1 = (byte 1, byte 3), exactly, in integer operations and
// one packed subtraction per pair. bf16 (8 significant bits): 128 + the low 7 bits, minus 128, or 256 where the
// byte is negative (its top bit lands on the exponent's lowest bit: 0x4380 is 256). fp16: 1024 + (x + 128),
// minus 1152.
// The exponent bytes of both halves (bf16 128, fp16 1024 + 128), read from constant memory: in a register,
// they let one lop3 mask and combine (with two immediates the compiler emits two instructions per pair).
__constant__ uint32_t EXPONENTS_BF16 = 0x43004300u;
__constant__ uint32_t EXPONENTS_F16 = 0x64806480u;

// (w & MASK) | c, or (w & MASK) ^ c, in one lop3.
template <uint32_t MASK>
__device__ __forceinline__ uint32_t maskOr(uint32_t w, uint32_t c) {
  uint32_t r;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(r) : "r"(w), "n"(MASK), "r"(c));
  return r;
}
template <uint32_t MASK>
__device__ __forceinline__ uint32_t maskXor(uint32_t w, uint32_t c) {
  uint32_t r;
  asm("lop3.b32 %0, %1, %2, %3, 0x6A;\n" : "=r"(r) : "r"(w), "n"(MASK), "r"(c));
  return r;
}

template <typename O> __device__ __forceinline__ uint32_t expandPair(uint32_t w);
template <> __device__ __forceinline__ uint32_t expandPair<__nv_bfloat16>(uint32_t w) {
  const uint32_t exponents = EXPONENTS_BF16;
  const uint32_t m = maskOr<0x007F007Fu>(w, exponents);
  const uint32_t s = maskOr<0x00800080u>(w, exponents);
  __nv_bfloat162 v = __hsub2(*reinterpret_cast<const __nv_bfloat162*>(&m), *reinterpret_cast<const __nv_bfloat162*>(&s));
  return *reinterpret_cast<uint32_t*>(&v);
}
template <> __device__ __forceinline__ uint32_t expandPair<__half>(uint32_t w) {
  const uint32_t exponents = EXPONENTS_F16;
  const uint32_t m = maskXor<0x00FF00FFu>(w, exponents);
  __half2 v = __hsub2(*reinterpret_cast<const __half2*>(&m), *reinterpret_cast<const __half2*>(&exponents));
  return *reinterpret_cast<uint32_t*>(&v);
}
template <typename O> __device__ __forceinline__ void expand(S8, uint32_t w, uint32_t& b0, uint32_t& b1) {
  b0 = expandPair<O>(w);
  b1 = expandPair<O>(w >> 8);
}
template <typename O> __device__ __forceinline__ void expand(E4M3, uint32_t w, uint32_t& b0, uint32_t& b1) {
  const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w & 0xffffu), __NV_E4M3);
  const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w >> 16), __NV_E4M3);
  if constexpr (std::is_same<O, __half>::value) {
    b0 = *reinterpret_cast<const uint32_t*>(&lo);
    b1 = *reinterpret_cast<const uint32_t*>(&hi);
  } else {
    const float2 a = __half22float2(__half2(lo));
    const float2 b = __half22float2(__half2(hi));
    b0 = pack<O>(a.x, a.y);
    b1 = pack<O>(b.x, b.y);
  }
}
// 4 stored int8 or e4m3 values (a word, dims 0-3) as two operand pairs in dimension order, (0, 1) and (2, 3),
// as the wgmma kernel's shared-memory tiles hold them (expand leaves int8 as (0, 2) and (1, 3)).
template <typename O> __device__ __forceinline__ void expandInOrder(S8, uint32_t w, uint32_t& p01, uint32_t& p23) {
  uint32_t b0, b1;
  expand<O>(S8{}, w, b0, b1);
  p01 = __byte_perm(b0, b1, 0x5410);
  p23 = __byte_perm(b0, b1, 0x7632);
}
template <typename O> __device__ __forceinline__ void expandInOrder(E4M3, uint32_t w, uint32_t& p01, uint32_t& p23) {
  expand<O>(E4M3{}, w, p01, p23);
}

__device__ __forceinline__ void storeShared16(uint32_t address, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(address), "r"(a), "r"(b), "r"(c), "r"(d)
               : "memory");
}

// 8 stored values (two words, dims in order) as one 16-byte piece of T at shared address `address`.
template <typename T, typename S>
__device__ __forceinline__ void storeExpandedPiece(uint32_t address, uint32_t w0, uint32_t w1) {
  uint32_t v[4];
  expandInOrder<T>(S{}, w0, v[0], v[1]);
  expandInOrder<T>(S{}, w1, v[2], v[3]);
  storeShared16(address, v[0], v[1], v[2], v[3]);
}

// Bits of step j as +-1: a set bit clears the sign of its half. b0 takes bits 15 - 2j and 31 - 2j of `w`, b1
// bits 14 - 2j and 30 - 2j (a shift and one lop3 each: the -1 pair is read from constant memory, as the exponents
// above, so the mask and the sign flip are one instruction).
__constant__ uint32_t MINUS_ONES_BF16 = 0xBF80BF80u;
__constant__ uint32_t MINUS_ONES_F16 = 0xBC00BC00u;
template <typename O> __device__ __forceinline__ void expandBits(uint32_t w, int j, uint32_t& b0, uint32_t& b1) {
  const uint32_t minus = std::is_same<O, __half>::value ? MINUS_ONES_F16 : MINUS_ONES_BF16;
  b0 = maskXor<0x80008000u>(w << (2 * j), minus);
  b1 = maskXor<0x80008000u>(w << (2 * j + 1), minus);
}

// The dim within a piece of element e (0..3) of step j: the order in which the expansion above leaves them.
template <typename TD> __device__ __forceinline__ int pieceDim(int j, int e);
template <> __device__ __forceinline__ int pieceDim<S8>(int j, int e) {
  return 4 * j + (e == 0 ? 0 : e == 1 ? 2 : e == 2 ? 1 : 3);
}
template <> __device__ __forceinline__ int pieceDim<E4M3>(int j, int e) {
  return 4 * j + e;
}
template <> __device__ __forceinline__ int pieceDim<B1>(int j, int e) {
  const int bit = (e == 0 ? 15 : e == 1 ? 31 : e == 2 ? 14 : 30) - 2 * j;  // bit of the little-endian word
  return 8 * (bit / 8) + 7 - bit % 8;                                      // most significant bit first
}

__device__ __forceinline__ int quantDocumentOf(long long pair, int mode, int perQuery, int docOffset) {
  return mode == ALL_PAIRS ? docOffset + (int)(pair % perQuery) : (int)pair;
}

template <int BYTES>
__device__ __forceinline__ void copyPiece(uint32_t slot, const void* src, bool present) {
  if constexpr (BYTES == 16) {
    copyAsync16<128>(slot, src, present);
  } else {
    copyAsyncSmall<BYTES>(slot, src, present);
  }
}

template <int BYTES> struct Loaded;
template <> struct Loaded<16> {
  using Type = uint4;
};
template <> struct Loaded<4> {
  using Type = uint32_t;
};

}  // namespace maxsim4j
#endif
