package dev.maxsim4j.cli;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** {@code --name value} options and {@code --flag}s, checked against what a command accepts. */
public final class Args {
  private final String command;
  private final Map<String, String> values = new HashMap<>();
  private final Set<String> flags = new HashSet<>();

  public Args(String command, String[] argv, int from, Set<String> valueOptions, Set<String> flagOptions) {
    this.command = command;
    for (int i = from; i < argv.length; i++) {
      String a = argv[i];
      if (flagOptions.contains(a)) {
        flags.add(a);
      } else if (valueOptions.contains(a)) {
        if (i + 1 >= argv.length) {
          throw new UsageException(command + ": " + a + " needs a value");
        }
        values.put(a, argv[++i]);
      } else {
        throw new UsageException(command + ": unknown option '" + a + "' (see ./maxsim4j help)");
      }
    }
  }

  public String get(String name) {
    return values.get(name);
  }

  public String require(String name) {
    String v = values.get(name);
    if (v == null) {
      throw new UsageException(command + ": " + name + " is required");
    }
    return v;
  }

  public String getOr(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  public boolean has(String flag) {
    return flags.contains(flag);
  }

  public int intValue(String name, int fallback, int min) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n < min) {
        throw new UsageException(command + ": " + name + " = " + n + "; expected >= " + min);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new UsageException(command + ": " + name + " = '" + v + "'; expected an integer");
    }
  }
}
