// Fixed dimensional encodings (MUVERA) on the device, bit for bit those of the CPU encoder
// (internal/FdeEncoding.java): every product and sum in float64 with explicit rounding (__dmul_rn, __dadd_rn,
// __ddiv_rn: nothing is contracted into an FMA, as Java never fuses), every sum in the CPU's order, one rounding
// to float at the end. A chunk of rows runs as up to four launches:
//   maxsim_fde_gather      each valid token widened exactly to float64 (a quantized one scale x q), rows compacted
//   maxsim_fde_products    tokens x the encoder's matrix [d][columns], each product summed over k ascending
//   maxsim_fde_partitions  per row and repetition: sign patterns, partition sums or averages, empty partitions
//   maxsim_fde_sketch      the optional final count sketch
#include "common/maxsim_quant.cuh"

using namespace maxsim4j;

namespace {

constexpr unsigned FULL_MASK = 0xffffffffu;

// Storage codes the Java side passes (KernelType.storageCode).
enum Storage { STORE_F32 = 0, STORE_F16 = 1, STORE_BF16 = 2, STORE_S8 = 3, STORE_E4M3 = 4, STORE_B1 = 5 };

template <typename T>
__device__ __forceinline__ float rawValue(const uint8_t* data, int token, int k, int dim) {
  return Element<T>::at(reinterpret_cast<const typename T::Storage*>(data), (size_t)token, k, dim);
}

// The products tile: 128 tokens x 64 columns per block of 256 threads, 8 x 4 per thread, k in steps of 8.
constexpr int TILE_M = 128;
constexpr int TILE_N = 64;
constexpr int TILE_K = 8;
constexpr int THREAD_M = 8;
constexpr int THREAD_N = 4;

// The lowest token whose sign pattern is nearest to partition p in Hamming distance, for the whole warp.
__device__ int nearestToken(const int* patterns, int n, int p, int lane) {
  int best = 0x7fffffff;
  int bestDistance = 0x7fffffff;
  for (int i = lane; i < n; i += 32) {
    int distance = __popc(patterns[i] ^ p);
    if (distance < bestDistance) {  // strict: each lane keeps its lowest token among equals
      bestDistance = distance;
      best = i;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    int otherDistance = __shfl_xor_sync(FULL_MASK, bestDistance, offset);
    int other = __shfl_xor_sync(FULL_MASK, best, offset);
    if (otherDistance < bestDistance || (otherDistance == bestDistance && other < best)) {
      bestDistance = otherDistance;
      best = other;
    }
  }
  return best;
}

}  // namespace

// out[i * dim + k] = element k of stored token slots[i], widened to float64; a compressed token's raw value times
// its scale in float64, which is exact (an fp32 scale times a value of at most 8 significant bits), as Tokens.value
// computes it: in fp32 the product overflows for a large scale and rounds away for a tiny one. A grid-stride loop
// over count x dim values.
extern "C" __global__ void maxsim_fde_gather(const uint8_t* data, int storage, const int* __restrict__ slots,
                                             const float* __restrict__ scales, int dim, long long count, double* out) {
  const long long values = count * dim;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < values; e += step) {
    const int token = slots[e / dim];
    const int k = (int)(e % dim);
    double v;
    switch (storage) {
      case STORE_F32: v = rawValue<F32>(data, token, k, dim); break;
      case STORE_F16: v = rawValue<F16>(data, token, k, dim); break;
      case STORE_BF16: v = rawValue<BF16>(data, token, k, dim); break;
      case STORE_S8: v = __dmul_rn(scaleOf(scales, token), rawValue<S8>(data, token, k, dim)); break;
      case STORE_E4M3: v = __dmul_rn(scaleOf(scales, token), rawValue<E4M3>(data, token, k, dim)); break;
      default: v = __dmul_rn(scaleOf(scales, token), rawValue<B1>(data, token, k, dim)); break;
    }
    out[e] = v;
  }
}

// products[i][c] = sum over k ascending of tokens[i][k] * weights[k][c], from +0.0 as the CPU's sums
// start. grid (ceil(count / 128), ceil(columns / 64)), 256 threads; both operands staged in shared memory.
extern "C" __global__ void __launch_bounds__(256) maxsim_fde_products(const double* __restrict__ tokens,
                                                                     const double* __restrict__ weights,
                                                                     double* products, int count, int dim,
                                                                     int columns) {
  __shared__ __align__(16) double as[TILE_K][TILE_M];
  __shared__ __align__(16) double bs[TILE_K][TILE_N];
  const int tx = threadIdx.x % (TILE_N / THREAD_N);
  const int ty = threadIdx.x / (TILE_N / THREAD_N);
  const long long m0 = (long long)blockIdx.x * TILE_M;
  const int n0 = blockIdx.y * TILE_N;
  double acc[THREAD_M][THREAD_N];
#pragma unroll
  for (int i = 0; i < THREAD_M; i++) {
#pragma unroll
    for (int j = 0; j < THREAD_N; j++) acc[i][j] = 0.0;
  }
  for (int k0 = 0; k0 < dim; k0 += TILE_K) {
    for (int e = threadIdx.x; e < TILE_M * TILE_K; e += blockDim.x) {
      const int m = e / TILE_K, kk = e % TILE_K;  // k fastest: a token's values are read together
      const long long row = m0 + m;
      as[kk][m] = row < count && k0 + kk < dim ? tokens[row * dim + k0 + kk] : 0.0;
    }
    for (int e = threadIdx.x; e < TILE_K * TILE_N; e += blockDim.x) {
      const int kk = e / TILE_N, n = e % TILE_N;
      bs[kk][n] = k0 + kk < dim && n0 + n < columns ? weights[(size_t)(k0 + kk) * columns + n0 + n] : 0.0;
    }
    __syncthreads();
    const int steps = min(TILE_K, dim - k0);  // no padding enters a sum: 0 x inf would be NaN, and -0 + 0 is +0
#pragma unroll
    for (int kk = 0; kk < TILE_K; kk++) {
      if (kk < steps) {
        const double* ak = &as[kk][ty * THREAD_M];
        const double2 a0 = *reinterpret_cast<const double2*>(ak), a1 = *reinterpret_cast<const double2*>(ak + 2);
        const double2 a2 = *reinterpret_cast<const double2*>(ak + 4), a3 = *reinterpret_cast<const double2*>(ak + 6);
        const double2 b0 = *reinterpret_cast<const double2*>(&bs[kk][tx * THREAD_N]);
        const double2 b1 = *reinterpret_cast<const double2*>(&bs[kk][tx * THREAD_N + 2]);
        const double a[THREAD_M] = {a0.x, a0.y, a1.x, a1.y, a2.x, a2.y, a3.x, a3.y};
        const double b[THREAD_N] = {b0.x, b0.y, b1.x, b1.y};
#pragma unroll
        for (int i = 0; i < THREAD_M; i++) {
#pragma unroll
          for (int j = 0; j < THREAD_N; j++) acc[i][j] = __dadd_rn(acc[i][j], __dmul_rn(a[i], b[j]));
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < THREAD_M; i++) {
    const long long row = m0 + ty * THREAD_M + i;
#pragma unroll
    for (int j = 0; j < THREAD_N; j++) {
      const int c = n0 + tx * THREAD_N + j;
      if (row < count && c < columns) products[row * columns + c] = acc[i][j];
    }
  }
}

// One block per row (256 threads): the row's tokens are rowFirst[row] .. rowFirst[row + 1] - 1 of the compact
// tokens, products and patterns. Per repetition, each token's sign pattern, then a warp per partition: its
// tokens found by ballots in ascending order, their projections (the products after the repetition's
// hyperplanes, or the tokens themselves without a projection) summed lane per coordinate, averaged for
// documents, an empty document partition filled from the nearest token. Writes the row's encoding rounded to
// float into out, or (a final sketch follows) in float64 into raw; the other pointer is null.
extern "C" __global__ void __launch_bounds__(256) maxsim_fde_partitions(const double* __restrict__ products,
                                                                       const double* __restrict__ tokens,
                                                                       const int* __restrict__ rowFirst,
                                                                       int* patterns, float* out, double* raw,
                                                                       int simHashBits, int repetitions,
                                                                       int projectionDim, int projects,
                                                                       int columns, int document, int fill) {
  const int row = blockIdx.x;
  const long long first = rowFirst[row];
  const int n = (int)(rowFirst[row + 1] - first);
  const int partitions = 1 << simHashBits;
  const int perRepetition = simHashBits + (projects ? projectionDim : 0);
  const long long rawDimension = (long long)repetitions * partitions * projectionDim;
  const double* rowProducts = products + first * columns;
  const double* rowTokens = tokens + first * projectionDim;  // read without a projection, where it is d
  int* rowPatterns = patterns + first;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int r = 0; r < repetitions; r++) {
    const int at = r * perRepetition;
    __syncthreads();  // the last repetition's patterns are read no more
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      int bits = 0;
      for (int b = 0; b < simHashBits; b++) {
        if (rowProducts[(size_t)i * columns + at + b] > 0) bits |= 1 << b;
      }
      rowPatterns[i] = bits;
    }
    __syncthreads();
    for (int p = warp; p < partitions; p += warps) {
      int count = 0;
      for (int i0 = 0; i0 < n; i0 += 32) {
        count += __popc(__ballot_sync(FULL_MASK, i0 + lane < n && rowPatterns[i0 + lane] == p));
      }
      const int source = document && fill && count == 0 && n > 0 ? nearestToken(rowPatterns, n, p, lane) : -1;
      const long long base = ((long long)r * partitions + p) * projectionDim;
      for (int k0 = 0; k0 < projectionDim; k0 += 32) {
        const int k = k0 + lane;
        double value = 0.0;
        if (source >= 0) {
          if (k < projectionDim) {
            value = projects ? rowProducts[(size_t)source * columns + at + simHashBits + k]
                             : rowTokens[(size_t)source * projectionDim + k];
          }
        } else if (count > 0) {
          for (int i0 = 0; i0 < n; i0 += 32) {
            unsigned members = __ballot_sync(FULL_MASK, i0 + lane < n && rowPatterns[i0 + lane] == p);
            while (members != 0 && k < projectionDim) {
              const int i = i0 + __ffs(members) - 1;
              members &= members - 1;
              value = __dadd_rn(value, projects ? rowProducts[(size_t)i * columns + at + simHashBits + k]
                                                : rowTokens[(size_t)i * projectionDim + k]);
            }
          }
          if (document && count > 1) value = __ddiv_rn(value, (double)count);
        }
        if (k < projectionDim) {
          if (out != nullptr) {
            out[row * rawDimension + base + k] = __double2float_rn(value);
          } else {
            raw[row * rawDimension + base + k] = value;
          }
        }
      }
    }
  }
}

// out[row][j] = the sum over raw coordinates i ascending with bucket j of sign(i) x raw[row][i], rounded to float
// once. members[bucketStart[j] .. bucketStart[j + 1] - 1] lists bucket j's coordinates ascending, each as i
// (sign +1) or ~i (sign -1). One block per row, threads over the buckets.
extern "C" __global__ void maxsim_fde_sketch(const double* __restrict__ raw, const int* __restrict__ bucketStart,
                                             const int* __restrict__ members, int rawDimension, int finalDim,
                                             float* out) {
  const double* rowRaw = raw + (long long)blockIdx.x * rawDimension;
  for (int j = threadIdx.x; j < finalDim; j += blockDim.x) {
    double sum = 0.0;
    for (int e = bucketStart[j]; e < bucketStart[j + 1]; e++) {
      const int m = members[e];
      sum = __dadd_rn(sum, m >= 0 ? rowRaw[m] : __dmul_rn(-1.0, rowRaw[~m]));
    }
    out[(long long)blockIdx.x * finalDim + j] = __double2float_rn(sum);
  }
}
