package dev.maxsim4j.internal;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The library's diagnostics, on the {@code System.Logger} named {@code dev.maxsim4j}. A diagnostic that cannot be
 * delivered (a logging handler that throws) fails neither the call that made it nor a later one: it is dropped, and a
 * message logged once is tried again by the next call that would log it.
 */
public final class LibraryLog {
  private LibraryLog() {}

  /** Logs {@code message} at {@code level}. */
  public static void log(System.Logger.Level level, String message) {
    deliver(null, level, message);
  }

  /** Logs {@code message} at {@code level} unless {@code logged} says it was, and sets it once it is. */
  public static void once(AtomicBoolean logged, System.Logger.Level level, String message) {
    once(null, logged, level, message);
  }

  static void once(System.Logger to, AtomicBoolean logged, System.Logger.Level level, String message) {
    if (logged.compareAndSet(false, true) && !deliver(to, level, message)) {
      logged.set(false);
    }
  }

  /** Delivers to {@code to}, or where null to the library's logger, looked up here: a lookup can fail too. */
  static boolean deliver(System.Logger to, System.Logger.Level level, String message) {
    try {
      (to != null ? to : System.getLogger("dev.maxsim4j")).log(level, message);
      return true;
    } catch (RuntimeException | Error e) { // the logging's problem, not the caller's: scoring goes on
      return false;
    }
  }
}
