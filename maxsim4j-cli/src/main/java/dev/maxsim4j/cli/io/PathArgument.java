package dev.maxsim4j.cli.io;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * A path given on the command line. Every option that names a file or folder becomes a path here, so that a name the
 * file system cannot take is refused naming the option: under a locale that is not UTF-8 (the C locale of many
 * containers and cron jobs) a non-ASCII name cannot even be passed to the system, and {@link Path#of} would say
 * only "Malformed input or input contains unmappable characters"; and a name whose bytes are not valid in that
 * encoding reaches the JVM with U+FFFD in their place, naming another file.
 */
public final class PathArgument {
  private PathArgument() {}

  /** {@code value} given as {@code option}, as a path; an IllegalArgumentException naming both where it is none. */
  public static Path of(String option, String value) {
    String encoding = System.getProperty("sun.jnu.encoding");
    boolean utf8 = "UTF-8".equalsIgnoreCase(encoding);
    try {
      // the JVM decodes each argument's bytes in the file system's encoding, putting U+FFFD for bytes it cannot read:
      // the path would name another file than the one given, and two such names the same file
      // a file named with U+FFFD itself cannot be told from that other name, so neither is taken
      if (value.indexOf('\uFFFD') >= 0 && utf8) {
        throw new IllegalArgumentException(option + " " + Printable.of(value) + " holds U+FFFD, which stands either"
            + " for bytes of the name given that are not valid UTF-8 or for the character itself; expected a name"
            + " without it (rename the file)");
      }
      if (value.indexOf('\uFFFD') >= 0 && !utf8) {
        throw new InvalidPathException(value, "unmappable characters");
      }
      return Path.of(value);
    } catch (InvalidPathException e) {
      boolean unmappable = e.getReason() != null && e.getReason().contains("unmappable");
      throw new IllegalArgumentException(option + " " + Printable.of(value) + (unmappable
          ? ": this name cannot be given in the file system's encoding (" + encoding + "); expected a name of its"
              + " characters, or a UTF-8 locale (e.g. LC_ALL=C.UTF-8) for any name"
          : " is not a valid path (" + e.getReason() + ")"), e);
    }
  }
}
