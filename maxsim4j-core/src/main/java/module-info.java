/**
 * maxsim4j: fused late-interaction (MaxSim) scoring on the CPU (Vector API) and on NVIDIA GPUs (CUDA through
 * the FFM API). The API is the package {@code dev.maxsim4j}; everything under {@code dev.maxsim4j.internal} is
 * the implementation and may change in any release.
 */
// "module": the bench is built after the core, so javac does not see the module the internals are lent to
@SuppressWarnings("module")
module dev.maxsim4j {
  // static: without the incubator module (not resolved unless asked for, absent from a trimmed runtime) the
  // library still loads and scores with its scalar loops, as it does on the class path
  requires static jdk.incubator.vector;
  // static: the CPU kernels ask the JVM how many vector registers it compiles for, and assume 16 where it cannot say
  requires static jdk.management;

  exports dev.maxsim4j;

  // the bench module reaches the backend behind a MaxSim and the tokens behind a batch through Internals,
  // which the public API deliberately does not offer; the Lucene rescorer runs its strands as PoolTasks
  exports dev.maxsim4j.internal to dev.maxsim4j.bench, dev.maxsim4j.lucene;
  // the bench module borrows the CUDA backend's device (DeviceAccess) for measurements the library does not make:
  // device time by CUDA events, copy bandwidths, corpora generated on the device by a kernel of its own
  exports dev.maxsim4j.internal.cuda to dev.maxsim4j.bench;
}
