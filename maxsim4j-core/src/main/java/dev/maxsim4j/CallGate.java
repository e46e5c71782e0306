package dev.maxsim4j;

/**
 * Admits calls into a {@link MaxSim} until it is closed, and frees its resources exactly once when it is
 * closed and no call is left: so native memory is never freed under a running call.
 *
 * <p>A synchronous call is <em>running</em> from {@link #enter} to {@link #exit}; an asynchronous one
 * becomes <em>in flight</em> once submitted ({@link #submitted}) until {@link #landed}. {@link #close} waits
 * for running calls only: an in-flight call may need the very thread that calls close (a completion
 * callback), so the last one to land frees instead. A close that does not free waits for a free under way on
 * another thread to finish, so that it never returns with the instance half freed.
 */
final class CallGate {
  private final Runnable release;
  private int running;
  private int inFlight;
  private boolean closed;
  private boolean released;
  private boolean releaseDone;
  /** Closes waiting for running calls: the last call to return leaves the free to them. */
  private int closersWaiting;

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
      free = closersWaiting == 0 && takeRelease();
    }
    if (free) {
      free();
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
      free();
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
      closersWaiting++;
      while (running > 0) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true; // freeing under a running call is never an option: keep waiting
        }
      }
      closersWaiting--;
      free = takeRelease();
      while (!free && released && !releaseDone) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true; // a close that returned under a free would leave its threads and memory behind
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (free) {
      free();
    }
  }

  private void free() {
    try {
      release.run();
    } finally {
      synchronized (this) {
        releaseDone = true;
        notifyAll();
      }
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
