package dev.maxsim4j.cli;

import dev.maxsim4j.MaxSim;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** {@code --name value} options and {@code --flag}s, checked against what a command accepts. */
public final class Args {
  /**
   * Decimal integers in ASCII digits, without a sign or leading zeros: Long.parseLong also takes {@code +8},
   * {@code 08} (octal to a C reader) and other scripts' digits, values a user may not have meant.
   */
  private static final Pattern INTEGER = Pattern.compile("-?(0|[1-9][0-9]{0,18})");
  /**
   * Decimal numbers, as in {@code 0.5} or {@code 1e-3} (NaN and Infinity are read, to be refused by range):
   * Double.parseDouble also takes hex and {@code 1f}.
   */
  private static final Pattern NUMBER = Pattern.compile(
      "[+-]?(([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?|NaN|Infinity)");

  private final String command;
  private final Map<String, String> values = new HashMap<>();
  private final Set<String> flags = new HashSet<>();

  public Args(String command, String[] argv, int from, Set<String> valueOptions, Set<String> flagOptions) {
    this("maxsim4j", command, argv, from, valueOptions, flagOptions);
  }

  /** Options whose value is free text, which may look like an option. */
  private static final Set<String> TEXT_OPTIONS = Set.of("--query", "--title");
  /** What an option's name looks like ({@code --8} is a malformed number, named as such by its option). */
  private static final Pattern OPTION_NAME = Pattern.compile("--[A-Za-z][A-Za-z0-9-]*");

  /** As above, for a command of {@code program} (named where an unknown option points to its help). */
  public Args(String program, String command, String[] argv, int from, Set<String> valueOptions,
      Set<String> flagOptions) {
    this.command = command;
    if (asksForHelp(argv, from, valueOptions)) {
      // help answers before any option is checked: `--backend bogus --help` shows the help, not that usage error
      throw new HelpRequested();
    }
    for (int i = from; i < argv.length; i++) {
      String a = argv[i];
      if (flagOptions.contains(a)) {
        flags.add(a);
      } else if (valueOptions.contains(a)) {
        if (i + 1 >= argv.length) {
          throw new UsageException(command + ": " + a + " needs a value");
        }
        if (valueOptions.contains(argv[i + 1]) || flagOptions.contains(argv[i + 1]) || argv[i + 1].equals("--help")) {
          // taken as the value, the next option would name a file, and its own value then be an unknown option;
          // "-h" stays a value (a search for "-h"), "--help" is never one
          throw new UsageException(command + ": " + a + " needs a value, not the option " + argv[i + 1]);
        }
        if (OPTION_NAME.matcher(argv[i + 1]).matches() && !TEXT_OPTIONS.contains(a)) {
          // an option of another command, taken as the value, would leave its own value as an "unknown option"
          throw new UsageException(command + ": " + a + " needs a value, not '" + argv[i + 1] + "' (an option "
              + command + " does not take; see ./" + program + " help)");
        }
        if (argv[i + 1].isEmpty()) {
          // an empty path is the working folder to java.nio: --docs "" would score every shard found there
          throw new UsageException(command + ": " + a + " = ''; expected a non-empty value");
        }
        String previous = values.put(a, argv[++i]);
        if (previous != null) {
          // silently keeping one of two values would act on a file or number the user may not have meant
          throw new UsageException(command + ": " + a + " is given twice ('" + previous + "' and '" + argv[i]
              + "'); expected it once");
        }
        if (a.equals("--backend")) {
          Engine.checkBackend(command, argv[i]);
        }
      } else {
        throw new UsageException(command + ": unknown option '" + a + "' (see ./" + program + " help)");
      }
    }
  }

  /**
   * Whether {@code --help} or {@code -h} stands where an option does (as an option's value {@code -h} is that value,
   * and {@code --help} is refused).
   */
  private static boolean asksForHelp(String[] argv, int from, Set<String> valueOptions) {
    for (int i = from; i < argv.length; i++) {
      if (argv[i].equals("--help") || argv[i].equals("-h")) {
        return true;
      }
      if (valueOptions.contains(argv[i])) {
        i++;
      }
    }
    return false;
  }

  /** {@code s} as a decimal integer in ASCII digits; a NumberFormatException for anything else. */
  public static long parseLong(String s) {
    if (!INTEGER.matcher(s).matches()) {
      throw new NumberFormatException("not a decimal integer: '" + s + "'");
    }
    return Long.parseLong(s);
  }

  /** As {@link #parseLong}, within an int's range. */
  public static int parseInt(String s) {
    long n = parseLong(s);
    if (n != (int) n) {
      throw new NumberFormatException("past an int's range: '" + s + "'");
    }
    return (int) n;
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

  /**
   * The name (of a tensor, say) given as {@code option}, or null: refused, naming the option, where this locale's
   * encoding could not read it (U+FFFD under a locale that is not UTF-8); under UTF-8 a U+FFFD may be the name's own.
   */
  public String label(String option) {
    String v = values.get(option);
    String encoding = System.getProperty("sun.jnu.encoding", "UTF-8");
    if (v != null && v.indexOf('\uFFFD') >= 0 && !encoding.equalsIgnoreCase("UTF-8")) {
      throw new UsageException(command + ": " + option + " holds characters this locale's encoding (" + encoding
          + ") cannot read (shown as U+FFFD); expected a UTF-8 locale (e.g. LC_ALL=C.UTF-8) for non-ASCII text");
    }
    return v;
  }

  /**
   * The text given as {@code name}, or null. Under a locale that is not UTF-8 (the C locale of many containers and
   * cron jobs) the JVM reads each byte of a non-ASCII argument it cannot decode as U+FFFD: such text is refused,
   * naming the option, rather than searched for as something the user did not type.
   */
  public String text(String name) {
    String v = label(name);
    if (v != null && v.indexOf('\uFFFD') >= 0) {
      // the JVM reads bytes that are not UTF-8 as U+FFFD, as a file's line of them is refused where it is read
      throw new UsageException(command + ": " + name + " holds U+FFFD, which stands either for bytes that are not"
          + " valid UTF-8 or for the character itself; expected text without it");
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
    return intValue(name, fallback, min, Integer.MAX_VALUE);
  }

  /** {@code --threads}: from 1 to what MaxSim takes; the fallback where it is not given, capped there. */
  public int threads(int fallback) {
    return intValue("--threads", Math.min(fallback, MaxSim.MAX_THREADS), 1, MaxSim.MAX_THREADS);
  }

  public int intValue(String name, int fallback, int min, int max) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    long n;
    try {
      n = parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new UsageException(command + ": " + name + " = '" + v + "'; expected an integer in decimal digits");
    }
    if (n < min || n > max) {
      throw new UsageException(command + ": " + name + " = " + n + "; expected " + min + " <= " + name + " <= " + max);
    }
    return (int) n;
  }

  /** A finite number greater than 0, e.g. a learning rate. */
  public double positiveNumber(String name, double fallback) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    double x;
    try {
      if (!NUMBER.matcher(v.trim()).matches()) {
        throw new NumberFormatException(v);
      }
      x = Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw new UsageException(command + ": " + name + " = '" + v + "'; expected a number");
    }
    if (!(x > 0) || Double.isInfinite(x)) {
      throw new UsageException(command + ": " + name + " = " + v.trim() + "; expected a finite number > 0");
    }
    return x;
  }

  /** As {@link #positiveNumber}, for a value used as a float: one that float rounds to 0 or infinity is refused. */
  public float positiveFloat(String name, float fallback) {
    double x = positiveNumber(name, fallback);
    float f = (float) x;
    if (!(f > 0) || Float.isInfinite(f)) {
      throw new UsageException(command + ": " + name + " = " + values.get(name).trim() + "; expected a number from "
          + Float.MIN_VALUE + " to " + Float.MAX_VALUE + " (a float)");
    }
    return f;
  }
}
