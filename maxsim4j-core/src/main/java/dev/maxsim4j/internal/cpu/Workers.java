package dev.maxsim4j.internal.cpu;

import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The workers of one call, shared by its chunks: a chunk takes one that no running chunk holds, or makes one,
 * and gives it back when done. A call splits into several chunks a thread, and each worker's scratch (a
 * document's buffer, up to a few hundred KiB) is then made once a thread rather than once a chunk. A worker's
 * {@code load} sets all it reads, so which chunk used it before changes no result.
 */
final class Workers {
  private final PairKernel.Bound bound;
  private final ConcurrentLinkedQueue<PairKernel.Worker> idle = new ConcurrentLinkedQueue<>();

  Workers(PairKernel.Bound bound) {
    this.bound = bound;
  }

  PairKernel.Worker take() {
    PairKernel.Worker w = idle.poll();
    return w != null ? w : bound.newWorker();
  }

  void giveBack(PairKernel.Worker w) {
    idle.add(w);
  }
}
