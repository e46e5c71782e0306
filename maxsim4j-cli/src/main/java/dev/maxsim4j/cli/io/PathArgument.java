package dev.maxsim4j.cli.io;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * A path given on the command line. Every option that names a file or folder becomes a path here, so that a name the
 * file system cannot take is refused naming the option: under a locale that is not UTF-8 (the C locale of many
 * containers and cron jobs) a non-ASCII name cannot even be passed to the system, and {@link Path#of} would say
 * only "Malformed input or input contains unmappable characters".
 */
public final class PathArgument {
  private PathArgument() {}

  /** {@code value} given as {@code option}, as a path; an IllegalArgumentException naming both where it is none. */
  public static Path of(String option, String value) {
    try {
      return Path.of(value);
    } catch (InvalidPathException e) {
      String encoding = System.getProperty("sun.jnu.encoding");
      boolean unmappable = e.getReason() != null && e.getReason().contains("unmappable");
      throw new IllegalArgumentException(option + " " + Printable.of(value) + (unmappable
          ? ": this name cannot be given in the file system's encoding (" + encoding + "); expected a name of its"
              + " characters, or a UTF-8 locale (e.g. LC_ALL=C.UTF-8) for any name"
          : " is not a valid path (" + e.getReason() + ")"), e);
    }
  }
}
