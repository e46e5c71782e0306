package dev.maxsim4j.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A logger that throws (a handler whose sink is down) fails no call that logs, and a message logged once is delivered
 * by the next try after one that failed.
 */
class LibraryLogTest {
  @Test
  void aThrowingLoggerFailsNoCallAndAMessageLoggedOnceIsTriedAgain() {
    List<String> delivered = new ArrayList<>();
    int[] calls = {0};
    System.Logger downOnce = new System.Logger() {
      @Override
      public String getName() {
        return "dev.maxsim4j";
      }

      @Override
      public boolean isLoggable(Level level) {
        return true;
      }

      @Override
      public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
        log(level, bundle, msg);
      }

      @Override
      public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        if (calls[0]++ == 0) {
          throw new IllegalStateException("the log sink is down");
        }
        delivered.add(format);
      }
    };
    AtomicBoolean logged = new AtomicBoolean();
    LibraryLog.once(downOnce, logged, System.Logger.Level.WARNING, "fallback");
    assertFalse(logged.get(), "a message that was not delivered is not taken as logged");
    LibraryLog.once(downOnce, logged, System.Logger.Level.WARNING, "fallback");
    LibraryLog.once(downOnce, logged, System.Logger.Level.WARNING, "fallback");
    assertTrue(logged.get());
    assertEquals(List.of("fallback"), delivered);
    calls[0] = 0;
    assertFalse(LibraryLog.deliver(downOnce, System.Logger.Level.DEBUG, "dropped"));
  }
}
