// The read ceiling of the GPU's memory, against which the one-query corpus scans are judged
// (docs/cli-at-scale.md), and the streaming forward's copy pattern without its arithmetic. Run on the GPU host:
//   nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/read-ceiling scripts/gpu-read-ceiling.cu && /tmp/read-ceiling
// Each line: the median of 10 timed launches (after 2 warm-ups) over a buffer far larger than L2, in GB/s of
// bytes read (the device-to-device copy counts its bytes read and written, as the benches' copy ceiling does).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int WARPS = 4;
constexpr int RING = 12 * 1024;   // per warp, as the streaming forward's
constexpr int DOC_TOKENS = 300;   // documents of 300 tokens x 128 bf16 values
constexpr int ROW = 256;

__device__ __forceinline__ uint32_t shared(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void barrierInit(uint64_t* bar) {
  asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(shared(bar)));
}
__device__ __forceinline__ void bulkLoad(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(shared(bar)), "r"(bytes));
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   shared(dst)),
               "l"(src), "r"(bytes), "r"(shared(bar))
               : "memory");
}
__device__ __forceinline__ void barrierWait(uint64_t* bar, uint32_t parity) {
  asm volatile("{ .reg .pred P; W: mbarrier.try_wait.parity.shared.b64 P, [%0], %1; @!P bra W; }" ::"r"(shared(bar)),
               "r"(parity));
}

// Plain 16-byte loads, UNROLL in flight per thread, the grid striding over the buffer.
template <int UNROLL>
__global__ void gridStride(const uint4* __restrict__ p, size_t n, unsigned* out) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) acc ^= p[i].x;
  if (acc == 0x12345678u) out[0] = acc;  // keeps the loads
}

// Bulk copies (TMA) of BYTES each into a block's ring of STAGES slots, the block reading each slot once.
template <int STAGES, int BYTES>
__global__ void blockBulk(const char* __restrict__ p, size_t nbytes, unsigned* out) {
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) uint64_t full[STAGES];
  const size_t tiles = nbytes / BYTES;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) barrierInit(&full[s]);
    asm volatile("fence.mbarrier_init.release.cluster;");
    for (int s = 0; s < STAGES; s++) {
      const size_t t = blockIdx.x + (size_t)s * gridDim.x;
      if (t < tiles) bulkLoad(ring + s * BYTES, p + t * BYTES, BYTES, &full[s]);
    }
  }
  __syncthreads();
  unsigned acc = 0;
  int it = 0;
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x, it++) {
    const int s = it % STAGES;
    barrierWait(&full[s], (it / STAGES) & 1);
    const uint4* tile = reinterpret_cast<const uint4*>(ring + s * BYTES);
    for (int i = threadIdx.x; i < BYTES / 16; i += blockDim.x) acc ^= tile[i].x ^ tile[i].w;
    __syncthreads();
    const size_t next = t + (size_t)STAGES * gridDim.x;
    if (threadIdx.x == 0 && next < tiles) bulkLoad(ring + s * BYTES, p + next * BYTES, BYTES, &full[s]);
  }
  if (acc == 0x12345678u) out[0] = acc;
}

// The streaming forward's copies: a warp per document (taken from a counter), tiles of 8 rows, each thread
// copying its own 16 bytes of each 64-byte chunk (cp.async, 128-byte L2 prefetch hint) into a lane-major ring.
__global__ void __launch_bounds__(128, 4) streamLaneMajor(const char* __restrict__ d, int docs, unsigned* counter,
                                                          unsigned* out) {
  constexpr int TILE = 8 * ROW, STAGES = RING / TILE, TILES = (DOC_TOKENS + 7) / 8;
  __shared__ __align__(16) uint8_t rings[WARPS][RING];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, tig = lane % 4;
  const uint32_t ring = shared(&rings[warp][lane * 16]);
  int doc = 0, tile = 0, slot = 0, consumerSlot = 0;
  auto take = [&]() {
    unsigned v = lane == 0 ? atomicAdd(counter, 1) : 0;
    doc = __shfl_sync(~0u, v, 0);
    tile = 0;
  };
  auto produce = [&]() {
    if (doc < docs) {
      const int token = tile * 8 + g;
      const char* row = d + ((size_t)doc * DOC_TOKENS + (token < DOC_TOKENS ? token : 0)) * ROW + tig * 16;
      for (int k = 0; k < 4; k++)
        asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" ::"r"(ring + (slot * 4 + k) * 512),
                     "l"(row + k * 64));
      slot = slot + 1 == STAGES ? 0 : slot + 1;
      if (++tile == TILES) take();
    }
    asm volatile("cp.async.commit_group;");
  };
  take();
  for (int s = 0; s < STAGES - 1; s++) produce();
  unsigned acc = 0;
  for (bool more = true; more;) {
    more = doc < docs;
    produce();
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1));
    for (int k = 0; k < 4; k++) {
      uint4 v;
      asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(ring + (consumerSlot * 4 + k) * 512));
      acc ^= v.x ^ v.w;
    }
    consumerSlot = consumerSlot + 1 == STAGES ? 0 : consumerSlot + 1;
  }
  asm volatile("cp.async.wait_group 0;");
  if (acc == 0x12345678u) out[0] = acc;
}

// The same documents and ring, each tile (TOKENS contiguous rows) one bulk copy by lane 0 on the slot's barrier.
template <int TOKENS>
__global__ void __launch_bounds__(128, 4) streamBulk(const char* __restrict__ d, int docs, unsigned* counter,
                                                     unsigned* out) {
  constexpr int TILE = TOKENS * ROW, STAGES = RING / TILE, TILES = (DOC_TOKENS + TOKENS - 1) / TOKENS;
  __shared__ __align__(128) uint8_t rings[WARPS][RING];
  __shared__ __align__(8) uint64_t bars[WARPS][STAGES];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) {
    for (int s = 0; s < STAGES; s++) barrierInit(&bars[warp][s]);
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncwarp();
  int doc = 0, tile = 0, slot = 0, consumerSlot = 0, inFlight = 0;
  uint32_t phases = 0;
  auto take = [&]() {
    unsigned v = lane == 0 ? atomicAdd(counter, 1) : 0;
    doc = __shfl_sync(~0u, v, 0);
    tile = 0;
  };
  auto produce = [&]() {
    if (doc >= docs) return;
    const int first = tile * TOKENS, rows = min(TOKENS, DOC_TOKENS - first);
    if (lane == 0) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      bulkLoad(&rings[warp][slot * TILE], d + ((size_t)doc * DOC_TOKENS + first) * ROW, rows * ROW, &bars[warp][slot]);
    }
    slot = slot + 1 == STAGES ? 0 : slot + 1;
    inFlight++;
    if (++tile == TILES) take();
  };
  take();
  for (int s = 0; s < STAGES - 1; s++) produce();
  unsigned acc = 0;
  while (inFlight > 0) {
    __syncwarp();
    produce();
    barrierWait(&bars[warp][consumerSlot], (phases >> consumerSlot) & 1);
    phases ^= 1u << consumerSlot;
    const uint4* tile = reinterpret_cast<const uint4*>(&rings[warp][consumerSlot * TILE]);
    for (int i = lane; i < TILE / 16; i += 32) acc ^= tile[i].x ^ tile[i].w;
    consumerSlot = consumerSlot + 1 == STAGES ? 0 : consumerSlot + 1;
    inFlight--;
  }
  if (acc == 0x12345678u) out[0] = acc;
}

template <typename Launch>
void report(const char* name, double bytes, unsigned* counter, Launch launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int r = 0; r < 12; r++) {
    cudaMemsetAsync(counter, 0, 4);
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t;
    cudaEventElapsedTime(&t, a, b);
    if (r >= 2) ms.push_back(t);
  }
  const cudaError_t e = cudaGetLastError();
  std::sort(ms.begin(), ms.end());
  const float median = ms[ms.size() / 2];
  std::printf("%-52s %8.3f ms %6.0f GB/s %s\n", name, median, bytes / median / 1e6,
              e == cudaSuccess ? "" : cudaGetErrorString(e));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

}  // namespace

int main() {
  const int docs = 200000;  // 15.4 GB of 300 x 128 bf16 documents
  const size_t bytes = (size_t)docs * DOC_TOKENS * ROW;
  const size_t copyBytes = 4ull << 30;
  char *buffer, *copy;
  unsigned *out, *counter;
  if (cudaMalloc(&buffer, bytes) != cudaSuccess || cudaMalloc(&copy, copyBytes) != cudaSuccess ||
      cudaMalloc(&out, 4) != cudaSuccess || cudaMalloc(&counter, 4) != cudaSuccess) {
    std::printf("cannot allocate %.1f GB\n", (bytes + copyBytes) / 1e9);
    return 1;
  }
  cudaMemset(buffer, 1, bytes);
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  report("device-to-device copy of 4 GiB (read + written)", 2.0 * copyBytes, counter,
         [&] { cudaMemcpyAsync(copy, buffer, copyBytes, cudaMemcpyDeviceToDevice); });
  const size_t n16 = bytes / 16;
  report("16-byte loads, grid stride, 8 in flight, 8 blocks/SM", bytes, counter,
         [&] { gridStride<8><<<sms * 8, 256>>>(reinterpret_cast<const uint4*>(buffer), n16, out); });
  auto bulk16 = blockBulk<6, 16384>;
  cudaFuncSetAttribute(bulk16, cudaFuncAttributeMaxDynamicSharedMemorySize, 6 * 16384);
  report("bulk copies of 16 KB, 6-slot ring, 2 blocks/SM", bytes, counter,
         [&] { bulk16<<<sms * 2, 128, 6 * 16384>>>(buffer, bytes, out); });
  auto bulk32 = blockBulk<4, 32768>;
  cudaFuncSetAttribute(bulk32, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * 32768);
  report("bulk copies of 32 KB, 4-slot ring, 1 block/SM", bytes, counter,
         [&] { bulk32<<<sms, 128, 4 * 32768>>>(buffer, bytes, out); });
  report("streaming forward's copies: cp.async lane-major", bytes, counter,
         [&] { streamLaneMajor<<<sms * 4, 128>>>(buffer, docs, counter, out); });
  report("streaming forward's ring, 8-row tiles as bulk copies", bytes, counter,
         [&] { streamBulk<8><<<sms * 4, 128>>>(buffer, docs, counter, out); });
  return 0;
}
