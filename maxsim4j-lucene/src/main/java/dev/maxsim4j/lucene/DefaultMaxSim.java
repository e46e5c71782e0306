package dev.maxsim4j.lucene;

import dev.maxsim4j.MaxSim;

/**
 * The MaxSim instance the convenience factories score with: created on first use (backend chosen
 * automatically, all processors) and kept for the life of the JVM, its threads daemons. Pass your own
 * instance to control its lifetime.
 */
final class DefaultMaxSim {
  private DefaultMaxSim() {}

  private static MaxSim instance;

  /**
   * The instance, created on the first call that succeeds: a creation that fails (a bad maxsim4j.threads or
   * maxsim4j.backend) reaches the caller as MaxSim throws it, and a later call tries again, where a class
   * initialiser would give an ExceptionInInitializerError and then NoClassDefFoundError for good.
   */
  static synchronized MaxSim get() {
    if (instance == null) {
      instance = MaxSim.create();
    }
    return instance;
  }
}
