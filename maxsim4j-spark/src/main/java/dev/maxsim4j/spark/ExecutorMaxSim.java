package dev.maxsim4j.spark;

import dev.maxsim4j.MaxSim;
import org.apache.spark.SparkEnv;

/**
 * The one {@link MaxSim} of this JVM (an executor, or the driver in local mode), shared by every task: created
 * on first use as {@link MaxSim#create()} creates one everywhere (the GPU backend where the executor has a
 * driver and a device, else the Vector API; system property {@code maxsim4j.backend}, e.g. through
 * {@code spark.executor.extraJavaOptions}), and closed when the JVM exits. One instance per JVM keeps one thread
 * pool and, on a GPU, one CUDA context however many tasks run.
 *
 * <p>Threads: the system property {@code maxsim4j.threads} if set, else the executor's
 * {@code spark.executor.cores} if set (so that executors sharing a host do not each start a thread per core of
 * the host), else every processor the JVM sees. A task's call computes on the task's thread and up to that many
 * less one of the instance's, which concurrent tasks share.
 */
public final class ExecutorMaxSim {
  /** Guards the creation; private, so that no other code holding the class's monitor can stall tasks. */
  private static final Object LOCK = new Object();
  private static MaxSim instance;

  private ExecutorMaxSim() {}

  /** This JVM's instance. */
  public static MaxSim get() {
    synchronized (LOCK) {
      if (instance == null) {
        MaxSim.Builder builder = MaxSim.builder();
        int cores = executorCores();
        if (System.getProperty("maxsim4j.threads") == null && cores > 0) {
          builder.threads(cores);
        }
        MaxSim created = builder.build();
        Runtime.getRuntime().addShutdownHook(new Thread(created::close, "maxsim4j-close"));
        instance = created;
      }
      return instance;
    }
  }

  /** {@code spark.executor.cores} of this JVM's Spark environment; 0 when unset or outside Spark. */
  static int executorCores() {
    SparkEnv env = SparkEnv.get();
    if (env == null || !env.conf().contains("spark.executor.cores")) {
      return 0;
    }
    String value = env.conf().get("spark.executor.cores");
    try {
      int cores = Integer.parseInt(value.trim());
      if (cores >= 1 && cores <= MaxSim.MAX_THREADS) {
        return cores;
      }
    } catch (NumberFormatException e) {
      // Spark itself refuses such a value before any task runs; fall back to the default
    }
    return 0;
  }
}
