package dev.maxsim4j.internal;

/**
 * Threads the library starts for its own work. A thread is made by whichever call first needs it (or comes after
 * an idle minute), and would otherwise take that caller's priority, context class loader (keeping it from being
 * unloaded, as in an application server redeploying) and inheritable thread locals; these take none of them.
 */
public final class LibraryThreads {
  private LibraryThreads() {}

  /** An unstarted daemon thread {@code name} running {@code task}, of normal priority and the library's loader. */
  public static Thread unstarted(String name, Runnable task) {
    Thread t = Thread.ofPlatform().name(name).daemon(true).priority(Thread.NORM_PRIORITY)
        .inheritInheritableThreadLocals(false).unstarted(task);
    t.setContextClassLoader(LibraryThreads.class.getClassLoader());
    return t;
  }

  /**
   * Gives a thread made by another API (a fork-join worker, which inherits its maker's inheritable thread locals
   * whatever is asked) normal priority and the library's class loader.
   */
  public static void neutral(Thread t) {
    t.setPriority(Thread.NORM_PRIORITY);
    t.setContextClassLoader(LibraryThreads.class.getClassLoader());
  }
}
