// Fused MaxSim forward on Hopper, warp-specialized (sm_90a only): queries of more than 64 tokens with
// d <= 128, bf16 or fp16, fp32 accumulation: the launches where the tensor cores bound the time (Lq = 1024)
// or a deep copy ring must keep DRAM busy while they work (Lq = 128).
//
// Why a fourth forward. In the wgmma kernel (maxsim_forward_wgmma.cu) every thread both copies and
// multiplies: one block barrier per stage, and a warpgroup folds a tile only after waiting for all of its
// wgmmas, so the tensor pipe idles through every fold (Nsight: barrier and wait stalls). Here the roles are split, as FlashAttention-3 splits them.
//
// Roles:       warpgroup 2, the producer: its first warp reads the items' rows and lengths 32 at a time,
//              and one lane loads document tiles with TMA (its second warp sums the scores, below);
//              warpgroups 0 and 1, the consumers, multiply and fold, warpgroup w owning GROUPS row groups
//              of 64 (rows 64 GROUPS w onwards) of the pass: a pass is 128 rows with GROUPS = 1 and 256
//              with GROUPS = 2, which reads each document tile from L2 once per 256 query rows instead of
//              once per 128 (rule 6). They meet only at the ring's mbarriers: no block barrier after
//              set-up, and no consumer reads the work's metadata from global memory (each slot carries
//              its tile's TileInfo) but, with query groups, each query's row start and length, when its
//              rows are loaded and at an item's end.
// Work:        items (pass, pair, slice) in pass-major order, one contiguous run of equal length per block,
//              one block per SM. A slice is sliceTokens document tokens (a multiple of 128), for launches
//              whose items would not even out over the SMs. Training (argmax) and inference run the same
//              items in the same order and agree to the bit.
// Tiles:       A = the warpgroup's GROUPS x 64 query rows in registers, loaded from global memory when
//              (query, pass) changes: a few times per block. B = 128 document tokens x d per stage, 128-byte swizzled,
//              written by TMA in boxes of 64 halves (KC = 1 box for d <= 64, 2 for d <= 128); TMA writes
//              zeros past d and past the batch's last token; tokens past the slice are masked in the fold.
// Pipeline:    STAGES slots with a full and an empty barrier each. The producer waits for a slot's release,
//              writes its TileInfo, announces its bytes and issues its boxes; the consumers wait for the
//              slot to fill, and each consumer warp releases it once its wgmmas are done.
// Multiply:    per tile and row group KC x 4 wgmma m64n128k16 (A from registers, B by descriptor) as one
//              commit group, waited for before that row group's fold; the other warpgroup's wgmmas keep the
//              tensor cores busy meanwhile, and with two row groups so do this warpgroup's second ones.
//              (Measured and not kept, docs/design/kernel-selection.md section 17: turns between the warpgroups'
//              groups through named barriers, ping-pong as in FlashAttention-3, and two tiles per group.
//              The next tile's wgmmas running under this tile's fold made ptxas serialise every wgmma,
//              with one row group ("insufficient register resources") and with two (C7514).)
// Online max:  foldTile (maxsim_fold.cuh), after the warp has released the slot (the fold reads registers; the
//              scaled fold also reads the slot's scales, so there the slot is released after it);
//              with two row groups, group 0's before, under group 1's wgmmas (the scaled fold, which reads
//              shared memory, after them).
// Epilogue:    at an item's last tile each row's max across its quad. Without slices (the default) each
//              consumer warp sums its rows and hands the sum to the epilogue warp (the producer
//              warpgroup's second warp) through a small ring of slots; that warp adds an item's 8 sums
//              in a fixed order, and a query of several passes is summed by its last pass to arrive, in
//              pass order: no merge launch, the same bits whichever pass finished last, and the fence
//              and the atomic off the consumers' path. With slices, per-row partials (max and argmax,
//              or a stand-in index the merge's tie rule may read) for maxsim_merge_slices.
// Query groups: with GROUPED, a pass is not one query's rows but 32 rows of each of ROWS / 32 all-pairs
//              queries of at most 32 tokens (8 with two row groups), so each document tile read from memory
//              feeds 8 queries' wgmmas instead of 4 (maxsim_forward_wgmma.cu's groups), and the tensor cores,
//              not DRAM, bound many short queries against a corpus. An item is (group, document); a 16-row
//              warp slice lies within one query, so each warp hands over one sum per row group, and the
//              epilogue warp writes each query's score as the sum of its two slices. (A document's last
//              tile of at most 64 tokens multiplied 64 wide, as the wgmma kernel does, made ptxas serialise
//              the wgmmas: C7511, insufficient registers for the wgmma pipeline.)
// Scaled:      the "_scaled" entries read compressed documents expanded to bf16 or fp16 (maxsim_expand.cu, rule 21):
//              each slot also receives its tile's scales (one bulk copy), the fold multiplies each product by its
//              token's scale before the max, and the slot is released after the fold, which reads them.
#include "common/maxsim_async.cuh"
#include "common/maxsim_common.cuh"
#include "forward/maxsim_fold.cuh"
#include "common/maxsim_mma.cuh"
#include "common/maxsim_tma.cuh"
#include "common/maxsim_wgmma.cuh"

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
namespace maxsim4j {

constexpr int WS_TOKENS = 128;                               // document tokens per tile: N of one wgmma
constexpr int WS_GROUP_ROWS = 64;                            // query rows of one wgmma: M
// Query rows per pass: two consumer warpgroups of GROUPS x 64 rows each (GROUPS wgmmas on each B slice).
template <int GROUPS>
constexpr int WS_ROWS = 2 * GROUPS * WS_GROUP_ROWS;
constexpr int WS_BOX_BYTES = WS_TOKENS * SWIZZLE_ROW_BYTES;  // a TMA box: 128 tokens x 64 halves, 16 KB
constexpr int WS_CONSUMER_WARPS = 8;
constexpr int WS_THREADS = WS_CONSUMER_WARPS * 32 + 128;     // and the producer warpgroup (one lane works)
// Registers per thread after the roles split (setmaxnreg): the producer gives back what the consumers
// take. The pool is the CTA's launch allocation, 168 a thread (the most 384 threads get), and
// setmaxnreg.inc waits until the pool can pay: asking for more than the producer released hangs the
// kernel, so the static_assert below keeps the three roles within the pool.
constexpr int WS_LAUNCH_REGISTERS = 168;
constexpr int WS_PRODUCER_REGISTERS = 56;
constexpr int WS_CONSUMER_REGISTERS = 224;
static_assert(WS_PRODUCER_REGISTERS + 2 * WS_CONSUMER_REGISTERS <= 3 * WS_LAUNCH_REGISTERS,
              "the consumers take no more registers than the producer gives back");
constexpr int WS_RING_BYTES = 192 * 1024;
constexpr int WS_EPILOGUE_WARP = WS_CONSUMER_WARPS + 1;  // in the producer warpgroup, beside the TMA warp
constexpr int WS_EPILOGUE_SLOTS = 4;
// SCALED: a tile's scales in its slot, copied from the 16-byte unit holding its first token's (up to 3 before it).
constexpr int WS_SCALE_SLOT = WS_TOKENS + 4;

// Index: the training argmax's type (int, or int16_t for documents of at most 32766 tokens).
template <typename T, typename Index>
struct WsOperands {
  const T* __restrict__ q;
  Rows qRows;
  Rows dRows;  // the documents' rows; their tokens come through the tensor map
  const int* __restrict__ dValid;
  const float* __restrict__ dScale;  // SCALED: each stored document token's scale (null: 1)
  int dim, mode, perQuery, docOffset;
  long long pairs;
  int passes, slices, sliceTokens;
  float* partialMax;  // scores == null (the default): per-row partials for maxsim_merge_slices
  int* partialArgmax;
  int partialStride;
  float* scores;      // else (slices == 1): scores and argmax written here, through passSums and arrivals
  Index* argmax;
  int argmaxStride;
  float* passSums;    // per (pair, pass): the sum of the pass's rows
  int* arrivals;      // per pair: passes summed; zero before a launch, left zero after it
};

// Item i: pass `pass` of query `query`'s rows against slice `slice` of document `doc`; with query groups,
// `queries` queries from `query` on (the group) against the whole document, `pair` the first query's.
struct WsItem {
  long long pair;
  int query, queries, pass, slice;
  int qStart, qLength;
  int dStart, tBegin, tEnd;
  int tiles;  // 0: nothing to scan (empty document, slice past its end, pass past the query)
  bool emptyDocument;
};

// Queries per pass with query groups: 32 rows each.
template <int GROUPS>
constexpr int WS_GROUP_QUERIES = WS_ROWS<GROUPS> / 32;

template <typename In, int GROUPS, bool GROUPED>
__device__ __forceinline__ WsItem wsItem(const In& in, long long item) {
  WsItem w;
  if constexpr (GROUPED) {  // items in group-major order, so a block's run keeps its group's rows
    const int docIndex = (int)(item % in.perQuery);
    const int doc = in.docOffset + docIndex;
    w.query = (int)(item / in.perQuery) * WS_GROUP_QUERIES<GROUPS>;
    w.queries = min(WS_GROUP_QUERIES<GROUPS>, (int)(in.pairs / in.perQuery) - w.query);
    w.pair = (long long)w.query * in.perQuery + docIndex;
    w.pass = 0;
    w.slice = 0;
    w.qStart = 0;
    w.qLength = 0;
    w.dStart = in.dRows.rowStart[doc];
    w.tBegin = 0;
    w.tEnd = in.dRows.rowLength[doc];
    w.emptyDocument = in.dValid[doc] == 0;
    w.tiles = w.emptyDocument ? 0 : (w.tEnd + WS_TOKENS - 1) / WS_TOKENS;
    return w;
  }
  w.queries = 1;
  w.slice = (int)(item % in.slices);
  const long long rest = item / in.slices;
  w.pair = rest % in.pairs;
  w.pass = (int)(rest / in.pairs);
  w.query = (int)(w.pair / in.perQuery);
  const int doc = in.mode == ALL_PAIRS ? in.docOffset + (int)(w.pair % in.perQuery) : (int)w.pair;
  w.qStart = in.qRows.rowStart[w.query];
  w.qLength = in.qRows.rowLength[w.query];
  w.dStart = in.dRows.rowStart[doc];
  w.tBegin = w.slice * in.sliceTokens;
  w.tEnd = min(in.dRows.rowLength[doc], w.tBegin + in.sliceTokens);
  w.emptyDocument = in.dValid[doc] == 0;
  const bool scan = !w.emptyDocument && w.tBegin < w.tEnd && w.pass * WS_ROWS<GROUPS> < w.qLength;
  w.tiles = scan ? (w.tEnd - w.tBegin + WS_TOKENS - 1) / WS_TOKENS : 0;
  return w;
}

// What the consumers need of the tile in a ring slot, written by the producer beside it and published by
// the slot's full barrier (its arrival releases, the consumers' wait acquires). query < 0: the run is over.
struct TileInfo {
  int query, queries, pass, qStart, qLength;
  int dStart, t0, tEnd, last;  // t0: the tile's first token in its document; last: the item's last tile
  long long pair;
  long long partialBase;       // the partial of query row s is at partialBase + s
};

// A ring position: slot and the parity of its current use.
struct RingPosition {
  int slot = 0;
  uint32_t phase = 0;
  template <int STAGES>
  __device__ __forceinline__ void next() {
    if (++slot == STAGES) {
      slot = 0;
      phase ^= 1;
    }
  }
};

// Without partials (scores given), what an item with no tile to scan leaves: an empty document scores -1e9
// (pass 0 writes it) and an empty query 0; the argmax of its pass's rows that no consumer writes (past
// the query, or all of an empty document's) is -1.
template <typename In, int GROUPS, bool GROUPED>
__device__ __forceinline__ void writeUnscanned(const In& in, const WsItem& w) {
  if constexpr (GROUPED) {  // only an empty document has no tile: -1e9 for each query, no argmax
    for (int j = 0; j < w.queries; j++) {
      const long long pair = w.pair + (long long)j * in.perQuery;
      in.scores[pair] = EMPTY_DOCUMENT_SCORE;
      if (in.argmax != nullptr)
        for (int s = 0; s < in.argmaxStride; s++) in.argmax[pair * in.argmaxStride + s] = -1;
    }
    return;
  }
  if (w.pass == 0 && (w.emptyDocument || w.qLength == 0))
    in.scores[w.pair] = w.emptyDocument ? EMPTY_DOCUMENT_SCORE : 0.f;
  if (in.argmax == nullptr) return;
  constexpr int ROWS = WS_ROWS<GROUPS>;
  const int first = w.emptyDocument ? w.pass * ROWS : max(w.pass * ROWS, w.qLength);
  for (int s = first; s < min((w.pass + 1) * ROWS, in.argmaxStride); s++)
    in.argmax[w.pair * in.argmaxStride + s] = -1;
}

// Producer warp: the run's items 32 at a time, lane i reading item base + i's rows and lengths (the next
// 32 items' loads in flight while this batch is issued), then lane 0 walking the batch's tiles: for each,
// it waits for the slot's release, writes the slot's TileInfo, announces the bytes and issues the KC boxes
// (k-chunk kc from column 64 kc). A last slot with query = -1, arrived on without bytes, ends the run.
// SCALED: each tile's scales ride with it, a bulk copy into the slot's scale slot.
template <typename In, int KC, int STAGES, int GROUPS, bool GROUPED, bool SCALED>
__device__ __forceinline__ void produceTiles(const In& in, const TensorMap* documents, long long begin,
                                             long long end, uint32_t ring, uint32_t fullBars, uint32_t emptyBars,
                                             TileInfo* infos, uint32_t scaleSlots) {
  const int lane = threadIdx.x % 32;
  RingPosition at;
  WsItem next;
  next.tiles = 0;
  if (begin + lane < end) next = wsItem<In, GROUPS, GROUPED>(in, begin + lane);
  for (long long base = begin; base < end; base += 32) {
    const WsItem mine = next;
    next.tiles = 0;
    if (base + 32 + lane < end) next = wsItem<In, GROUPS, GROUPED>(in, base + 32 + lane);
    if (in.scores != nullptr && base + lane < end && mine.tiles == 0) writeUnscanned<In, GROUPS, GROUPED>(in, mine);
    const int count = (int)min(32LL, end - base);
    for (int j = 0; j < count; j++) {
      const int tiles = __shfl_sync(0xffffffffu, mine.tiles, j);
      if (tiles == 0) continue;
      TileInfo info;
      info.query = __shfl_sync(0xffffffffu, mine.query, j);
      info.queries = __shfl_sync(0xffffffffu, mine.queries, j);
      info.pass = __shfl_sync(0xffffffffu, mine.pass, j);
      info.qStart = __shfl_sync(0xffffffffu, mine.qStart, j);
      info.qLength = __shfl_sync(0xffffffffu, mine.qLength, j);
      info.dStart = __shfl_sync(0xffffffffu, mine.dStart, j);
      info.tEnd = __shfl_sync(0xffffffffu, mine.tEnd, j);
      const int tBegin = __shfl_sync(0xffffffffu, mine.tBegin, j);
      const long long pair = __shfl_sync(0xffffffffu, mine.pair, j);
      const int slice = __shfl_sync(0xffffffffu, mine.slice, j);
      info.pair = pair;
      info.partialBase = (pair * in.slices + slice) * in.partialStride;
      if (lane == 0) {
        for (int tile = 0; tile < tiles; tile++) {
          mbarrierWait(emptyBars + 8 * at.slot, at.phase ^ 1);
          info.t0 = tBegin + tile * WS_TOKENS;
          info.last = tile == tiles - 1;
          infos[at.slot] = info;
          const uint32_t full = fullBars + 8 * at.slot;
          const int first = info.dStart + info.t0, lead = first & 3;
          const uint32_t scaleBytes =
              SCALED && in.dScale != nullptr ? (4 * (lead + min(WS_TOKENS, info.tEnd - info.t0)) + 15) & ~15 : 0;
          mbarrierExpectBytes(full, KC * WS_BOX_BYTES + scaleBytes);
          const uint32_t slot = ring + at.slot * KC * WS_BOX_BYTES;
#pragma unroll
          for (int kc = 0; kc < KC; kc++)
            tmaLoadBox(slot + kc * WS_BOX_BYTES, documents, kc * SWIZZLE_ROW_HALVES, first, full);
          if (scaleBytes > 0)
            bulkCopy(scaleSlots + 4 * WS_SCALE_SLOT * at.slot, in.dScale + first - lead, scaleBytes, full);
          at.next<STAGES>();
        }
      }
      __syncwarp();
    }
  }
  if (lane == 0) {
    mbarrierWait(emptyBars + 8 * at.slot, at.phase ^ 1);
    infos[at.slot].query = -1;
    mbarrierArrive(fullBars + 8 * at.slot);
  }
}

// This thread's A words for rows `row` and row + 8 of the query of qLength rows from qStart (zeros past the
// query and past d), laid out as mma.m16n8k16's A fragment per 16-half k-step: (row, k), (row + 8, k),
// (row, k + 8), (row + 8, k + 8) with k = 16 ks + 2 tig.
template <typename In, int KC>
__device__ __forceinline__ void loadQueryRows(uint32_t (&a)[KC * 4][4], const In& in, int qStart,
                                              int qLength, int row, int tig) {
#pragma unroll
  for (int ks = 0; ks < KC * 4; ks++) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int s = row + (i & 1) * 8, k = ks * 16 + (i >> 1) * 8 + 2 * tig;
      a[ks][i] = s < qLength && k < in.dim
                     ? *reinterpret_cast<const uint32_t*>(in.q + (size_t)(qStart + s) * in.dim + k)
                     : 0u;
    }
  }
}

// Without partials: what the consumer warps hand the epilogue warp at an item's last tile, each warp the
// sum of its 16 rows (with query groups, one per row group: warpSums[r]; else warpSums[0], its row groups
// added), warp 0 also the item, in a ring of WS_EPILOGUE_SLOTS. pair < 0: the run is over.
struct EpilogueSlot {
  float warpSums[2][WS_CONSUMER_WARPS];
  long long pair;
  int pass, qLength, queries;
};

// The epilogue warp (one lane): each item's 8 warp sums added in a fixed order into the pass's sum; a
// query of one pass has its score, else the pass's sum goes to passSums and the pair's last pass to
// arrive adds them up in pass order, so the score does not depend on which pass came last, and leaves
// the pair's arrival count zero for the next launch. The fence and the atomic wait here, off the
// consumers' path (each consumer warpgroup paying them measured slower than the merge launch).
template <typename In, int GROUPS, bool GROUPED>
__device__ __forceinline__ void sumPasses(const In& in, EpilogueSlot* slots, uint32_t fullBars,
                                          uint32_t emptyBars) {
  RingPosition at;
  for (;;) {
    mbarrierWait(fullBars + 8 * at.slot, at.phase);
    const EpilogueSlot e = slots[at.slot];
    mbarrierArrive(emptyBars + 8 * at.slot);
    at.next<WS_EPILOGUE_SLOTS>();
    if (e.pair < 0) return;
    if constexpr (GROUPED) {
      // query j's 32 rows: row group (j / 2) % GROUPS of warpgroup j / (2 GROUPS), warps 2 (j % 2) and + 1 of it
      for (int j = 0; j < e.queries; j++) {
        const int r = (j / 2) % GROUPS, warp = 4 * (j / (2 * GROUPS)) + 2 * (j % 2);
        in.scores[e.pair + (long long)j * in.perQuery] = e.warpSums[r][warp] + e.warpSums[r][warp + 1];
      }
      continue;
    }
    const float* sums0 = e.warpSums[0];
    const float passSum = (((sums0[0] + sums0[1]) + sums0[2]) + sums0[3]) +
                          (((sums0[4] + sums0[5]) + sums0[6]) + sums0[7]);
    const int units = (e.qLength + WS_ROWS<GROUPS> - 1) / WS_ROWS<GROUPS>;
    if (units == 1) {
      in.scores[e.pair] = passSum;
      continue;
    }
    float* sums = in.passSums + e.pair * in.passes;
    sums[e.pass] = passSum;
    __threadfence();
    if (atomicAdd(in.arrivals + e.pair, 1) != units - 1) continue;
    __threadfence();
    float score = 0.f;
    for (int u = 0; u < units; u++) score += __ldcg(sums + u);
    in.scores[e.pair] = score;
    in.arrivals[e.pair] = 0;
  }
}

// A consumer warp's part of an item's epilogue without partials: the sum of its 16 rows of each of SUMS row
// groups (rows g and g + 8 of each quad, then a shuffle tree over the 8 quads) into its place in the next
// epilogue slot, once the epilogue warp has emptied it. pair < 0 (warp 0 writes it): the run is over.
template <int SUMS>
__device__ __forceinline__ void handOverRows(EpilogueSlot* slots, uint32_t fullBars, uint32_t emptyBars,
                                             RingPosition& at, int warp, int lane, float (&rowSums)[SUMS],
                                             long long pair, int pass, int qLength, int queries) {
#pragma unroll
  for (int r = 0; r < SUMS; r++)
    for (int offset = 4; offset < 32; offset *= 2) rowSums[r] += __shfl_xor_sync(0xffffffffu, rowSums[r], offset);
  if (lane == 0) {
    mbarrierWait(emptyBars + 8 * at.slot, at.phase ^ 1);
    EpilogueSlot& e = slots[at.slot];
#pragma unroll
    for (int r = 0; r < SUMS; r++) e.warpSums[r][warp] = rowSums[r];
    if (warp == 0) {
      e.pair = pair;
      e.pass = pass;
      e.qLength = qLength;
      e.queries = queries;
    }
    mbarrierArrive(fullBars + 8 * at.slot);
  }
  at.next<WS_EPILOGUE_SLOTS>();
}

// SCALED: documents of a compressed type expanded to T (rule 21), each product times its token's scale in the fold.
template <typename T, int KC, int STAGES, int GROUPS, bool ARGMAX, bool GROUPED, typename Index, bool SCALED>
__device__ void forwardWgmmaWs(const WsOperands<T, Index>& in, const TensorMap* documents) {
  static_assert(!(SCALED && ARGMAX), "compressed documents are inference only");
  using In = WsOperands<T, Index>;
  extern __shared__ uint8_t dynamicShared[];
  __shared__ alignas(8) uint64_t bars[2 * STAGES];  // full barriers, then empty ones
  __shared__ TileInfo infos[STAGES];
  __shared__ alignas(8) uint64_t epilogueBars[2 * WS_EPILOGUE_SLOTS];  // likewise, for the epilogue ring
  __shared__ EpilogueSlot epilogueSlots[WS_EPILOGUE_SLOTS];
  __shared__ alignas(16) float scaleSlots[SCALED ? STAGES : 1][WS_SCALE_SLOT];
  const uint32_t scaleBase = (uint32_t)__cvta_generic_to_shared(scaleSlots);
  const uint32_t ring = ((uint32_t)__cvta_generic_to_shared(dynamicShared) + 1023) & ~1023u;
  const uint32_t fullBars = (uint32_t)__cvta_generic_to_shared(bars), emptyBars = fullBars + 8 * STAGES;
  const uint32_t epilogueFull = (uint32_t)__cvta_generic_to_shared(epilogueBars),
                 epilogueEmpty = epilogueFull + 8 * WS_EPILOGUE_SLOTS;
  const int lane = threadIdx.x % 32;
  const int warp = __shfl_sync(0xffffffffu, (int)threadIdx.x / 32, 0);  // uniform, as ptxas can see

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      mbarrierInit(fullBars + 8 * s, 1);                    // the producer's expect_tx
      mbarrierInit(emptyBars + 8 * s, WS_CONSUMER_WARPS);  // each consumer warp, its wgmmas done
    }
    for (int s = 0; s < WS_EPILOGUE_SLOTS; s++) {
      mbarrierInit(epilogueFull + 8 * s, WS_CONSUMER_WARPS);  // each consumer warp, its sum written
      mbarrierInit(epilogueEmpty + 8 * s, 1);                 // the epilogue warp, the slot read
    }
    fenceBarrierInit();
  }
  __syncthreads();

  const long long items =
      GROUPED ? (in.pairs / in.perQuery + WS_GROUP_QUERIES<GROUPS> - 1) / WS_GROUP_QUERIES<GROUPS> * in.perQuery
              : (long long)in.passes * in.pairs * in.slices;
  const long long begin = items * blockIdx.x / gridDim.x, end = items * (blockIdx.x + 1) / gridDim.x;
  if (warp >= WS_CONSUMER_WARPS) {
    setMaxRegisters<false, WS_PRODUCER_REGISTERS>();
    if (warp == WS_CONSUMER_WARPS)
      produceTiles<In, KC, STAGES, GROUPS, GROUPED, SCALED>(in, documents, begin, end, ring, fullBars, emptyBars,
                                                            infos, scaleBase);
    if (warp == WS_EPILOGUE_WARP && in.scores != nullptr && lane == 0)
      sumPasses<In, GROUPS, GROUPED>(in, epilogueSlots, epilogueFull, epilogueEmpty);
    return;
  }

  // consumers: warpgroup warp / 4 owns the pass's rows GROUPS x 64 x (warp / 4) onwards, 64 per group
  setMaxRegisters<true, WS_CONSUMER_REGISTERS>();
  constexpr int ROWS = WS_ROWS<GROUPS>;
  constexpr int SUMS = GROUPED ? GROUPS : 1;  // row sums handed over per item
  const int g = lane / 4, tig = lane % 4;
  const int myRow = (warp / 4) * GROUPS * WS_GROUP_ROWS + (warp % 4) * 16 + g;  // of group 0; and myRow + 8
  const uint64_t ringDescriptor = tileDescriptor(ring);
  uint32_t a[GROUPS][KC * 4][4];
  float acc[GROUPS][64];
  float best[GROUPS][2];
  int bestIndex[GROUPS][2];
#pragma unroll
  for (int r = 0; r < GROUPS; r++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      best[r][h] = -INFINITY;
      bestIndex[r][h] = NO_TOKEN;
    }
  RingPosition slot;
  int loadedQuery = -1, loadedPass = -1;
  RingPosition epilogue;
  for (;;) {
    mbarrierWait(fullBars + 8 * slot.slot, slot.phase);
    const TileInfo w = infos[slot.slot];
    if (w.query < 0) {
      if (in.scores != nullptr) {
        float none[SUMS] = {};
        handOverRows<SUMS>(epilogueSlots, epilogueFull, epilogueEmpty, epilogue, warp, lane, none, -1, 0, 0, 0);
      }
      break;
    }
    if (w.query != loadedQuery || w.pass != loadedPass) {  // no wgmma is in flight here
#pragma unroll
      for (int r = 0; r < GROUPS; r++) {
        const int s = w.pass * ROWS + r * WS_GROUP_ROWS + myRow;
        if constexpr (GROUPED) {  // rows s and s + 8: token s % 32 (and + 8) of query s / 32 of the group
          const int j = s / 32;
          const bool inGroup = j < w.queries;
          loadQueryRows<In, KC>(a[r], in, inGroup ? in.qRows.rowStart[w.query + j] : 0,
                               inGroup ? in.qRows.rowLength[w.query + j] : 0, s % 32, tig);
        } else {
          loadQueryRows<In, KC>(a[r], in, w.qStart, w.qLength, s, tig);
        }
      }
      loadedQuery = w.query;
      loadedPass = w.pass;
    }
    // multiply and fold one tile N tokens wide. One row group: the tile's wgmmas as one commit group, waited
    // for at once, the slot released (the fold reads registers only; the scaled fold reads the slot's scales, so
    // there after it), then the fold. Two: one commit group per row group, and group 0 folded while group 1's
    // wgmmas still run, so this warpgroup keeps the tensor pipe busy through its own first fold (the scaled fold
    // after both groups' wgmmas).
    auto multiplyAndFold = [&](auto columns) {
      constexpr int N = decltype(columns)::value;
      wgmmaFence();
      const uint64_t b = ringDescriptor + (uint64_t)(slot.slot * KC * WS_BOX_BYTES / 16);
#pragma unroll
      for (int r = 0; r < GROUPS; r++) {
        auto& tile = reinterpret_cast<float(&)[N / 2]>(acc[r]);
#pragma unroll
        for (int kc = 0; kc < KC; kc++)
#pragma unroll
          for (int k = 0; k < SWIZZLE_ROW_HALVES / 16; k++)  // 16 halves = 32 bytes = 2 descriptor units
            Wgmma<T>::template run<N>(tile, a[r][kc * 4 + k], b + (uint64_t)(kc * WS_BOX_BYTES / 16 + 2 * k),
                                      kc > 0 || k > 0);
        wgmmaCommit();
      }
      // SCALED: the scales are read from the slot, so it is released after the last fold, not before
      const bool scaled = SCALED && in.dScale != nullptr;
      [[maybe_unused]] const uint32_t scales = scaleBase + 4 * (WS_SCALE_SLOT * slot.slot + ((w.dStart + w.t0) & 3));
      auto fold = [&](int r, auto& tile, auto separateWhole) {
        if constexpr (SCALED) {
          if (scaled) {
            foldDocumentScaledTile<N>(best[r], tile, scales, in.dRows, w.dStart, w.t0, w.tEnd, tig);
            return;
          }
        }
        foldTile<ARGMAX, N, true, decltype(separateWhole)::value>(best[r], bestIndex[r], tile, in.dRows, w.dStart,
                                                                   w.t0, w.tEnd, tig);
      };
      if constexpr (GROUPS == 2) {
        // the scaled fold reads shared memory, which no consumer does while its wgmmas run (rule 20's kernel
        // scored first pairs wrong when it did)
        if (scaled) {
          wgmmaWait<0>();
        } else {
          wgmmaWait<1>();
        }
        auto& tile = reinterpret_cast<float(&)[N / 2]>(acc[0]);
        pinAccumulators(tile);
        fold(0, tile, std::false_type{});
      }
      wgmmaWait<0>();
      auto& tile = reinterpret_cast<float(&)[N / 2]>(acc[GROUPS - 1]);
      pinAccumulators(tile);
      if (!scaled && lane == 0) mbarrierArrive(emptyBars + 8 * slot.slot);
      fold(GROUPS - 1, tile, std::integral_constant<bool, GROUPS == 1>{});
      if (scaled) {
        __syncwarp();  // every lane's reads of the slot's scales before lane 0 releases it
        if (lane == 0) mbarrierArrive(emptyBars + 8 * slot.slot);
      }
      slot.next<STAGES>();
    };
    multiplyAndFold(std::integral_constant<int, WS_TOKENS>{});
    if (!w.last) continue;
    // epilogue, after the item's last tile: each row's max across its quad
    float rowSums[SUMS] = {};
#pragma unroll
    for (int r = 0; r < GROUPS; r++) {
      // with query groups the warp's 16 rows of row group r are tokens of one query: j of the group
      const int j = (w.pass * ROWS + r * WS_GROUP_ROWS + myRow) / 32;
      const bool inGroup = GROUPED && j < w.queries;
      const int qStart = inGroup ? in.qRows.rowStart[w.query + j] : w.qStart;
      const int qLength = inGroup ? in.qRows.rowLength[w.query + j] : GROUPED ? 0 : w.qLength;
      const long long pair = GROUPED ? w.pair + (long long)j * in.perQuery : w.pair;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        float v = best[r][h];
        int i = bestIndex[r][h];
        quadMax<ARGMAX>(v, i);
        if constexpr (ARGMAX) i = argmaxOrFirstValid(i, in.dRows, w.dStart, w.tEnd);
        const int row = w.pass * ROWS + r * WS_GROUP_ROWS + myRow + 8 * h;
        const int s = GROUPED ? row % 32 : row;
        if (in.scores == nullptr) {
          if (tig == 0 && s < qLength) {
            in.partialMax[w.partialBase + s] = v;
            in.partialArgmax[w.partialBase + s] = i;
          }
        } else {
          const bool valid = s < qLength && isValid(in.qRows, qStart + s);
          if (valid) rowSums[GROUPED ? r : 0] += v;
          if (ARGMAX && in.argmax != nullptr && tig == 0 && s < in.argmaxStride && (!GROUPED || inGroup))
            in.argmax[pair * in.argmaxStride + s] = (Index)(valid ? i : -1);
        }
        best[r][h] = -INFINITY;
        bestIndex[r][h] = NO_TOKEN;
      }
    }
    if (in.scores != nullptr)
      handOverRows<SUMS>(epilogueSlots, epilogueFull, epilogueEmpty, epilogue, warp, lane, rowSums, w.pair, w.pass,
                         w.qLength, w.queries);
  }
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Queries as in maxsim_forward_*; the documents' row starts, lengths, mask and valid counts, their tokens
// through `documents`, a tensor map over the batch's stored tokens (rows) x d (columns) in boxes of 128 x
// 64 with the 128-byte swizzle; pairs as in maxsim_forward_* (mode, perQuery, docOffset); items = passes x
// pairs x slices. scores = null: partials at ((pair x slices + slice) x partialStride + row) for
// maxsim_merge_slices. Else (slices == 1): scores and argmax (int32, nullable) written here, with passSums
// (pairs x passes floats) and arrivals (pairs ints, zero). One block per SM, WS_THREADS
// threads, dynamic shared memory 1024 + 192 KB. Entries:
//   maxsim_forward_wgmma_ws_k{KC}[_r256][_argmax]_{type}: KC = 1 for d <= 64, 2 for d <= 128; _r256: passes
//   of 256 query rows (GROUPS = 2), else 128.
//   maxsim_forward_wgmma_ws_k{KC}_q8[_argmax|_argmax16]_{type}: query groups (GROUPED), 8 all-pairs queries of at
//   most 32 tokens per pass; mode ALL_PAIRS, passes = slices = 1, scores given (passSums and arrivals unused);
//   _argmax16: the argmax in int16.
//   maxsim_forward_wgmma_ws_k{KC}[_r256|_q8]_scaled_{type}: compressed documents expanded to the queries' type
//   (maxsim_expand.cu, rule 21), dScale their tokens' scales (16-byte aligned and padded to 16 bytes; null: 1), each
//   product times its token's scale before the max; no argmax. 1024 + 192 KB of dynamic shared memory, and up to
//   6.2 KB more static.
#define MAXSIM_WGMMA_WS_ENTRY(T, KC, GROUPS, ARGMAX, GROUPED, Index, SCALED, NAME)                              \
  extern "C" __global__ void __launch_bounds__(WS_THREADS, 1)                                                 \
      NAME(const T* q, const int* qStart, const int* qLength, const uint8_t* qMask, const int* dStart,         \
           const int* dLength, const uint8_t* dMask, const int* dValid, const float* dScale, int dim, int mode, \
           int perQuery, int docOffset, long long pairs, int passes, int slices, int sliceTokens,              \
           float* partialMax, int* partialArgmax, int partialStride, float* scores, void* argmax,              \
           int argmaxStride, float* passSums, int* arrivals, const __grid_constant__ TensorMap documents) {    \
    const WsOperands<T, Index> in{q,          Rows{qStart, qLength, qMask}, Rows{dStart, dLength, dMask},    \
                                  dValid,     dScale, dim, mode, perQuery, docOffset, pairs, passes, slices, \
                                  sliceTokens, partialMax, partialArgmax, partialStride, scores,             \
                                  static_cast<Index*>(argmax), argmaxStride, passSums, arrivals};            \
    forwardWgmmaWs<T, KC, WS_RING_BYTES / (KC * WS_BOX_BYTES), GROUPS, ARGMAX, GROUPED, Index, SCALED>(       \
        in, &documents);                                                                                       \
  }
#define MAXSIM_WGMMA_WS_TYPE(T, SUFFIX)                                                                    \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 1, false, false, int, false, maxsim_forward_wgmma_ws_k1_##SUFFIX)                   \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 1, true, false, int, false, maxsim_forward_wgmma_ws_k1_argmax_##SUFFIX)             \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 1, false, false, int, false, maxsim_forward_wgmma_ws_k2_##SUFFIX)                   \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 1, true, false, int, false, maxsim_forward_wgmma_ws_k2_argmax_##SUFFIX)             \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 2, false, false, int, false, maxsim_forward_wgmma_ws_k1_r256_##SUFFIX)              \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 2, true, false, int, false, maxsim_forward_wgmma_ws_k1_r256_argmax_##SUFFIX)        \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 2, false, false, int, false, maxsim_forward_wgmma_ws_k2_r256_##SUFFIX)              \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 2, true, false, int, false, maxsim_forward_wgmma_ws_k2_r256_argmax_##SUFFIX)        \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 2, false, true, int, false, maxsim_forward_wgmma_ws_k1_q8_##SUFFIX)                 \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 2, true, true, int, false, maxsim_forward_wgmma_ws_k1_q8_argmax_##SUFFIX)           \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 2, true, true, int16_t, false, maxsim_forward_wgmma_ws_k1_q8_argmax16_##SUFFIX)     \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 2, false, true, int, false, maxsim_forward_wgmma_ws_k2_q8_##SUFFIX)                 \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 2, true, true, int, false, maxsim_forward_wgmma_ws_k2_q8_argmax_##SUFFIX)           \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 2, true, true, int16_t, false, maxsim_forward_wgmma_ws_k2_q8_argmax16_##SUFFIX)     \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 1, false, false, int, true, maxsim_forward_wgmma_ws_k1_scaled_##SUFFIX)      \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 1, false, false, int, true, maxsim_forward_wgmma_ws_k2_scaled_##SUFFIX)      \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 2, false, false, int, true, maxsim_forward_wgmma_ws_k1_r256_scaled_##SUFFIX) \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 2, false, false, int, true, maxsim_forward_wgmma_ws_k2_r256_scaled_##SUFFIX) \
  MAXSIM_WGMMA_WS_ENTRY(T, 1, 2, false, true, int, true, maxsim_forward_wgmma_ws_k1_q8_scaled_##SUFFIX)    \
  MAXSIM_WGMMA_WS_ENTRY(T, 2, 2, false, true, int, true, maxsim_forward_wgmma_ws_k2_q8_scaled_##SUFFIX)

MAXSIM_WGMMA_WS_TYPE(__nv_bfloat16, bf16)
MAXSIM_WGMMA_WS_TYPE(__half, f16)
#endif
