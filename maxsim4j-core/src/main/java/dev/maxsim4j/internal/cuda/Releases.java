package dev.maxsim4j.internal.cuda;

/**
 * Release steps run in turn, each whatever the steps before it did, so that one failure leaves nothing else
 * unreleased: {@link #throwIfFailed} then throws the first failure with the others suppressed.
 */
final class Releases {
  private Throwable first;

  void run(Runnable step) {
    try {
      step.run();
    } catch (RuntimeException | Error e) {
      if (first == null) {
        first = e;
      } else if (first != e) {
        first.addSuppressed(e);
      }
    }
  }

  /** {@code primary}, with the first failure (and so the others) suppressed in it. */
  <E extends Throwable> E suppressedIn(E primary) {
    if (first != null) {
      primary.addSuppressed(first);
    }
    return primary;
  }

  void throwIfFailed() {
    if (first instanceof RuntimeException r) {
      throw r;
    }
    if (first instanceof Error e) {
      throw e;
    }
  }
}
