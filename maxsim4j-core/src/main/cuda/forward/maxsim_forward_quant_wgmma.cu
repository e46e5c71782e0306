// Fused MaxSim forward for compressed documents (int8, fp8 e4m3, 1-bit) on Hopper's warpgroup tensor cores
// (wgmma, sm_90a only). It takes what the mma.sync kernel (maxsim_forward_quant.cu) does badly or not at all:
// several short queries against each document (query groups), queries of more than 32 tokens, long documents,
// and d above 128 (docs/design/kernel-selection.md, rule 18).
//
// Roles:       the document is wgmma's A operand, 64 tokens x 16 k per instruction, taken from registers, so
//              its bytes go from shared memory to registers once and are expanded there (exact: every int8,
//              e4m3 and +-1 value is exact in bf16 and fp16), never written back as bf16. The query rows are
//              the B operand: N = 32 or 128 rows in shared memory, 128-byte swizzled and K-major, loaded when
//              the item's queries change (once per block when Nq = 1).
// Work:        persistent blocks of one warpgroup, each a contiguous run of items: pairs (the query's rows
//              in passes of N, each pass one scan of the document) or, with query groups (GROUPED), one
//              document against N / 32 queries of at most 32 tokens, query s in rows 32s .. 32s + 31.
// Pipeline:    a stage is 64 or 128 document tokens (one m-tile, or two for N = 32: two independent wgmma
//              chains) x 64 or 128 dims. Each thread cp.async's exactly the bytes it later multiplies (its
//              rows' pieces, and at a token stage's first dims the rows' scales) into its own slots of a
//              ring, so no barrier guards the ring: cp.async.wait_group alone orders it. The producer runs
//              the ring's length ahead, across passes and items; the next item's document is fetched while
//              this one is scored.
// k order:     a thread's piece of a row is consecutive dims (16 bytes of 8-bit values, 4 bytes of bits); step
//              j multiplies 4 of them in the order its expansion leaves (pieceDim, maxsim_quant_expand.cuh),
//              and the query rows are written to shared memory in the same order.
// Online max:  each dot product times its pair's scale product, then per query row (accumulator column) a
//              running max over this thread's document rows of every stage (max.NaN).
// Epilogue:    per document, the max across the 8 rows of a warp (shuffles) and the 4 warps (shared memory,
//              one barrier), then warp s sums the valid rows of query slot s.
#include "common/maxsim_async.cuh"
#include "forward/maxsim_quant_expand.cuh"
#include "common/maxsim_wgmma.cuh"

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace maxsim4j {

constexpr int QW_THREADS = 128;              // one warpgroup
constexpr int QW_TOKENS = 64;                // document tokens per m-tile: wgmma's M
constexpr int QW_RING_BYTES = 54 * 1024;     // per block; FamilyPlans.quantWgmmaLaunch sizes shared memory alike
constexpr int QW_MAX_STAGES = 8;
constexpr int QW_SLOT_ROWS = 32;             // query rows per slot (a warp's epilogue sums one slot)

// M-tiles per stage: two for 32 query rows (two independent wgmma chains, and half the per-stage work per
// byte), one for 128 (its accumulators fill the registers).
template <int N> struct QwTiles {
  static constexpr int M = N == 32 ? 2 : 1;
};

// A stage: for each of this thread's rows (2 per m-tile) CHUNKS pieces, then the rows' scales.
template <typename TD, int CHUNKS, int N>
struct QwStage {
  static constexpr int ROWS = 2 * QwTiles<N>::M;
  static constexpr int DATA = ROWS * CHUNKS * QW_THREADS * Piece<TD>::BYTES;
  static constexpr int BYTES = DATA + ROWS * QW_THREADS * 4;
  static constexpr int COUNT = QW_RING_BYTES / BYTES < QW_MAX_STAGES ? QW_RING_BYTES / BYTES : QW_MAX_STAGES;
};

// Items in order without divisions: item i is (query, j), j < perQuery; with query groups `query` is the
// group's first query and items step through one group's documents before the next group's.
struct QwCursor {
  long long item;
  int query, j;

  __device__ __forceinline__ void start(long long i, int perQuery, int slots) {
    item = i;
    query = (int)(i / perQuery) * slots;
    j = (int)(i % perQuery);
  }
  __device__ __forceinline__ void next(int perQuery, int slots) {
    item++;
    if (++j == perQuery) {
      j = 0;
      query += slots;
    }
  }
  __device__ __forceinline__ int doc(int mode, int docOffset) const {
    return mode == ALL_PAIRS ? docOffset + j : (int)item;
  }
};

// N: query rows per pass (32 or 128); GROUPED: N / 32 all-pairs queries of at most 32 tokens per item;
// CHUNKS: chunks per stage (8-bit: 1 for d <= 64, else 2; bits: 1), so a stage covers 64 or 128 dims.
template <typename TQ, typename TD, int CHUNKS, int N, bool GROUPED>
__device__ void forwardQuantWgmma(const typename TQ::Storage* __restrict__ q, Rows qRows,
                                  const float* __restrict__ qScale, const uint8_t* __restrict__ d, Rows dRows,
                                  const float* __restrict__ dScale, const int* __restrict__ dValid, int dim,
                                  int mode, int perQuery, int docOffset, long long pairs, float* scores) {
  using O = typename Operand<TQ>::Type;
  using P = Piece<TD>;
  using L = typename Loaded<P::BYTES>::Type;
  using Stage = QwStage<TD, CHUNKS, N>;
  constexpr int MT = QwTiles<N>::M;
  constexpr int ROWS = Stage::ROWS;
  constexpr int STEPS = P::DIMS / 4;                // k16 steps per piece
  constexpr int CHUNK_DIMS = 4 * P::DIMS;           // 64 (8-bit) or 128 (bits)
  constexpr int STAGE_DIMS = CHUNKS * CHUNK_DIMS;
  constexpr int STAGE_STEPS = CHUNKS * STEPS;       // wgmma k-steps per stage
  constexpr int STAGE_TOKENS = MT * QW_TOKENS;
  constexpr int SLOTS = N / QW_SLOT_ROWS;
  constexpr int COLUMNS = N / 4;                    // accumulator columns (query rows) of one thread
  constexpr bool Q_SCALED = Compressed<TQ>::value;
  static_assert(!GROUPED || N > QW_SLOT_ROWS, "query groups hold several queries");

  extern __shared__ __align__(1024) uint8_t shared[];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32, g = lane / 4, t = lane % 4;
  const int tokenBytes = std::is_same<TD, B1>::value ? (dim + 7) / 8 : dim;
  const int stagesPerTile = (dim + STAGE_DIMS - 1) / STAGE_DIMS;
  const int bRowChunks = stagesPerTile * STAGE_DIMS / SWIZZLE_ROW_HALVES;  // 128-byte B rows per query row
  const int bBytes = bRowChunks * N * SWIZZLE_ROW_BYTES;
  const uint32_t bBase = (uint32_t)__cvta_generic_to_shared(shared);
  const uint32_t ringBase = bBase + bBytes;
  float* red = reinterpret_cast<float*>(shared + bBytes + Stage::COUNT * Stage::BYTES);  // [2][4][N]
  float* columnScale = red + 2 * 4 * N;                                                  // [N]
  float* columnValid = columnScale + N;                                                  // [N]: 1 or 0
  float* pairPartial = columnValid + N;                                                  // [4]
  if (tid == 0 && dynamicSharedBytes() < (uint32_t)(bBytes + Stage::COUNT * Stage::BYTES + (10 * N + 4) * 4)) {
    __trap();  // the host sized the dynamic shared memory for another shape
  }

  const int queries = (int)(pairs / perQuery);
  const int slots = GROUPED ? SLOTS : 1;
  const long long items = GROUPED ? (long long)((queries + SLOTS - 1) / SLOTS) * perQuery : pairs;
  const long long begin = items * blockIdx.x / gridDim.x, end = items * (blockIdx.x + 1) / gridDim.x;
  auto passesOf = [&](int query) { return GROUPED ? 1 : max(1, (qRows.rowLength[query] + N - 1) / N); };
  // this thread's offset into a stage's tokens of row r (m-tile r / 2, half r % 2)
  auto rowToken = [&](int r) { return (r / 2) * QW_TOKENS + 16 * warp + g + 8 * (r % 2); };

  // Producer: (item, pass, stage of tokens, stage of dims) in the consumer's order; items whose document is
  // empty have none. Its document's bytes and scales are held as pointers, advanced per stage of tokens.
  QwCursor p;
  p.start(begin, perQuery, slots);
  int pPass = 0, pPasses = 0, pTokens = 0, pStage = 0, pLength = 0, pSlot = 0;
  const uint8_t* pBytes = d;
  const float* pScales = dScale;
  auto seek = [&]() {
    for (; p.item < end; p.next(perQuery, slots)) {
      const int doc = p.doc(mode, docOffset);
      if (dValid[doc] != 0) {
        const int start = dRows.rowStart[doc];
        pLength = dRows.rowLength[doc];
        pBytes = d + (size_t)start * tokenBytes;
        pScales = dScale + start;
        pPasses = passesOf(p.query);
        pPass = pTokens = pStage = 0;
        return;
      }
    }
  };
  seek();
  auto produce = [&]() {
    if (p.item < end) {
      const uint32_t slot = ringBase + pSlot * Stage::BYTES;
#pragma unroll
      for (int r = 0; r < ROWS; r++) {
        const int token = pTokens + rowToken(r);
        const bool inDocument = token < pLength;
        const uint8_t* row = pBytes + (inDocument ? token * tokenBytes : 0);
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
          const int offset = ((pStage * CHUNKS + k) * 4 + t) * P::BYTES;
          const bool present = inDocument && offset < tokenBytes;
          copyPiece<P::BYTES>(slot + ((r * CHUNKS + k) * QW_THREADS + tid) * P::BYTES, present ? row + offset : d,
                              present);
        }
        if (pStage == 0) {
          copyAsyncSmall<4>(slot + Stage::DATA + (r * QW_THREADS + tid) * 4, inDocument ? pScales + token : dScale,
                            inDocument);
        }
      }
      pSlot = pSlot + 1 == Stage::COUNT ? 0 : pSlot + 1;
      if (++pStage == stagesPerTile) {
        pStage = 0;
        pTokens += STAGE_TOKENS;
        if (pTokens >= pLength) {
          pTokens = 0;
          if (++pPass == pPasses) {
            p.next(perQuery, slots);
            seek();
          }
        }
      }
    }
    commitGroup();
  };
#pragma unroll 1
  for (int s = 0; s < Stage::COUNT - 1; s++) produce();

  // The query rows of (first query, pass) as B, in the k order of the document pieces; masked rows, rows past
  // a query and dims past d are zero, and their columns are left out of the sums (columnValid).
  auto rowOf = [&](int first, int pass, int n, int& query, int& row) {
    query = GROUPED ? first + n / QW_SLOT_ROWS : first;
    row = GROUPED ? n % QW_SLOT_ROWS : pass * N + n;
  };
  auto rowValid = [&](int query, int row) {
    return query < queries && row < qRows.rowLength[query] && isValid(qRows, qRows.rowStart[query] + row);
  };
  auto loadQuery = [&](int first, int pass) {
    __syncthreads();  // every warp's wgmma reading the previous rows has completed
    O* b = reinterpret_cast<O*>(shared);
    const int rowHalves = bRowChunks * SWIZZLE_ROW_HALVES;
    for (int idx = tid; idx < N * rowHalves; idx += QW_THREADS) {
      const int n = idx / rowHalves, kk = idx % rowHalves;
      const int step = kk / 16, pos = kk % 16;
      const int owner = (pos % 8) / 2, e = pos % 2 + 2 * (pos / 8);  // the thread t and element of position pos
      const int stage = step / STAGE_STEPS, chunk = stage * CHUNKS + (step % STAGE_STEPS) / STEPS;
      const int physical = chunk * CHUNK_DIMS + owner * P::DIMS + pieceDim<TD>(step % STEPS, e);
      int query, row;
      rowOf(first, pass, n, query, row);
      float v = 0.f;
      if (physical < dim && rowValid(query, row)) {
        v = Element<TQ>::at(q, (size_t)(qRows.rowStart[query] + row), physical, dim);
      }
      const uint32_t at = (kk / SWIZZLE_ROW_HALVES) * N * SWIZZLE_ROW_BYTES + swizzled(n, (kk % SWIZZLE_ROW_HALVES) / 8)
                          + (kk % 8) * 2;
      b[at / 2] = operandOf<O>(v);
    }
    for (int n = tid; n < N; n += QW_THREADS) {
      int query, row;
      rowOf(first, pass, n, query, row);
      const bool valid = rowValid(query, row);
      columnScale[n] = Q_SCALED && valid ? scaleOf(qScale, qRows.rowStart[query] + row) : 1.f;
      columnValid[n] = valid ? 1.f : 0.f;
    }
    fenceProxyAsync();
    __syncthreads();
  };

  // B descriptors of this pass's 32-byte k-steps: chunk step / 4 of the rows, 32 bytes per step inside it
  const uint64_t bDescriptor = tileDescriptor(bBase);
  int loadedQuery = -1, loadedPass = -1, cSlot = 0, parity = 0;
  float acc[MT][N / 2];
  QwCursor c;
  c.start(begin, perQuery, slots);
  // the next item's document, fetched while this one is scored
  int nextDoc = begin < end ? c.doc(mode, docOffset) : 0;
  int nextValid = begin < end ? dValid[nextDoc] : 0;
  int nextStart = begin < end ? dRows.rowStart[nextDoc] : 0, nextLength = begin < end ? dRows.rowLength[nextDoc] : 0;
  int nextPasses = begin < end ? passesOf(c.query) : 0;
  for (; c.item < end; c.next(perQuery, slots)) {
    const int dLength = nextLength, dStart = nextStart, passes = nextPasses;
    const bool empty = nextValid == 0;
    if (c.item + 1 < end) {
      QwCursor n = c;
      n.next(perQuery, slots);
      nextDoc = n.doc(mode, docOffset);
      nextValid = dValid[nextDoc];
      nextStart = dRows.rowStart[nextDoc];
      nextLength = dRows.rowLength[nextDoc];
      nextPasses = passesOf(n.query);
    }
    if (empty) {
      if constexpr (GROUPED) {
        if (tid < SLOTS && c.query + tid < queries) {
          scores[(long long)(c.query + tid) * perQuery + c.j] = EMPTY_DOCUMENT_SCORE;
        }
      } else if (tid == 0) {
        scores[c.item] = EMPTY_DOCUMENT_SCORE;
      }
      continue;
    }
    float pairSum = 0.f;
    for (int pass = 0; pass < passes; pass++) {
      if (c.query != loadedQuery || pass != loadedPass) {
        loadQuery(c.query, pass);
        loadedQuery = c.query;
        loadedPass = pass;
      }
      float best[COLUMNS];
#pragma unroll
      for (int x = 0; x < COLUMNS; x++) best[x] = -INFINITY;
      for (int tokens = 0; tokens < dLength; tokens += STAGE_TOKENS) {
        float ds[ROWS];
        for (int stage = 0; stage < stagesPerTile; stage++) {
          produce();
          waitGroups<Stage::COUNT - 1>();
          const uint32_t slot = ringBase + cSlot * Stage::BYTES;
          cSlot = cSlot + 1 == Stage::COUNT ? 0 : cSlot + 1;
          if (stage == 0) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
              asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(ds[r]) : "r"(slot + Stage::DATA + (r * QW_THREADS + tid) * 4));
            }
          }
          // A fragments of m-tile m: a[0] row g and a[1] row g + 8 at k = 2t, 2t + 1; a[2], a[3] at 2t + 8, 2t + 9
          uint32_t a[MT][STAGE_STEPS][4];
#pragma unroll
          for (int m = 0; m < MT; m++) {
#pragma unroll
            for (int k = 0; k < CHUNKS; k++) {
              L raw[2];
#pragma unroll
              for (int h = 0; h < 2; h++) {
                const uint32_t at = slot + (((2 * m + h) * CHUNKS + k) * QW_THREADS + tid) * P::BYTES;
                if constexpr (P::BYTES == 16) {
                  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                               : "=r"(raw[h].x), "=r"(raw[h].y), "=r"(raw[h].z), "=r"(raw[h].w)
                               : "r"(at));
                } else {
                  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(raw[h]) : "r"(at));
                }
              }
#pragma unroll
              for (int j = 0; j < STEPS; j++) {
                uint32_t(&f)[4] = a[m][k * STEPS + j];
                if constexpr (std::is_same<TD, B1>::value) {
                  expandBits<O>(raw[0], j, f[0], f[2]);
                  expandBits<O>(raw[1], j, f[1], f[3]);
                } else {
                  expand<O>(TD{}, j == 0 ? raw[0].x : j == 1 ? raw[0].y : j == 2 ? raw[0].z : raw[0].w, f[0], f[2]);
                  expand<O>(TD{}, j == 0 ? raw[1].x : j == 1 ? raw[1].y : j == 2 ? raw[1].z : raw[1].w, f[1], f[3]);
                }
              }
            }
          }
          wgmmaFence();
#pragma unroll
          for (int s = 0; s < STAGE_STEPS; s++) {
            const int step = stage * STAGE_STEPS + s;  // 16 halves of B: 32 bytes into its 128-byte row
            const uint64_t desc = bDescriptor + (uint64_t)((step / 4) * (N * SWIZZLE_ROW_BYTES >> 4) + 2 * (step % 4));
#pragma unroll
            for (int m = 0; m < MT; m++) {
              Wgmma<O>::template run<N>(acc[m], a[m][s], desc, stage > 0 || s > 0);
            }
          }
          wgmmaCommit();
          wgmmaWait<0>();
#pragma unroll
          for (int m = 0; m < MT; m++) pinAccumulators(acc[m]);
        }
        // scale each dot product, then the running max over valid tokens; a stage wholly inside an unmasked
        // document needs no validity test
        const bool whole = dRows.mask == nullptr && tokens + STAGE_TOKENS <= dLength;
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
          const int token = tokens + rowToken(r);
          const bool valid = whole || (token < dLength && isValid(dRows, dStart + token));
#pragma unroll
          for (int jj = 0; jj < N / 8; jj++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
              float v = acc[r / 2][4 * jj + 2 * (r % 2) + e];
              if constexpr (Q_SCALED) {
                v = scaledDot(v, columnScale[8 * jj + 2 * t + e] * ds[r]);
              } else {
                v *= ds[r];
              }
              best[2 * jj + e] = maxKeepNaN(best[2 * jj + e], valid ? v : -INFINITY);
            }
          }
        }
      }
      // the max over the warp's rows (lanes of one t share columns), then over the warps
#pragma unroll
      for (int x = 0; x < COLUMNS; x++) {
        float v = best[x];
        for (int offset = 4; offset < 32; offset *= 2) v = maxKeepNaN(v, __shfl_xor_sync(0xffffffffu, v, offset));
        best[x] = v;
      }
      float* r = red + parity * 4 * N;
      if (g == 0) {
#pragma unroll
        for (int jj = 0; jj < N / 8; jj++) {
          r[warp * N + 8 * jj + 2 * t] = best[2 * jj];
          r[warp * N + 8 * jj + 2 * t + 1] = best[2 * jj + 1];
        }
      }
      __syncthreads();
      parity ^= 1;
      float rowSum = 0.f;
      if (tid < N && columnValid[tid] != 0.f) {
        rowSum = maxKeepNaN(maxKeepNaN(r[tid], r[N + tid]), maxKeepNaN(r[2 * N + tid], r[3 * N + tid]));
      }
      for (int offset = 16; offset > 0; offset /= 2) rowSum += __shfl_xor_sync(0xffffffffu, rowSum, offset);
      if constexpr (GROUPED) {
        if (lane == 0 && warp < SLOTS && c.query + warp < queries) {
          scores[(long long)(c.query + warp) * perQuery + c.j] = rowSum;
        }
      } else {
        pairSum += rowSum;
      }
    }
    if constexpr (!GROUPED) {
      if constexpr (SLOTS == 1) {
        if (tid == 0) scores[c.item] = pairSum;
      } else {
        // the slots' sums in order, as one thread adds them
        if (lane == 0) pairPartial[warp] = pairSum;
        __syncthreads();
        if (tid == 0) {
          float sum = 0.f;
          for (int w = 0; w < SLOTS; w++) sum += pairPartial[w];
          scores[c.item] = sum;
        }
      }
    }
  }
  waitGroups<0>();
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Same tensors as maxsim_forward_quant_*; `work` is unused (the split is static). Entry names:
// maxsim_forward_quant_wgmma_{p32|p128|g128}_c{CHUNKS}_{query type}_{document type}: pairs with 32 or 128
// query rows per pass, or groups of 4 queries; CHUNKS chunks (64 dims of 8-bit documents, 128 of 1-bit ones)
// per stage. d a multiple of 16 (8-bit) or 32 (1-bit).
#define MAXSIM_QW_ENTRY(TQ, TD, CHUNKS, N, GROUPED, NAME)                                                    \
  extern "C" __global__ void __launch_bounds__(QW_THREADS, N == 128 ? 2 : 3) NAME(                           \
      const TQ::Storage* q, const int* qStart, const int* qLength, const uint8_t* qMask, const float* qScale,  \
      const uint8_t* d, const int* dStart, const int* dLength, const uint8_t* dMask, const float* dScale,      \
      const int* dValid, int dim, int mode, int perQuery, int docOffset, long long pairs, float* scores,       \
      unsigned long long* work) {                                                                             \
    forwardQuantWgmma<TQ, TD, CHUNKS, N, GROUPED>(q, Rows{qStart, qLength, qMask}, qScale, d,                  \
                                                  Rows{dStart, dLength, dMask}, dScale, dValid, dim, mode,    \
                                                  perQuery, docOffset, pairs, scores);                        \
  }
#define MAXSIM_QW_SHAPES(TQ, QN, TD, DN, CHUNKS)                                                          \
  MAXSIM_QW_ENTRY(TQ, TD, CHUNKS, 32, false, maxsim_forward_quant_wgmma_p32_c##CHUNKS##_##QN##_##DN)    \
  MAXSIM_QW_ENTRY(TQ, TD, CHUNKS, 128, false, maxsim_forward_quant_wgmma_p128_c##CHUNKS##_##QN##_##DN)  \
  MAXSIM_QW_ENTRY(TQ, TD, CHUNKS, 128, true, maxsim_forward_quant_wgmma_g128_c##CHUNKS##_##QN##_##DN)
#define MAXSIM_QW_QUERY(TQ, QN)                 \
  MAXSIM_QW_SHAPES(TQ, QN, S8, s8, 1)          \
  MAXSIM_QW_SHAPES(TQ, QN, S8, s8, 2)          \
  MAXSIM_QW_SHAPES(TQ, QN, E4M3, e4m3, 1)      \
  MAXSIM_QW_SHAPES(TQ, QN, E4M3, e4m3, 2)      \
  MAXSIM_QW_SHAPES(TQ, QN, B1, b1, 1)

MAXSIM_QW_QUERY(BF16, bf16)
MAXSIM_QW_QUERY(F16, f16)
MAXSIM_QW_QUERY(S8, s8)
MAXSIM_QW_QUERY(E4M3, e4m3)
MAXSIM_QW_QUERY(B1, b1)
#endif
