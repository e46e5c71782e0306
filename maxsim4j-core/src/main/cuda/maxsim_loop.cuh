// The persistent streaming loop's mailbox: how a kernel that stays on the GPU between calls learns of the
// next query and tells the host it is done, so that a call costs no kernel launch (the _loop entries of
// maxsim_forward_stream.cu; the host side is internal/cuda/StreamLoop.java).
//
// Why. On the H200's VM a call that launches a kernel pays 9-15 us beyond the kernel itself: cuLaunchKernel
// takes 5-8 us to return, an isolated grid ramps up 4-7 us slower than one queued behind another, and the
// host wakes from the synchronisation (docs/benchmarks.md, "What bounds each shape now"). A grid that
// never ends pays none of it; the host posts a command into pinned memory and spins on a word the GPU
// writes back.
//
// What a launch is bound to: the kernel (dtype and d / 32) and the pinned scores buffer, both kernel
// parameters. The documents come with each command, so that calls may rotate through resident batches.
//
// Host -> device. A LoopCommand in pinned host memory, its generation written last (a release store). One
// thread polls it over the bus: thread 0 of block 0, the leader. The leader's block copies the query row it
// names (from the mapped payload after the command, or from device memory for a resident query) into the
// fixed stage and the command into device memory, then publishes a new epoch there. Thread 0 of every
// other block polls that word in L2, sleeping briefly between reads.
// Device -> host. Warps write their scores straight into pinned host memory and fence them at system scope
// before they check out; the last warp to check out writes the command's generation to LoopStatus::done.
// Idle. After `idleNanoseconds` without a command the leader publishes LOOP_EXIT, sets LoopStatus::exited and
// the grid ends; the host relaunches it on its next call. The host ends it the same way (LOOP_EXIT) before
// anything else runs on the device: the loop holds every SM while it waits.
#pragma once
#include <stdint.h>

namespace maxsim4j {

enum LoopOp : long long { LOOP_SCORE = 0, LOOP_EXIT = 1 };

// One command, all fields 8 bytes (StreamLoop.java writes them at these offsets).
struct LoopCommand {
  unsigned long long generation;  // 0: the host's count of commands; written last
  long long op;                   // 8: LoopOp
  const uint8_t* tokens;          // 16: the query row's elements (mapped host memory or device memory)
  long long tokenBytes;           // 24: a multiple of 16, at most LOOP_STAGE_TOKEN_BYTES
  const uint8_t* mask;            // 32: the row's mask bytes, or null: all valid
  long long length;               // 40: the row's tokens
  const void* d;                  // 48: the documents (device memory), as DeviceTokens lays them out
  const int* dStart;              // 56
  const int* dLength;             // 64
  const uint8_t* dMask;           // 72
  const int* dValid;              // 80
  long long pairs;                // 88: the documents: one score each
  long long dim;                  // 96
};
constexpr int LOOP_COMMAND_WORDS = sizeof(LoopCommand) / 8;
static_assert(sizeof(LoopCommand) == 104, "StreamLoop.java mirrors this layout");

// Written by the device into pinned host memory, after the command.
struct LoopStatus {
  unsigned long long done;    // the generation of the last command completed
  unsigned long long exited;  // nonzero once the grid has left after an idle period (1 + ns it waited)
  // %globaltimer when the leader saw the last command, when it published it to the grid, and when the last
  // warp finished it: how a call's time splits on the device (StreamLoop.history)
  unsigned long long seenAt, publishedAt, doneAt;
};
constexpr int LOOP_STATUS_OFFSET = 128;
// A query row staged in the host mailbox starts here (its mask LOOP_STAGE_TOKEN_BYTES further on).
constexpr int LOOP_PAYLOAD_OFFSET = 256;
// The fixed stage in device memory: the row's elements (at most 32 tokens x 128 halves), then its start
// (0) and length, then its mask. The kernel's q, qStart, qLength and qMask parameters point here.
constexpr int LOOP_STAGE_TOKEN_BYTES = 8192;
constexpr int LOOP_STAGE_ROW_OFFSET = LOOP_STAGE_TOKEN_BYTES;         // int start, int length
constexpr int LOOP_STAGE_MASK_OFFSET = LOOP_STAGE_TOKEN_BYTES + 256;  // up to 256 bytes

// Device memory the host zeroes before every launch.
struct LoopState {
  unsigned int epoch;       // commands published to the grid in this launch
  unsigned int checkedOut;  // warps done with the current command
  unsigned long long command[LOOP_COMMAND_WORDS];
};

// Per block, in (dynamic) shared memory rather than registers (the scan needs them all): `seen`, the host generation
// the leader last took; `epoch`, the commands this block has run; `command`, the current one.
struct LoopCursor {
  unsigned long long seen;
  unsigned int epoch;
  unsigned long long command[LOOP_COMMAND_WORDS];
};
constexpr int LOOP_CURSOR_BYTES = 128;
static_assert(sizeof(LoopCursor) <= LOOP_CURSOR_BYTES, "StreamLoop.java asks for LOOP_CURSOR_BYTES of it");

__device__ __forceinline__ unsigned long long loopNanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}
// Polls: volatile loads, which ptxas may neither merge nor hoist. With ld.acquire.sys (and ld.global.cv) in
// the leader's loop, which ends on a timer, ptxas issued the load once before the loop and spun on the
// timer alone (SASS on the H200: the loop branched back past the LDG): every command after a grid's first
// went unseen until the idle time ran out. The acquire is a fence after the poll succeeds.
__device__ __forceinline__ unsigned long long pollHost(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.volatile.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned int pollDevice(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.volatile.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// A fresh read of host memory written before the generation: ld.global.cv discards a matching L2 line of
// system memory and fetches it again (PTX ISA, "Cache Operators").
__device__ __forceinline__ unsigned long long loadFresh(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.global.cv.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void storeReleaseSystem(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void storeReleaseGpu(unsigned int* p, unsigned int v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// The leader's wait: the next generation from the host, or 0 after idleNanoseconds without one.
__device__ __forceinline__ unsigned long long awaitHost(const LoopCommand* host, unsigned long long seen,
                                                        long long idleNanoseconds) {
  const unsigned long long since = loopNanoseconds();
  for (;;) {
    const unsigned long long g = pollHost(&host->generation);  // a bus round trip: no sleep needed
    if (g != seen) return g;  // what the host wrote before it is read after it with ld.cv (no reordering)
    if ((long long)(loopNanoseconds() - since) > idleNanoseconds) return 0;
  }
}

// Block-wide: waits for the next command, stages its query (leader's block) and leaves it in `cursor` for
// every thread of the block. Every thread of the block (THREADS) calls it.
template <int THREADS>
__device__ void nextCommand(const LoopCommand* host, LoopStatus* status, LoopState* state, uint8_t* stage,
                            LoopCursor* cursor, long long idleNanoseconds) {
  __syncthreads();  // the block is done with the previous command
  const int tid = threadIdx.x;
  const unsigned int epoch = cursor->epoch;
  unsigned long long* words = cursor->command;
  if (blockIdx.x == 0) {
    const unsigned long long exitCheck = loopNanoseconds();
    unsigned long long seenAt = 0;
    if (tid == 0) {
      words[0] = awaitHost(host, cursor->seen, idleNanoseconds);
      seenAt = loopNanoseconds();
    }
    __syncthreads();
    const unsigned long long g = words[0];
    if (g != 0) {
      // One round trip over the bus: the command (a word per thread) and, at the same time, whatever query
      // the mailbox's payload holds (each thread's 4 x 16 bytes and a mask byte); a resident query is then
      // read from device memory instead.
      constexpr int PER_THREAD = LOOP_STAGE_TOKEN_BYTES / (16 * THREADS);
      const uint8_t* payload = reinterpret_cast<const uint8_t*>(host) + LOOP_PAYLOAD_OFFSET;
      if (tid > 0 && tid < LOOP_COMMAND_WORDS) words[tid] = loadFresh(reinterpret_cast<const unsigned long long*>(host) + tid);
      uint4 v[PER_THREAD];
#pragma unroll
      for (int i = 0; i < PER_THREAD; i++) v[i] = __ldcv(reinterpret_cast<const uint4*>(payload) + i * THREADS + tid);
      uint8_t m = tid < 256 ? __ldcv(payload + LOOP_STAGE_TOKEN_BYTES + tid) : 1;
      __syncthreads();
      const LoopCommand& c = *reinterpret_cast<const LoopCommand*>(words);
      const bool staged = c.tokens == payload;
      uint4* to = reinterpret_cast<uint4*>(stage);
#pragma unroll
      for (int i = 0; i < PER_THREAD; i++) {
        const int at = i * THREADS + tid;
        if (16LL * at < c.tokenBytes) to[at] = staged ? v[i] : __ldcg(reinterpret_cast<const uint4*>(c.tokens) + at);
      }
      if (tid < c.length) {
        if (c.mask == nullptr) m = 1;
        else if (c.mask != payload + LOOP_STAGE_TOKEN_BYTES) m = __ldcg(c.mask + tid);
        stage[LOOP_STAGE_MASK_OFFSET + tid] = m;
      }
      if (tid == 0) {
        int* row = reinterpret_cast<int*>(stage + LOOP_STAGE_ROW_OFFSET);
        row[0] = 0;
        row[1] = (int)c.length;
      }
    } else if (tid == 0) {
      words[1] = LOOP_EXIT;
    }
    __syncthreads();
    if (tid < LOOP_COMMAND_WORDS) state->command[tid] = words[tid];
    __syncthreads();
    if (tid == 0) {
      __threadfence();  // the block's stage and command writes before the epoch
      storeReleaseGpu(&state->epoch, epoch + 1);
      if (g != 0) {
        status->seenAt = seenAt;
        status->publishedAt = loopNanoseconds();
      }
      if (g == 0) storeReleaseSystem(&status->exited, 1ull + (loopNanoseconds() - exitCheck));
      else cursor->seen = g;
    }
  } else {
    if (tid == 0) {
      // Blocks done early wait here while the others still stream: a backoff to 1 us keeps ~500 pollers
      // from loading one L2 slice (the documents' lines there queue behind them) at a cost of < 1 us of
      // wake-up after a publish.
      unsigned int sleep = 32;
      while (pollDevice(&state->epoch) == epoch) {
        __nanosleep(sleep);
        sleep = sleep < 1024 ? 2 * sleep : 1024;
      }
      __threadfence();  // acquire: the command and the stage, read after the epoch
    }
    __syncthreads();
    if (tid < LOOP_COMMAND_WORDS) words[tid] = __ldcg(&state->command[tid]);
  }
  if (tid == 0) cursor->epoch = epoch + 1;
  __syncthreads();
}

// After a warp's last pair of a command (lane 0 only): its scores, written to the host, are fenced before it
// checks out; the last warp to check out tells the host. No warp touches checkedOut again before the host
// has seen `done` and posted the next command.
__device__ __forceinline__ void checkOut(LoopState* state, LoopStatus* status, unsigned long long generation,
                                         unsigned int warps) {
  __threadfence_system();
  if (atomicAdd(&state->checkedOut, 1u) == warps - 1) {
    state->checkedOut = 0;
    status->doneAt = loopNanoseconds();
    __threadfence_system();
    storeReleaseSystem(&status->done, generation);
  }
}

}  // namespace maxsim4j
