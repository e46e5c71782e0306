// Top-k on the device: each block keeps the k best of a segment of 2048 candidates, and the host repeats that
// over the survivors until each query keeps k. Only Nq x k (score, index) pairs ever leave the device.
//
// Keys. A candidate is one 64-bit key: high word = the score's fp32 bits mapped to an unsigned order that
// matches Java's Float.compare (NaN above +inf) of the scores as the host returns them (one NaN, zero as +0:
// a forward's butterfly sum of -0 maxima is -0), low word = ~documentIndex. So a larger key
// means a higher score, and among equal scores a lower document index: the library's ranking, with no
// separate tie-break. Key 0 is below every real key and pads short segments.
//
// Selection, per segment. A sort of all 2048 keys (66 barrier-separated steps) would order 2048 to keep k, so
// the block finds the k-th largest key first, by radix select: 8 bits of the key a round, from the top, a
// histogram of the keys still in contention (each warp adds equal digits once), whose one-warp scan picks the
// digit holding the k-th key. It stops as soon as every key left in contention is among the k best: after 2-4
// rounds where the scores differ in their top bits, after all 8 where many keys tie (padding, empty documents).
// Then the k best are gathered and put in order (the next pass and the host expect it sorted): each written at its
// rank, counted against the others, or for larger k sorted by a bitonic network (RANK_MAX_K).
#include <stdint.h>

namespace maxsim4j {

constexpr int TOPK_THREADS = 1024;
constexpr int SEGMENT = 2 * TOPK_THREADS;  // candidates per block: two per thread
constexpr int MAX_K = 512;                 // the host selects larger k on its side
// Up to this k, each selected key finds its rank by counting the others (k^2 / 1024 comparisons a thread, no
// barrier); above it they are sorted by a bitonic network over the next power of two (a barrier a step).
constexpr int RANK_MAX_K = 128;
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr unsigned ALL_LANES = 0xffffffffu;

__device__ __forceinline__ uint64_t scoreKey(float score, int index) {
  uint32_t bits = score != score ? 0x7fc00000u : score == 0.f ? 0u : __float_as_uint(score);  // NaN, +0
  uint32_t ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return ((uint64_t)ordered << 32) | (uint32_t)~(uint32_t)index;
}

struct alignas(16) Selection {
  unsigned histogram[2][RADIX];  // one counted while the other is cleared
  uint64_t best[MAX_K];          // the k best, unordered
  unsigned gathered;             // keys in `best` so far
  unsigned digit, need, count;   // the round's pick: its digit, the rank sought within it, the keys that hold it
};

// The top `bits` bits of key, compared as numbers (bits 8..64).
__device__ __forceinline__ uint64_t topBits(uint64_t key, int bits) { return key >> (64 - bits); }

// Adds this thread's key to the histogram of the round's digit where it is still in contention; equal digits of
// a warp are added once, by the lowest lane (the first rounds see most keys share one digit).
__device__ __forceinline__ void countDigit(unsigned* histogram, uint64_t key, bool contending, int shift) {
  unsigned digit = contending ? (unsigned)(key >> shift) & (RADIX - 1) : RADIX;
  unsigned peers = __match_any_sync(ALL_LANES, digit);
  if (contending && (threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&histogram[digit], __popc(peers));
}

// Warp 0: the digit where the count from the top reaches `need`, and the rank sought within it. Lane l reads
// digits 255 - 8l down to 248 - 8l, so a scan across the lanes counts from the top.
__device__ __forceinline__ void pickDigit(Selection& s, const unsigned* histogram, unsigned need) {
  int lane = threadIdx.x & 31;
  int top = RADIX - 1 - 8 * lane;
  // the lane's 8 counts in two 16-byte loads (8 loads of a word each would meet in the same banks)
  const uint4 low = *reinterpret_cast<const uint4*>(histogram + top - 7);
  const uint4 high = *reinterpret_cast<const uint4*>(histogram + top - 3);
  const unsigned counts[8] = {high.w, high.z, high.y, high.x, low.w, low.z, low.y, low.x};
  unsigned sum = 0;
#pragma unroll
  for (int i = 0; i < 8; i++) sum += counts[i];
  unsigned through = sum;  // keys of this lane's digits and every digit above them
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    unsigned v = __shfl_up_sync(ALL_LANES, through, o);
    if (lane >= o) through += v;
  }
  unsigned above = through - sum;
  if (above < need && need <= through) {
#pragma unroll
    for (int i = 0; i < 8; i++) {
      if (need <= above + counts[i]) {
        s.digit = top - i;
        s.need = need - above;
        s.count = counts[i];
        break;
      }
      above += counts[i];
    }
  }
}

// Appends the keys of this warp for which `take` holds to s.best (one atomic a warp).
__device__ __forceinline__ void gather(Selection& s, uint64_t key, bool take) {
  unsigned takers = __ballot_sync(ALL_LANES, take);
  if (takers == 0) return;
  int lane = threadIdx.x & 31;
  int leader = __ffs(takers) - 1;
  unsigned first = 0;
  if (lane == leader) first = atomicAdd(&s.gathered, __popc(takers));
  first = __shfl_sync(ALL_LANES, first, leader);
  if (take) s.best[first + __popc(takers & ((1u << lane) - 1))] = key;
}

// out[rank of each of s.best's k keys]: the keys above it, and equal ones earlier in `best`. A group of `lanes`
// threads (a power of two within a warp) counts for one key, each a share of the others.
__device__ __forceinline__ void writeByRank(const Selection& s, int k, uint64_t* out) {
  int lanes = 32;
  while (lanes > 1 && lanes * k > TOPK_THREADS) lanes >>= 1;
  int slot = threadIdx.x / lanes, part = threadIdx.x % lanes;
  unsigned rank = 0;
  if (slot < k) {
    uint64_t key = s.best[slot];
    for (int j = part; j < k; j += lanes) {
      uint64_t other = s.best[j];
      rank += other > key || (other == key && j < slot);
    }
  }
  for (int o = lanes >> 1; o > 0; o >>= 1) rank += __shfl_xor_sync(ALL_LANES, rank, o);
  if (slot < k && part == 0) out[rank] = s.best[slot];
}

// s.best's k keys sorted descending by a bitonic network over the next power of two (padded with key 0, below
// every real key), then out[0 .. k).
__device__ __forceinline__ void sortBest(Selection& s, int k, uint64_t* out) {
  int n = 1;
  while (n < k) n <<= 1;
  for (int i = k + threadIdx.x; i < n; i += TOPK_THREADS) s.best[i] = 0;
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      __syncthreads();
      int t = threadIdx.x;
      if (t < n / 2) {
        int i = 2 * t - (t & (stride - 1));  // first element of this thread's pair
        int j = i + stride;
        bool descending = (i & size) == 0;
        uint64_t a = s.best[i], b = s.best[j];
        if ((a < b) == descending) {
          s.best[i] = b;
          s.best[j] = a;
        }
      }
    }
  }
  __syncthreads();
  for (int r = threadIdx.x; r < k; r += TOPK_THREADS) out[r] = s.best[r];
}

// The k best of the block's 2048 keys (two a thread, `mine`), sorted descending, to out[0 .. k). All threads call.
__device__ void selectBest(Selection& s, const uint64_t (&mine)[2], int k, uint64_t* out) {
  for (int i = threadIdx.x; i < 2 * RADIX; i += TOPK_THREADS) (&s.histogram[0][0])[i] = 0;
  if (threadIdx.x == 0) s.gathered = 0;
  __syncthreads();

  // Radix select: after each round, the keys whose top `bits` bits equal prefix's are in contention and the
  // need-th largest of them is the k-th largest of all.
  uint64_t prefix = 0;
  int bits = 0;
  unsigned need = k, count = SEGMENT;
  for (int round = 0; round < 64 / RADIX_BITS; round++) {
    unsigned* histogram = s.histogram[round & 1];
    int shift = 64 - bits - RADIX_BITS;
#pragma unroll
    for (int i = 0; i < 2; i++) {
      countDigit(histogram, mine[i], bits == 0 || topBits(mine[i] ^ prefix, bits) == 0, shift);
    }
    __syncthreads();
    if (threadIdx.x < 32) {
      pickDigit(s, histogram, need);
      for (int i = threadIdx.x; i < RADIX; i += 32) s.histogram[(round + 1) & 1][i] = 0;
    }
    __syncthreads();
    prefix |= (uint64_t)s.digit << shift;
    bits += RADIX_BITS;
    need = s.need;
    count = s.count;
    if (count == need) break;  // every key in contention is among the k best
  }

  // Gather: keys above the prefix, and those at it where all of them count. Otherwise all 64 bits are fixed and
  // the keys at the prefix are copies of one key (only padding repeats): `need` copies of it fill the rest.
  bool whole = count == need;
#pragma unroll
  for (int i = 0; i < 2; i++) {
    uint64_t a = topBits(mine[i], bits), p = topBits(prefix, bits);
    gather(s, mine[i], a > p || (whole && a == p));
  }
  if (!whole && threadIdx.x < need) s.best[k - need + threadIdx.x] = prefix;
  if (k <= RANK_MAX_K) {
    __syncthreads();
    writeByRank(s, k, out);
  } else {
    sortBest(s, k, out);
  }
}
}  // namespace maxsim4j

using namespace maxsim4j;

// scores [queries][width] of documents docOffset .. docOffset + width - 1 -> for each (query, segment), its
// k best keys at out[query * outStride + outOffset + segment * k ...]. grid = (segments, queries).
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) maxsim_topk_from_scores(
    const float* scores, int width, int docOffset, int k, uint64_t* out, long long outStride, long long outOffset) {
  __shared__ Selection s;
  int query = blockIdx.y;
  int first = blockIdx.x * SEGMENT;
  uint64_t mine[2];
#pragma unroll
  for (int i = 0; i < 2; i++) {
    int c = first + threadIdx.x + i * TOPK_THREADS;
    mine[i] = c < width ? scoreKey(scores[(size_t)query * width + c], docOffset + c) : 0ull;
  }
  selectBest(s, mine, k, out + query * outStride + outOffset + (long long)blockIdx.x * k);
}

// in[query * inStride + 0 .. count) -> for each (query, segment of SEGMENT keys), its k best, sorted, at
// out[query * outStride + segment * k ...]. grid = (segments, queries).
extern "C" __global__ void __launch_bounds__(TOPK_THREADS) maxsim_topk_from_keys(
    const uint64_t* in, long long inStride, long long count, int k, uint64_t* out, long long outStride) {
  __shared__ Selection s;
  int query = blockIdx.y;
  long long first = (long long)blockIdx.x * SEGMENT;
  uint64_t mine[2];
#pragma unroll
  for (int i = 0; i < 2; i++) {
    long long c = first + threadIdx.x + i * TOPK_THREADS;
    mine[i] = c < count ? in[query * inStride + c] : 0ull;
  }
  selectBest(s, mine, k, out + query * outStride + (long long)blockIdx.x * k);
}
