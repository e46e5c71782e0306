package dev.maxsim4j.lucene;

/** Growth of the gathering buffers: doubling, saturated at the longest Java array, never wrapped past an int. */
final class Capacity {
  /** The longest Java array the JVM reliably allocates. */
  static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

  private Capacity() {}

  /**
   * The length a buffer of {@code current} entries grows to so that it holds {@code needed}: twice as long, at
   * least {@code needed}, at most {@link #MAX_ARRAY}; past that an IllegalArgumentException naming {@code what}
   * (e.g. "field f of doc 7: the gathered floats") and the sizes.
   */
  static int grown(int current, long needed, String what) {
    if (needed > MAX_ARRAY) {
      throw new IllegalArgumentException(what + ": " + needed + " entries with this value (" + current
          + " in the buffer before it), more than one Java array holds (" + MAX_ARRAY + "); expected fewer hits"
          + " per block");
    }
    return (int) Math.min(MAX_ARRAY, Math.max(2L * current, needed));
  }
}
