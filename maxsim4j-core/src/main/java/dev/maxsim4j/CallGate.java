package dev.maxsim4j;

/**
 * Admits calls into a {@link MaxSim} until it is closed, and frees its resources exactly once when it is
 * closed and no call is left: so native memory is never freed under a running call.
 *
 * <p>A synchronous call is <em>running</em> from {@link #enter} to {@link #exit}; an asynchronous one
 * becomes <em>in flight</em> once submitted ({@link #submitted}) until {@link #landed}. {@link #close} waits
 * for running calls only: an in-flight call may need the very thread that calls close (a completion
 * callback), so the last one to land frees instead.
 */
final class CallGate {
  private final Runnable release;
  private int running;
  private int inFlight;
  private boolean closed;
  private boolean released;

  CallGate(Runnable release) {
    this.release = release;
  }

  synchronized void enter() {
    if (closed) {
      throw new IllegalStateException("MaxSim is closed");
    }
    running++;
  }

  void exit() {
    boolean free;
    synchronized (this) {
      running--;
      notifyAll();
      free = takeRelease();
    }
    if (free) {
      release.run();
    }
  }

  /** The running call has been submitted and is now in flight. */
  synchronized void submitted() {
    running--;
    inFlight++;
    notifyAll();
  }

  void landed() {
    boolean free;
    synchronized (this) {
      inFlight--;
      free = takeRelease();
    }
    if (free) {
      release.run();
    }
  }

  synchronized boolean isClosed() {
    return closed;
  }

  /** Refuses new calls, waits for running ones to return, and frees once nothing is left in flight. */
  void close() {
    boolean free;
    synchronized (this) {
      closed = true;
      boolean interrupted = false;
      while (running > 0) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true; // freeing under a running call is never an option: keep waiting
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      free = takeRelease();
    }
    if (free) {
      release.run();
    }
  }

  private boolean takeRelease() {
    if (closed && running == 0 && inFlight == 0 && !released) {
      released = true;
      return true;
    }
    return false;
  }
}
