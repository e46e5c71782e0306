package dev.maxsim4j.cli;

import java.util.Locale;

/** Byte counts for people: B, KiB, MiB, GiB or TiB with one decimal. */
public final class Sizes {
  private Sizes() {}

  public static String of(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double v = bytes;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }
}
