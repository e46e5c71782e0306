package dev.maxsim4j;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.ShardedBackend;
import dev.maxsim4j.internal.cuda.CudaBackend;

/** The CUDA backend of a MaxSim's first GPU, for tests that read one device's memory: sharded over several or not. */
final class GpuDevices {
  private GpuDevices() {}

  static CudaBackend first(MaxSim m) {
    Backend b = m.backend();
    return (CudaBackend) (b instanceof ShardedBackend s ? s.backends().get(0) : b);
  }
}
