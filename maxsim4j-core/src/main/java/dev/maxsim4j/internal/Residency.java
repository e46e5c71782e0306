package dev.maxsim4j.internal;

/**
 * Documents a backend keeps ready for repeated scoring (in device memory on a GPU) until this is closed. Closing
 * throws nothing checked, as no backend's release does; closing twice does nothing.
 */
@FunctionalInterface
public interface Residency extends AutoCloseable {
  /** Nothing held: the CPU backends, and a shard without documents. */
  Residency NONE = () -> {};

  /** Gives back what {@link Backend#makeResident} took. */
  @Override
  void close();
}
