package dev.maxsim4j.cli;

import dev.maxsim4j.cli.io.Printable;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Log records on stderr as one line each, "LEVEL: message (exception)", without the stack trace: ONNX Runtime and
 * JNA log a failure they recover from, or one the command then names itself, with its whole trace, and the command
 * line prints no stack trace unless {@code MAXSIM4J_DEBUG=1}, where the logging framework's own lines stay.
 */
final class OneLineLogs extends Formatter {
  private OneLineLogs() {}

  /**
   * Gives the root logger's console handler (on stderr) this format, unless stack traces are asked for; another
   * handler (a file a user configured) keeps its own.
   */
  static void install() {
    if (CommandRunner.stackTracesAsked()) {
      return;
    }
    for (Handler handler : Logger.getLogger("").getHandlers()) {
      if (handler instanceof ConsoleHandler) {
        handler.setFormatter(new OneLineLogs());
      }
    }
  }

  @Override
  public String format(LogRecord record) {
    String line = record.getLevel().getLocalizedName() + ": " + formatMessage(record);
    Throwable thrown = record.getThrown();
    if (thrown != null) {
      // the deepest cause, within a bound: causes can form a cycle
      Throwable root = thrown;
      for (int depth = 0; depth < 32 && root.getCause() != null; depth++) {
        root = root.getCause();
      }
      line += " (" + thrown + (root != thrown ? "; caused by " + root : "") + ")";
    }
    return Printable.oneLine(line) + System.lineSeparator();
  }
}
