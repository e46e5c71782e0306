// Hopper warpgroup tensor-core instructions (wgmma, sm_90a only) as the wgmma forwards use them: shared
// memory descriptors for 128-byte-swizzled, K-major tiles, the m64n128k16 multiply of halves (and n64 for a
// document's last tokens) with fp32 accumulators, its k32 counterpart for int8 (s32), and the fences and
// groups that order them. See the PTX ISA, "Asynchronous Warpgroup Level Matrix
// Multiply-Accumulate Instructions".
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace maxsim4j {

// A tile as wgmma reads it: rows of 64 halves (128 bytes, one "swizzle atom" row), K-major, the 16-byte
// chunk c of row r stored at chunk c ^ (r % 8): eight consecutive rows then touch all 32 banks. Atoms
// (8 rows, 1024 bytes) must start 1024-byte aligned.
constexpr int SWIZZLE_ROW_BYTES = 128;
constexpr int SWIZZLE_ROW_HALVES = 64;

__device__ __forceinline__ uint32_t swizzled(int row, int chunk16) {
  return (uint32_t)(row * SWIZZLE_ROW_BYTES + ((chunk16 ^ (row & 7)) << 4));
}

// The matrix descriptor of such a tile starting at shared address `address` (advance it by 32 bytes per
// k-step of 16 halves inside the 128-byte row): start address >> 4 in bits 0-13, leading byte offset
// (unused for swizzled K-major tiles; 1 by convention) in 16-29, stride byte offset between 8-row groups
// (1024 bytes) >> 4 in 32-45, base offset 0 (atoms aligned), 128-byte swizzle (1) in bits 62-63.
__device__ __forceinline__ uint64_t tileDescriptor(uint32_t address) {
  return (uint64_t)((address & 0x3FFFF) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 | (uint64_t)1 << 62;
}

// Orders this thread's register accesses before the next wgmma (needed before the first and after any
// ordinary access to the accumulators).
__device__ __forceinline__ void wgmmaFence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most PENDING of the warpgroup's committed wgmma groups are still running.
template <int PENDING>
__device__ __forceinline__ void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}
// Shared memory written through the generic proxy (cp.async, st.shared) before wgmma (async proxy) reads it.
__device__ __forceinline__ void fenceProxyAsync() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Moves this warpgroup's registers per thread to COUNT (a multiple of 8, 24..256): down (INCREASE = false)
// to hand them to warpgroups that then ask for more (INCREASE = true), as warp-specialized kernels do.
template <bool INCREASE, int COUNT>
__device__ __forceinline__ void setMaxRegisters() {
  if constexpr (INCREASE) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(COUNT));
  } else {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(COUNT));
  }
}

// A named barrier (bar.sync): `threads` (a multiple of 32) arrivals complete barrier `id`, and each waits for
// that. Barrier 0 is __syncthreads'.
__device__ __forceinline__ void namedBarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Keeps the compiler from moving accumulator reads or writes across an asynchronous wgmma.
template <int REGISTERS>
__device__ __forceinline__ void pinAccumulators(float (&d)[REGISTERS]) {
#pragma unroll
  for (int i = 0; i < REGISTERS; i++) asm volatile("" : "+f"(d[i])::"memory");
}
template <int REGISTERS>
__device__ __forceinline__ void pinAccumulators(int (&d)[REGISTERS]) {
#pragma unroll
  for (int i = 0; i < REGISTERS; i++) asm volatile("" : "+r"(d[i])::"memory");
}

// D[64 x N] (+)= A[64 x 16] x B[N x 16]^T, A and B by descriptor; accumulate = 0 overwrites D. Thread
// layout of D (N / 2 registers): warp w of the warpgroup holds rows 16w + lane / 4 (d[4j], d[4j + 1]) and
// 16w + 8 + lane / 4 (d[4j + 2], d[4j + 3]), at columns 8j + 2 (lane % 4) and + 1, j = 0 .. N / 8 - 1.
// N = 128 for whole tiles, 64 for a document's last tokens when they are that few. A comes by descriptor
// from shared memory or, in the overloads taking words (n32, n64, n128), from registers.
template <typename T> struct Wgmma;

// The accumulator operands of an N-wide wgmma: N / 2 registers, as the asm's first operands; OUT(C) binds
// them with constraint C ("+f" for fp32 accumulators, "+r" for s32).
#define MAXSIM_WGMMA_D128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define MAXSIM_WGMMA_OUT128(C) C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7]), C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15]), C(d[16]), C(d[17]), C(d[18]), C(d[19]), C(d[20]), C(d[21]), C(d[22]), C(d[23]), C(d[24]), C(d[25]), C(d[26]), C(d[27]), C(d[28]), C(d[29]), C(d[30]), C(d[31]), C(d[32]), C(d[33]), C(d[34]), C(d[35]), C(d[36]), C(d[37]), C(d[38]), C(d[39]), C(d[40]), C(d[41]), C(d[42]), C(d[43]), C(d[44]), C(d[45]), C(d[46]), C(d[47]), C(d[48]), C(d[49]), C(d[50]), C(d[51]), C(d[52]), C(d[53]), C(d[54]), C(d[55]), C(d[56]), C(d[57]), C(d[58]), C(d[59]), C(d[60]), C(d[61]), C(d[62]), C(d[63])
#define MAXSIM_WGMMA_D64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define MAXSIM_WGMMA_OUT64(C) C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7]), C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15]), C(d[16]), C(d[17]), C(d[18]), C(d[19]), C(d[20]), C(d[21]), C(d[22]), C(d[23]), C(d[24]), C(d[25]), C(d[26]), C(d[27]), C(d[28]), C(d[29]), C(d[30]), C(d[31])

#define MAXSIM_WGMMA_D32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define MAXSIM_WGMMA_OUT32(C) C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7]), C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15])

// One Wgmma<T> per input type (TYPE: its PTX name): n128, n64, and run<N> choosing between them.
#define MAXSIM_WGMMA_FOR(T, TYPE)                                                                         \
  template <> struct Wgmma<T> {                                                                           \
    using Accumulator = float;                                                                            \
    static __device__ __forceinline__ void n128(float (&d)[64], uint64_t a, uint64_t b, int accumulate) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D128     \
                   ", %64, %65, p, 1, 1, 0, 0;\n}\n"                                                      \
                   : MAXSIM_WGMMA_OUT128("+f")                                                                 \
                   : "l"(a), "l"(b), "r"(accumulate));                                                    \
    }                                                                                                     \
    static __device__ __forceinline__ void n64(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {  \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D64       \
                   ", %32, %33, p, 1, 1, 0, 0;\n}\n"                                                      \
                   : MAXSIM_WGMMA_OUT64("+f")                                                                  \
                   : "l"(a), "l"(b), "r"(accumulate));                                                    \
    }                                                                                                     \
    /* A from registers: this thread's 4 words of the 64 x 16 A tile, laid out as mma.m16n8k16's A */     \
    static __device__ __forceinline__ void n128(float (&d)[64], const uint32_t (&a)[4], uint64_t b,       \
                                                int accumulate) {                                         \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D128     \
                   ", {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"                                        \
                   : MAXSIM_WGMMA_OUT128("+f")                                                                 \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));                \
    }                                                                                                     \
    static __device__ __forceinline__ void n64(float (&d)[32], const uint32_t (&a)[4], uint64_t b,        \
                                               int accumulate) {                                          \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D64       \
                   ", {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"                                        \
                   : MAXSIM_WGMMA_OUT64("+f")                                                                  \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));                \
    }                                                                                                     \
    static __device__ __forceinline__ void n32(float (&d)[16], const uint32_t (&a)[4], uint64_t b,        \
                                               int accumulate) {                                          \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D32       \
                   ", {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"                                        \
                   : MAXSIM_WGMMA_OUT32("+f")                                                                  \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));                \
    }                                                                                                     \
    /* A from registers, N = 32, 64 or 128 */                                                             \
    template <int N, int R>                                                                               \
    static __device__ __forceinline__ void run(float (&d)[R], const uint32_t (&a)[4], uint64_t b,         \
                                               int accumulate) {                                          \
      static_assert(R == N / 2, "N / 2 accumulators");                                                    \
      if constexpr (N == 128) n128(d, a, b, accumulate);                                                  \
      else if constexpr (N == 64) n64(d, a, b, accumulate);                                               \
      else n32(d, a, b, accumulate);                                                                      \
    }                                                                                                     \
    template <int N, int R>                                                                               \
    static __device__ __forceinline__ void run(float (&d)[R], uint64_t a, uint64_t b, int accumulate) {   \
      static_assert(R == N / 2, "N / 2 accumulators");                                                    \
      if constexpr (N == 128) n128(d, a, b, accumulate);                                                  \
      else n64(d, a, b, accumulate);                                                                      \
    }                                                                                                     \
  };

MAXSIM_WGMMA_FOR(__nv_bfloat16, "bf16")
MAXSIM_WGMMA_FOR(__half, "f16")

// int8 on both sides, A and B by descriptor (or A from registers, n32): k32 (one instruction still reads 32 bytes
// of each row) into s32 accumulators, exact. (Not e4m3: the fp8 tensor cores add into a 13-bit mantissa, dropping
// products below 2^-13 of the running sum, where the library's contract is fp32 accumulation.)
template <> struct Wgmma<int8_t> {
  using Accumulator = int;
  static __device__ __forceinline__ void n128(int (&d)[64], uint64_t a, uint64_t b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 " MAXSIM_WGMMA_D128 ", %64, %65, p;\n}\n"
                 : MAXSIM_WGMMA_OUT128("+r")
                 : "l"(a), "l"(b), "r"(accumulate));
  }
  static __device__ __forceinline__ void n64(int (&d)[32], uint64_t a, uint64_t b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 " MAXSIM_WGMMA_D64 ", %32, %33, p;\n}\n"
                 : MAXSIM_WGMMA_OUT64("+r")
                 : "l"(a), "l"(b), "r"(accumulate));
  }
  // A from registers: this thread's 4 words of the 64 x 32 A tile, laid out as mma.m16n8k32's A; N = 32
  static __device__ __forceinline__ void n32(int (&d)[16], const uint32_t (&a)[4], uint64_t b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 " MAXSIM_WGMMA_D32
                 ", {%16, %17, %18, %19}, %20, p;\n}\n"
                 : MAXSIM_WGMMA_OUT32("+r")
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
  }
  template <int N, int R>
  static __device__ __forceinline__ void run(int (&d)[R], uint64_t a, uint64_t b, int accumulate) {
    static_assert(R == N / 2, "N / 2 accumulators");
    if constexpr (N == 128) n128(d, a, b, accumulate);
    else n64(d, a, b, accumulate);
  }
};

}  // namespace maxsim4j
