package dev.maxsim4j.spark;

import dev.maxsim4j.MaxSim;

/**
 * The one {@link MaxSim} of this JVM (an executor, or the driver in local mode), shared by every task: created
 * on first use as {@link MaxSim#create()} creates one everywhere (the GPU backend where the executor has a
 * driver and a device, else the Vector API; system properties {@code maxsim4j.backend} and
 * {@code maxsim4j.threads}, e.g. through {@code spark.executor.extraJavaOptions}), and closed when the JVM
 * exits. One instance per JVM keeps one thread pool and, on a GPU, one CUDA context however many tasks run.
 */
public final class ExecutorMaxSim {
  private static MaxSim instance;

  private ExecutorMaxSim() {}

  /** This JVM's instance. */
  public static synchronized MaxSim get() {
    if (instance == null) {
      MaxSim created = MaxSim.create();
      Runtime.getRuntime().addShutdownHook(new Thread(created::close, "maxsim4j-close"));
      instance = created;
    }
    return instance;
  }
}
