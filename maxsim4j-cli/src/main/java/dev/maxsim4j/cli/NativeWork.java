package dev.maxsim4j.cli;

import java.util.function.IntConsumer;
import java.util.function.Supplier;
import sun.misc.Signal;

/**
 * Calls into the text model's native libraries (ONNX Runtime, the DJL tokenizer), which must not be under way when
 * the JVM exits: ONNX Runtime frees its environment from a shutdown hook of its own, and a model run still going on
 * another thread then ends the JVM with SIGSEGV (a crash log, exit 134) instead of the signal's status. So INT, TERM
 * and HUP end the process once no such call is under way: at once between calls, after the current batch of an
 * encoding (at its progress report), or after the call itself; a call that would start after the signal never does.
 * A call still under way after {@link #WAIT_NANOS}, or a second signal, halts the JVM (no shutdown hook runs, so
 * none frees what the call uses).
 */
public final class NativeWork {
  /** How long a signal waits for the call under way. */
  static final long WAIT_NANOS = 30_000_000_000L;
  private static final NativeWork PROCESS = new NativeWork(System::exit, s -> Runtime.getRuntime().halt(s),
      WAIT_NANOS);

  private final IntConsumer exit;
  private final IntConsumer halt;
  private final long waitNanos;
  private int underWay;
  private boolean exiting;

  /** {@code exit} and {@code halt} end the process (the JVM's, or a test's stand-ins); they do not return. */
  NativeWork(IntConsumer exit, IntConsumer halt, long waitNanos) {
    this.exit = exit;
    this.halt = halt;
    this.waitNanos = waitNanos;
  }

  /** Makes INT, TERM and HUP end the command line's process as above, with 130, 143 and 129. */
  public static void exitOnSignals() {
    handle("INT", 130);
    handle("TERM", 143);
    handle("HUP", 129);
  }

  private static void handle(String name, int status) {
    try {
      Signal.handle(new Signal(name), s -> PROCESS.signalled(status));
    } catch (IllegalArgumentException | UnsupportedOperationException refused) {
      // the JVM keeps this signal (as with -Xrs): its own handling applies
    }
  }

  /** {@code call}'s result, the call counted as under way (where a signal has come, it waits for the exit). */
  public static <T> T during(Supplier<T> call) {
    return PROCESS.run(call);
  }

  /**
   * A point inside a call where no native work is under way (between an encoding's batches): a signal that came
   * meanwhile exits here, the call going no further.
   */
  public static void between() {
    PROCESS.pause();
  }

  /** Ends the process with {@code status} once no call is under way; a second signal halts it at once. */
  void signalled(int status) {
    boolean waited;
    synchronized (this) {
      if (exiting) {
        halt.accept(status);
        return;
      }
      exiting = true;
      long end = System.nanoTime() + waitNanos;
      for (long left = waitNanos; underWay > 0 && left > 0; left = end - System.nanoTime()) {
        try {
          wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          break;
        }
      }
      waited = underWay == 0;
    }
    if (waited) {
      exit.accept(status);
    } else {
      halt.accept(status);
    }
  }

  <T> T run(Supplier<T> call) {
    enter();
    try {
      return call.get();
    } finally {
      leave();
    }
  }

  void pause() {
    leave();
    enter();
  }

  private synchronized void enter() {
    boolean interrupted = false;
    while (exiting) { // the exit is on its way: this thread waits for it
      try {
        wait();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    underWay++;
  }

  private synchronized void leave() {
    underWay--;
    notifyAll();
  }
}
