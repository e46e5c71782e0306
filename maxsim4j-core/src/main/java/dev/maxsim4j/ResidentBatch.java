package dev.maxsim4j;

import dev.maxsim4j.internal.Residency;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A document batch kept ready by one {@link MaxSim} (on a GPU: in device memory) for repeated scoring.
 * Closing it frees the device copy; using it afterwards, or with another MaxSim, throws
 * {@link IllegalStateException}. Thread-safe: calls on several threads may read it at once, and a call running
 * with it when it is closed still completes.
 */
public final class ResidentBatch implements AutoCloseable {
  private final MaxSim owner;
  private final TokenBatch batch;
  private final Residency handle;
  /** Set once: two threads closing at once release the handle once. */
  private final AtomicBoolean closed = new AtomicBoolean();

  ResidentBatch(MaxSim owner, TokenBatch batch, Residency handle) {
    this.owner = owner;
    this.batch = batch;
    this.handle = handle;
  }

  /** The host-side batch this was made from. */
  public TokenBatch batch() {
    return batch;
  }

  TokenBatch batchFor(MaxSim user) {
    Objects.requireNonNull(user);
    if (closed.get()) {
      throw new IllegalStateException("this ResidentBatch is closed");
    }
    if (user != owner) {
      throw new IllegalStateException("this ResidentBatch belongs to another MaxSim instance");
    }
    return batch;
  }

  /**
   * The batch's shape and whether it (or its MaxSim) is closed, e.g.
   * {@code ResidentBatch[TokenBatch[N=4, L=32, d=128, FLOAT32]]}.
   */
  @Override
  public String toString() {
    return "ResidentBatch[" + batch + (closed.get() || owner.isClosed() ? ", closed" : "") + "]";
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      handle.close();
    }
  }
}
