// Element access for every storage type, compressed ones included: int8, fp8 e4m3 (OCP e4m3fn: 0x7f and
// 0xff are NaN) and 1-bit (8 dims per byte, most significant bit first; bit 1 is +1, bit 0 is -1). A
// compressed token's value is its per-token fp32 scale times these raw values; the kernels apply the scale to
// the dot product, so every value they multiply is exact in bf16 and fp16.
#pragma once
#include <cuda_fp8.h>
#include "common/maxsim_common.cuh"

namespace maxsim4j {

// Storage types as template tags: the element type a kernel argument points at, and how a token is read.
struct F32 { using Storage = float; };
struct F16 { using Storage = __half; };
struct BF16 { using Storage = __nv_bfloat16; };
struct S8 { using Storage = int8_t; };
struct E4M3 { using Storage = uint8_t; };
struct B1 { using Storage = uint8_t; };

// Whether a type carries per-token scales (the compressed ones).
template <typename T> struct Compressed { static constexpr bool value = false; };
template <> struct Compressed<S8> { static constexpr bool value = true; };
template <> struct Compressed<E4M3> { static constexpr bool value = true; };
template <> struct Compressed<B1> { static constexpr bool value = true; };

__device__ __forceinline__ float e4m3ToFloat(uint8_t byte) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)byte, __NV_E4M3)));
}

// The raw (unscaled) value of element k of stored token `token`, as fp32 (exact for every type).
template <typename T> struct Element;
template <> struct Element<F32> {
  static __device__ __forceinline__ float at(const float* p, size_t token, int k, int dim) { return p[token * dim + k]; }
};
template <> struct Element<F16> {
  static __device__ __forceinline__ float at(const __half* p, size_t token, int k, int dim) {
    return __half2float(p[token * dim + k]);
  }
};
template <> struct Element<BF16> {
  static __device__ __forceinline__ float at(const __nv_bfloat16* p, size_t token, int k, int dim) {
    return __bfloat162float(p[token * dim + k]);
  }
};
template <> struct Element<S8> {
  static __device__ __forceinline__ float at(const int8_t* p, size_t token, int k, int dim) {
    return (float)p[token * dim + k];
  }
};
template <> struct Element<E4M3> {
  static __device__ __forceinline__ float at(const uint8_t* p, size_t token, int k, int dim) {
    return e4m3ToFloat(p[token * dim + k]);
  }
};
template <> struct Element<B1> {
  static __device__ __forceinline__ float at(const uint8_t* p, size_t token, int k, int dim) {
    const uint8_t byte = p[token * ((dim + 7) / 8) + k / 8];
    return (byte >> (7 - k % 8)) & 1 ? 1.f : -1.f;
  }
};

// A dot product times its pair's scale product (query scale x document scale, multiplied first as every
// backend does), keeping an exact zero where that product overflows (0 x inf would read NaN).
__device__ __forceinline__ float scaledDot(float dot, float scaleProduct) {
  return dot == 0.f && isinf(scaleProduct) ? 0.f : dot * scaleProduct;
}

// A token's scale: 1 without a scales array (the uncompressed types pass none).
__device__ __forceinline__ float scaleOf(const float* scales, int token) {
  return scales == nullptr ? 1.f : scales[token];
}

}  // namespace maxsim4j
