// Hopper warpgroup tensor-core instructions (wgmma, sm_90a only) as the wgmma forward uses them: shared
// memory descriptors for 128-byte-swizzled, K-major tiles, the m64n128k16 multiply (and n64 for a
// document's last tokens) with fp32 accumulators, and the fences and groups that order them. See the PTX ISA, "Asynchronous Warpgroup Level Matrix
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

// Named barriers (bar.sync/bar.arrive): `threads` (a multiple of 32) arrivals complete barrier `id`; sync
// also waits for that, arrive does not. Barrier 0 is __syncthreads'.
__device__ __forceinline__ void namedBarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void namedBarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Keeps the compiler from moving accumulator reads or writes across an asynchronous wgmma.
template <int REGISTERS>
__device__ __forceinline__ void pinAccumulators(float (&d)[REGISTERS]) {
#pragma unroll
  for (int i = 0; i < REGISTERS; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// D[64 x N] (+)= A[64 x 16] x B[N x 16]^T, A and B by descriptor; accumulate = 0 overwrites D. Thread
// layout of D (N / 2 registers): warp w of the warpgroup holds rows 16w + lane / 4 (d[4j], d[4j + 1]) and
// 16w + 8 + lane / 4 (d[4j + 2], d[4j + 3]), at columns 8j + 2 (lane % 4) and + 1, j = 0 .. N / 8 - 1.
// N = 128 for whole tiles, 64 for a document's last tokens when they are that few. A comes by descriptor
// from shared memory or, in the overloads taking words (n32, n64, n128), from registers.
template <typename T> struct Wgmma;

// The accumulator operands of an N-wide wgmma: N / 2 registers, as the asm's first operands.
#define MAXSIM_WGMMA_D128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define MAXSIM_WGMMA_OUT128 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define MAXSIM_WGMMA_D64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define MAXSIM_WGMMA_OUT64 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

#define MAXSIM_WGMMA_D32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define MAXSIM_WGMMA_OUT32 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])

// One Wgmma<T> per input type (TYPE: its PTX name): n128, n64, and run<N> choosing between them.
#define MAXSIM_WGMMA_FOR(T, TYPE)                                                                         \
  template <> struct Wgmma<T> {                                                                           \
    static __device__ __forceinline__ void n128(float (&d)[64], uint64_t a, uint64_t b, int accumulate) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D128     \
                   ", %64, %65, p, 1, 1, 0, 0;\n}\n"                                                      \
                   : MAXSIM_WGMMA_OUT128                                                                  \
                   : "l"(a), "l"(b), "r"(accumulate));                                                    \
    }                                                                                                     \
    static __device__ __forceinline__ void n64(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {  \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D64       \
                   ", %32, %33, p, 1, 1, 0, 0;\n}\n"                                                      \
                   : MAXSIM_WGMMA_OUT64                                                                   \
                   : "l"(a), "l"(b), "r"(accumulate));                                                    \
    }                                                                                                     \
    /* A from registers: this thread's 4 words of the 64 x 16 A tile, laid out as mma.m16n8k16's A */     \
    static __device__ __forceinline__ void n128(float (&d)[64], const uint32_t (&a)[4], uint64_t b,       \
                                                int accumulate) {                                         \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D128     \
                   ", {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"                                        \
                   : MAXSIM_WGMMA_OUT128                                                                  \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));                \
    }                                                                                                     \
    static __device__ __forceinline__ void n64(float (&d)[32], const uint32_t (&a)[4], uint64_t b,        \
                                               int accumulate) {                                          \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D64       \
                   ", {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"                                        \
                   : MAXSIM_WGMMA_OUT64                                                                   \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));                \
    }                                                                                                     \
    static __device__ __forceinline__ void n32(float (&d)[16], const uint32_t (&a)[4], uint64_t b,        \
                                               int accumulate) {                                          \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " " MAXSIM_WGMMA_D32       \
                   ", {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"                                        \
                   : MAXSIM_WGMMA_OUT32                                                                   \
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

}  // namespace maxsim4j
