package dev.maxsim4j.cli;

import java.util.function.Supplier;
import sun.misc.Signal;

/**
 * Calls into the text model's native libraries (ONNX Runtime, the DJL tokenizer), which must not be under way when
 * the JVM exits: ONNX Runtime frees its environment from a shutdown hook of its own, and a model run still going on
 * another thread then ends the JVM with SIGSEGV (a crash log, exit 134) instead of the signal's status. So INT and TERM
 * end the process once no such call is under way: at once between calls, after the current batch of an encoding
 * (at its progress report), or after the call itself; a call that would start after the signal never does.
 */
public final class NativeWork {
  /** How long a signal waits for the call under way before exiting anyway. */
  private static final long WAIT_MILLIS = 30_000;
  private static final Object LOCK = new Object();
  private static int underWay;
  private static boolean exiting;

  private NativeWork() {}

  /** Makes INT and TERM exit with 130 and 143 once no native call is under way; for the command line's process. */
  static void exitOnSignals() {
    handle("INT", 130);
    handle("TERM", 143);
  }

  private static void handle(String name, int status) {
    try {
      Signal.handle(new Signal(name), s -> exitWhenNoneUnderWay(status));
    } catch (IllegalArgumentException | UnsupportedOperationException refused) {
      // the JVM keeps this signal (as with -Xrs): its own handling applies
    }
  }

  private static void exitWhenNoneUnderWay(int status) {
    synchronized (LOCK) {
      exiting = true;
      long end = System.currentTimeMillis() + WAIT_MILLIS;
      for (long left = WAIT_MILLIS; underWay > 0 && left > 0; left = end - System.currentTimeMillis()) {
        try {
          LOCK.wait(left);
        } catch (InterruptedException e) {
          break;
        }
      }
    }
    System.exit(status);
  }

  /** {@code call}'s result, the call counted as under way (where a signal has come, it waits for the exit). */
  public static <T> T during(Supplier<T> call) {
    enter();
    try {
      return call.get();
    } finally {
      leave();
    }
  }

  /**
   * A point inside a call where no native work is under way (between an encoding's batches): a signal that came
   * meanwhile exits here, the call going no further.
   */
  public static void between() {
    leave();
    enter();
  }

  private static void enter() {
    synchronized (LOCK) {
      boolean interrupted = false;
      while (exiting) { // the exit is on its way: this thread waits for it
        try {
          LOCK.wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      underWay++;
    }
  }

  private static void leave() {
    synchronized (LOCK) {
      underWay--;
      LOCK.notifyAll();
    }
  }
}
