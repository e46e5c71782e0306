// Fused MaxSim forward for compressed documents (int8, fp8 e4m3, 1-bit) on tensor cores (sm_80+), for
// queries of any length and d <= 128: one warp per (query, document) pair, persistent warps, document tiles
// streamed through a per-warp cp.async ring, as maxsim_forward_stream.cu, but the tiles hold the compressed
// bytes (half or a sixteenth of bf16's) and are expanded in registers.
//
// Exactness: every int8 and every e4m3 value is exact in bf16 and fp16, and so is +-1; so are the queries'
// values where they are compressed too. The mma multiplies them exactly and accumulates in fp32, and each
// dot product is then multiplied by the document token's scale (and the query token's), one multiply per
// (query token, document token), before the max: a negative scale would turn a max taken first into a min.
//
// k permutation: the mma's 16 k values of a step are spread over a quad, k = 2*tig + {0, 1, 8, 9}. The sum
// over k does not care which physical dims they are, as long as A and B agree, so thread tig of a quad takes
// PIECE_DIMS consecutive dims of a token (16 for 8-bit, 32 for 1-bit: one 16-byte or 4-byte copy) and step j
// of the piece multiplies 4 of them (e = 0..3 for k = 2*tig, 2*tig + 1, 2*tig + 8, 2*tig + 9) in whichever
// order expands in the fewest instructions (pieceDim). The query fragments are built in the same order once per
// query. A chunk is the 4 pieces of a quad.
//
// Rows: the query's rows in passes of 32 (2 m-tiles); a query of more than 32 tokens reads the document
// again per pass (from L2). Inference only: training refuses compressed inputs, and top-k needs no argmax.
#include "common/maxsim_async.cuh"
#include "common/maxsim_mma.cuh"
#include "common/maxsim_quant.cuh"
#include "forward/maxsim_quant_expand.cuh"
#include "forward/maxsim_work.cuh"
#include <type_traits>

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
namespace maxsim4j {

constexpr int QUANT_WARPS = 4;
constexpr int QUANT_THREADS = QUANT_WARPS * 32;
constexpr int QUANT_RING_BYTES = 12 * 1024;  // per warp: 4 warps x 12 KB = 48 KB static shared memory
constexpr int QUANT_MAX_STAGES = 12;
constexpr int QUANT_QUEUE_ENTRIES = 32;  // the pair queue per warp the host gives as dynamic shared memory

// Two raw query values of row `row` at dims p and p2 (zero outside the query or past d), packed.
template <typename TQ, typename O>
__device__ __forceinline__ uint32_t queryPair(const typename TQ::Storage* q, int start, int length, int row, int p,
                                              int p2, int dim) {
  if (row >= length) return 0u;
  const float lo = p < dim ? Element<TQ>::at(q, (size_t)(start + row), p, dim) : 0.f;
  const float hi = p2 < dim ? Element<TQ>::at(q, (size_t)(start + row), p2, dim) : 0.f;
  return pack<O>(lo, hi);
}

struct QuantCursor {
  long long pair;  // -1 once no pair is left
  int doc, dStart, dLength;
  int tile;
};

template <typename TQ, typename TD, int CHUNKS, int NT, bool DYNAMIC>
__device__ void forwardQuant(const typename TQ::Storage* __restrict__ q, Rows qRows, const float* __restrict__ qScale,
                             const uint8_t* __restrict__ d, Rows dRows, const float* __restrict__ dScale,
                             const int* __restrict__ dValid, int dim, int mode, int perQuery, int docOffset,
                             long long pairs, float* scores, unsigned long long* work) {
  using O = typename Operand<TQ>::Type;
  using P = Piece<TD>;
  using L = typename Loaded<P::BYTES>::Type;
  constexpr int STEPS = P::DIMS / 4;              // k16 steps per piece
  constexpr int CHUNK_DIMS = 4 * P::DIMS;         // dims per chunk (a quad's pieces)
  constexpr int TILE_BYTES = NT * CHUNKS * 32 * P::BYTES;
  constexpr int SCALE_BYTES = NT * 32 * 8;        // each thread's two tokens' scales per n-tile
  constexpr int STAGE_BYTES = TILE_BYTES + SCALE_BYTES;
  constexpr int STAGES = QUANT_RING_BYTES / STAGE_BYTES < QUANT_MAX_STAGES ? QUANT_RING_BYTES / STAGE_BYTES
                                                                          : QUANT_MAX_STAGES;
  static_assert(STAGES >= 2, "the ring holds at least two tiles");
  constexpr bool Q_SCALED = Compressed<TQ>::value;
  __shared__ __align__(16) uint8_t rings[QUANT_WARPS][STAGES * STAGE_BYTES];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, tig = lane % 4;
  const uint32_t ringBase = (uint32_t)__cvta_generic_to_shared(&rings[warp][0]);
  const int tokenBytes = std::is_same<TD, B1>::value ? (dim + 7) / 8 : dim;
  auto pieceSlot = [&](int slot, int n, int k) -> uint32_t {
    return ringBase + slot * STAGE_BYTES + ((n * CHUNKS + k) * 32 + lane) * P::BYTES;
  };
  auto scaleSlot = [&](int slot, int n) -> uint32_t {
    return ringBase + slot * STAGE_BYTES + TILE_BYTES + (n * 32 + lane) * 8;
  };

  const long long warps = (long long)gridDim.x * QUANT_WARPS;
  const long long w = (long long)blockIdx.x * QUANT_WARPS + warp;
  // pairs: as maxsim_forward_stream.cu (a contiguous run per warp; with DYNAMIC half of it, then run time)
  PairSplit<DYNAMIC> split(pairs, warps, w, work);
  auto takePair = [&]() -> long long { return split.take(lane); };
  constexpr int QUEUE = STAGES + 1;
  static_assert(QUEUE <= QUANT_QUEUE_ENTRIES, "the host sizes the queues for QUANT_QUEUE_ENTRIES pairs");
  extern __shared__ long long queues[];
  long long* queue = queues + warp * QUEUE;
  int queued = 0, consumed = 0;

  // Producer: one (pair, row pass) after another; pairs whose document has no valid token are answered here.
  QuantCursor producer;
  int producerPass = 0, producerPasses = 0;
  auto takeFresh = [&]() {
    for (;;) {
      const long long pair = takePair();
      if (pair >= pairs) {
        producer.pair = -1;
        return;
      }
      const int doc = quantDocumentOf(pair, mode, perQuery, docOffset);
      if (dValid[doc] != 0) {
        producer = QuantCursor{pair, doc, dRows.rowStart[doc], dRows.rowLength[doc], 0};
        producerPass = 0;
        producerPasses = max(1, (qRows.rowLength[(int)(pair / perQuery)] + 31) / 32);
        if (DYNAMIC) queue[queued++ % QUEUE] = pair;
        return;
      }
      if (lane == 0) scores[pair] = EMPTY_DOCUMENT_SCORE;
    }
  };
  auto takeNext = [&]() {
    if (++producerPass < producerPasses) {
      producer.tile = 0;  // the next 32 rows read the document again
    } else {
      takeFresh();
    }
  };
  takeFresh();
  int producerSlot = 0;
  auto produce = [&]() {
    if (producer.pair >= 0) {
#pragma unroll
      for (int n = 0; n < NT; n++) {
        const int token = producer.tile * 8 * NT + 8 * n + g;
        const bool inDocument = token < producer.dLength;
        const uint8_t* row = d + (size_t)(producer.dStart + (inDocument ? token : 0)) * tokenBytes;
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
          const int offset = (k * 4 + tig) * P::BYTES;
          const bool present = inDocument && offset < tokenBytes;
          copyPiece<P::BYTES>(pieceSlot(producerSlot, n, k), present ? row + offset : d, present);
        }
        // the scales of the two tokens this thread's C fragment holds, into its own slot: no barrier (copied
        // once by 8 lanes instead, with two warp barriers per step, it measured slower)
        const int t0 = producer.tile * 8 * NT + 8 * n + 2 * tig;
#pragma unroll
        for (int j = 0; j < 2; j++) {
          const bool present = t0 + j < producer.dLength;
          copyAsyncSmall<4>(scaleSlot(producerSlot, n) + 4 * j, present ? dScale + producer.dStart + t0 + j : dScale,
                            present);
        }
      }
      producerSlot = producerSlot + 1 == STAGES ? 0 : producerSlot + 1;
      if (++producer.tile * 8 * NT >= producer.dLength) takeNext();
    }
    commitGroup();
  };
#pragma unroll 1
  for (int s = 0; s < STAGES - 1; s++) produce();

  uint32_t frag[2][CHUNKS][STEPS][4];
  float rowScale[2][2];
  int fragQuery = -1, fragPass = -1;
  int consumerSlot = 0;
  long long walked = split.begin;
  auto consumeNext = [&]() -> long long {
    if constexpr (DYNAMIC) {
      return consumed < queued ? queue[consumed++ % QUEUE] : -1;
    } else {
      for (; walked < split.end; walked++)
        if (dValid[quantDocumentOf(walked, mode, perQuery, docOffset)] != 0) return walked++;
      return -1;
    }
  };
  for (long long pair = consumeNext(); pair >= 0; pair = consumeNext()) {
    const int query = (int)(pair / perQuery);
    const int doc = quantDocumentOf(pair, mode, perQuery, docOffset);
    const int qStart = qRows.rowStart[query], qLength = qRows.rowLength[query];
    const int dStart = dRows.rowStart[doc], dLength = dRows.rowLength[doc];
    const int passes = max(1, (qLength + 31) / 32);
    float sum = 0.f;
    for (int pass = 0; pass < passes; pass++) {
      const int r0 = 32 * pass;
      if (query != fragQuery || pass != fragPass) {
#pragma unroll
        for (int m = 0; m < 2; m++) {
#pragma unroll
          for (int k = 0; k < CHUNKS; k++) {
#pragma unroll
            for (int j = 0; j < STEPS; j++) {
              const int p = k * CHUNK_DIMS + tig * P::DIMS;
              const int e0 = p + pieceDim<TD>(j, 0), e1 = p + pieceDim<TD>(j, 1);
              const int e2 = p + pieceDim<TD>(j, 2), e3 = p + pieceDim<TD>(j, 3);
              const int ra = r0 + m * 16 + g, rb = ra + 8;
              frag[m][k][j][0] = queryPair<TQ, O>(q, qStart, qLength, ra, e0, e1, dim);
              frag[m][k][j][1] = queryPair<TQ, O>(q, qStart, qLength, rb, e0, e1, dim);
              frag[m][k][j][2] = queryPair<TQ, O>(q, qStart, qLength, ra, e2, e3, dim);
              frag[m][k][j][3] = queryPair<TQ, O>(q, qStart, qLength, rb, e2, e3, dim);
            }
          }
#pragma unroll
          for (int h = 0; h < 2; h++) {
            const int r = r0 + m * 16 + g + 8 * h;
            rowScale[m][h] = Q_SCALED && r < qLength ? scaleOf(qScale, qStart + r) : 1.f;
          }
        }
        fragQuery = query;
        fragPass = pass;
      }
      const bool secondTile = qLength - r0 > 16;

      float best[2][2];
#pragma unroll
      for (int m = 0; m < 2; m++) best[m][0] = best[m][1] = -INFINITY;
      for (int t0 = 0; t0 < dLength; t0 += 8 * NT) {
        produce();
        waitGroups<STAGES - 1>();
        L b[NT][CHUNKS];
        float2 ds[NT];
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
          for (int k = 0; k < CHUNKS; k++) {
            if constexpr (P::BYTES == 16) {
              const uint32_t a = pieceSlot(consumerSlot, n, k);
              asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                           : "=r"(b[n][k].x), "=r"(b[n][k].y), "=r"(b[n][k].z), "=r"(b[n][k].w)
                           : "r"(a));
            } else {
              asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(b[n][k]) : "r"(pieceSlot(consumerSlot, n, k)));
            }
          }
          asm volatile("ld.shared.v2.f32 {%0,%1}, [%2];\n" : "=f"(ds[n].x), "=f"(ds[n].y)
                       : "r"(scaleSlot(consumerSlot, n)));
        }
        consumerSlot = consumerSlot + 1 == STAGES ? 0 : consumerSlot + 1;
        float acc[2][NT][4];
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
          for (int n = 0; n < NT; n++)
#pragma unroll
            for (int i = 0; i < 4; i++) acc[m][n][i] = 0.f;
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
          for (int k = 0; k < CHUNKS; k++) {
#pragma unroll
            for (int j = 0; j < STEPS; j++) {
              uint32_t b0, b1;
              if constexpr (std::is_same<TD, B1>::value) {
                expandBits<O>(b[n][k], j, b0, b1);
              } else {
                const uint32_t word = j == 0 ? b[n][k].x : j == 1 ? b[n][k].y : j == 2 ? b[n][k].z : b[n][k].w;
                expand<O>(TD{}, word, b0, b1);
              }
              MmaOp<O>::run(acc[0][n], frag[0][k][j], b0, b1);
              if (secondTile) MmaOp<O>::run(acc[1][n], frag[1][k][j], b0, b1);
            }
          }
        }
        // scale each dot product, then the running max over valid tokens (max.NaN: NaN propagates); a tile
        // wholly inside an unmasked document needs no validity test
        const bool whole = dRows.mask == nullptr && t0 + 8 * NT <= dLength;
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
          for (int j = 0; j < 2; j++) {
            const int t = t0 + 8 * n + 2 * tig + j;
            const bool valid = whole || (t < dLength && isValid(dRows, dStart + t));
            const float s = j == 0 ? ds[n].x : ds[n].y;
#pragma unroll
            for (int m = 0; m < 2; m++) {
              float v0 = acc[m][n][j];
              float v1 = acc[m][n][2 + j];
              if constexpr (Q_SCALED) {
                v0 = scaledDot(v0, rowScale[m][0] * s);
                v1 = scaledDot(v1, rowScale[m][1] * s);
              } else {
                v0 *= s;
                v1 *= s;
              }
              best[m][0] = maxKeepNaN(best[m][0], valid ? v0 : -INFINITY);
              best[m][1] = maxKeepNaN(best[m][1], valid ? v1 : -INFINITY);
            }
          }
        }
      }
      // rows across the quad, then lane L takes row L of the pass (rows m * 16 + g + 8h sit in lanes 4g..4g+3)
      float rowMax[2][2];
#pragma unroll
      for (int m = 0; m < 2; m++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
          float v = best[m][h];
          for (int offset = 1; offset < 4; offset *= 2) v = maxKeepNaN(v, __shfl_xor_sync(0xffffffffu, v, offset));
          rowMax[m][h] = __shfl_sync(0xffffffffu, v, 4 * (lane % 8));
        }
      }
      const int m = lane / 16, h = (lane % 16) / 8;
      const float v = m == 0 ? (h == 0 ? rowMax[0][0] : rowMax[0][1]) : (h == 0 ? rowMax[1][0] : rowMax[1][1]);
      float rowSum = 0.f;
      if (r0 + lane < qLength && isValid(qRows, qStart + r0 + lane)) rowSum = v;
      for (int offset = 16; offset > 0; offset /= 2) rowSum += __shfl_xor_sync(0xffffffffu, rowSum, offset);
      sum += rowSum;
    }
    if (lane == 0) scores[pair] = sum;
  }
  waitGroups<0>();
  split.finish(lane, warps);
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Same tensors as maxsim_forward_scaled_*, documents as raw bytes; pairs split among the grid's warps, or
// (the _dyn entries, one query or one pair per query) partly taken at run time through `work` (two zeroed
// 64-bit counters; the pair queues are then dynamic shared memory, QUANT_QUEUE_ENTRIES x 8 bytes per warp).
// Entry names: maxsim_forward_quant_c{CHUNKS}[_dyn]_{query type}_{document type}; a chunk is 64 dims of
// 8-bit documents or 128 of 1-bit ones (d a multiple of 16, or of 32 for 1-bit).
#define MAXSIM_QUANT_ENTRY(TQ, TD, CHUNKS, NT, DYNAMIC, NAME)                                        \
  extern "C" __global__ void __launch_bounds__(QUANT_THREADS, 4) NAME(                                       \
      const TQ::Storage* q, const int* qStart, const int* qLength, const uint8_t* qMask, const float* qScale,  \
      const uint8_t* d, const int* dStart, const int* dLength, const uint8_t* dMask, const float* dScale,      \
      const int* dValid, int dim, int mode, int perQuery, int docOffset, long long pairs, float* scores,       \
      unsigned long long* work) {                                                                             \
    forwardQuant<TQ, TD, CHUNKS, NT, DYNAMIC>(q, Rows{qStart, qLength, qMask}, qScale, d,                     \
                                              Rows{dStart, dLength, dMask}, dScale, dValid, dim, mode,        \
                                              perQuery, docOffset, pairs, scores, work);                      \
  }
#define MAXSIM_QUANT_PAIR(TQ, QN, TD, DN, CHUNKS, NT)                                                   \
  MAXSIM_QUANT_ENTRY(TQ, TD, CHUNKS, NT, false, maxsim_forward_quant_c##CHUNKS##_##QN##_##DN)        \
  MAXSIM_QUANT_ENTRY(TQ, TD, CHUNKS, NT, true, maxsim_forward_quant_c##CHUNKS##_dyn_##QN##_##DN)
#define MAXSIM_QUANT_QUERY(TQ, QN)                 \
  MAXSIM_QUANT_PAIR(TQ, QN, S8, s8, 1, 2)          \
  MAXSIM_QUANT_PAIR(TQ, QN, S8, s8, 2, 2)          \
  MAXSIM_QUANT_PAIR(TQ, QN, E4M3, e4m3, 1, 2)      \
  MAXSIM_QUANT_PAIR(TQ, QN, E4M3, e4m3, 2, 2)      \
  MAXSIM_QUANT_PAIR(TQ, QN, B1, b1, 1, 2)

MAXSIM_QUANT_QUERY(BF16, bf16)
MAXSIM_QUANT_QUERY(F16, f16)
MAXSIM_QUANT_QUERY(S8, s8)
MAXSIM_QUANT_QUERY(E4M3, e4m3)
MAXSIM_QUANT_QUERY(B1, b1)
#endif
