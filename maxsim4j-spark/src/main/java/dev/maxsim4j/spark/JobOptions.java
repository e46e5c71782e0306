package dev.maxsim4j.spark;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** {@code --name value} options of the Spark job, checked against the names it accepts. */
final class JobOptions {
  private final Map<String, String> values = new HashMap<>();

  JobOptions(String[] argv, List<String> accepted) {
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (!accepted.contains(a)) {
        throw new UsageError("unknown option '" + a + "'; expected " + String.join(", ", accepted));
      }
      if (i + 1 >= argv.length) {
        throw new UsageError(a + " needs a value");
      }
      if (accepted.contains(argv[i + 1])) {
        // a value left out would otherwise take the next option's name as the value, and its value as an option
        throw new UsageError(a + " needs a value, not the option '" + argv[i + 1] + "'");
      }
      if (argv[i + 1].isBlank()) {
        throw new UsageError(a + " is empty; expected a value");
      }
      String previous = values.put(a, argv[++i]);
      if (previous != null) {
        throw new UsageError(a + " is given twice ('" + previous + "' and '" + argv[i] + "'); expected it once");
      }
    }
  }

  String require(String name) {
    String v = values.get(name);
    if (v == null) {
      throw new UsageError(name + " is required");
    }
    return v;
  }

  String getOr(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  int positiveInt(String name) {
    String v = require(name);
    try {
      // decimal ASCII digits only: Integer.parseInt also takes +8, 08 and other scripts' digits
      int n = v.trim().matches("[1-9][0-9]{0,9}") ? Integer.parseInt(v.trim()) : 0;
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below with what was expected
    }
    throw new UsageError(name + " = '" + v + "'; expected an integer >= 1");
  }

  /** A mistake on the command line: exit status 2. */
  static final class UsageError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageError(String message) {
      super(message);
    }
  }
}
