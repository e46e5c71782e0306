package dev.maxsim4j.lucene;

import dev.maxsim4j.MaxSim;

/**
 * The MaxSim instance the convenience factories score with: created on first use (backend chosen
 * automatically, all processors) and kept for the life of the JVM, its threads daemons. Pass your own
 * instance to control its lifetime.
 */
final class DefaultMaxSim {
  private DefaultMaxSim() {}

  private static final class Holder {
    static final MaxSim INSTANCE = MaxSim.create();
  }

  static MaxSim get() {
    return Holder.INSTANCE;
  }
}
