package dev.maxsim4j;

import java.util.Objects;

/**
 * A document batch kept ready by one {@link MaxSim} (on a GPU: in device memory) for repeated scoring.
 * Closing it frees the device copy; using it afterwards, or with another MaxSim, throws
 * {@link IllegalStateException}.
 */
public final class ResidentBatch implements AutoCloseable {
  private final MaxSim owner;
  private final TokenBatch batch;
  private final AutoCloseable handle;
  private volatile boolean closed;

  ResidentBatch(MaxSim owner, TokenBatch batch, AutoCloseable handle) {
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
    if (closed) {
      throw new IllegalStateException("this ResidentBatch is closed");
    }
    if (user != owner) {
      throw new IllegalStateException("this ResidentBatch belongs to another MaxSim instance");
    }
    return batch;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      handle.close();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
