package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.ShardedBackend;
import dev.maxsim4j.internal.cuda.CudaBackend;
import dev.maxsim4j.internal.cuda.CudaDevices;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two GPUs of one host against the first alone: every call within fp32 rounding (kernels are chosen by shape, so
 * a shard may run another kernel than the whole batch), top-k consistent with the scores, resident batches split
 * equally or, where halves do not fit, by free memory. Skipped, with the reason, where fewer than two GPUs are visible.
 */
@GpuTest
class MultiGpuTest {
  private static MaxSim one;
  private static MaxSim two;

  @BeforeAll
  static void open() {
    int visible = CudaDevices.visible();
    assumeTrue(visible >= 2, "multi-GPU test skipped: " + visible + " GPU visible; it needs 2");
    one = MaxSim.over(new CudaBackend(2, 0));
    two = MaxSim.over(new ShardedBackend(List.of(new CudaBackend(2, 0), new CudaBackend(2, 1)),
        b -> ((CudaBackend) b).freeBytes()));
  }

  @AfterAll
  static void close() {
    if (one != null) {
      one.close();
      two.close();
    }
  }

  @Test
  void everyCallOnTwoDevicesMatchesOne() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.BFLOAT16, DType.FLOAT16, DType.FLOAT32, DType.INT8, DType.BINARY}) {
      TokenBatch q = r.padded(type.isQuantized() ? DType.BFLOAT16 : type, 5, 32, 128, 1);
      for (TokenBatch d : List.of(r.padded(type, 301, 64, 128, 0), r.packed(type, 257, 0, 120, 128, true))) {
        ShardingChecks.inference(one, two, q, d, false, r + " " + type);
      }
      if (!type.isQuantized()) {
        ShardingChecks.training(one, two, q, r.padded(type, 5, 40, 128, 2), r.packed(type, 20, 1, 60, 128, true), 4,
            false, r + " " + type + " training");
      }
    }
  }

  @Test
  void residentShardsFollowEachDevicesFreeMemoryWhereEqualPartsDoNotFit() {
    List<Backend> devices = ((ShardedBackend) two.backend()).backends();
    CudaBackend first = (CudaBackend) devices.get(0);
    CudaBackend second = (CudaBackend) devices.get(1);
    long[] before = {first.allocatedBytes().held(), second.allocatedBytes().held()};
    first.limitMemory(first.allocatedBytes().held() + (100L << 20));
    second.limitMemory(second.allocatedBytes().held() + (60L << 20));
    try {
      TokenBatch d = new RandomBatches().padded(DType.BFLOAT16, 2000, 300, 128, 0); // 154 MB: halves exceed 60 MB
      try (ResidentBatch resident = two.upload(d)) {
        long a = first.allocatedBytes().held() - before[0];
        long b = second.allocatedBytes().held() - before[1];
        assertTrue(a > b * 3 / 2 && b > 40L << 20 && b <= 60L << 20, "shards of " + a + " and " + b
            + " bytes; expected about 100:60");
      }
      assertEquals(before[0], first.allocatedBytes().held(), "the first shard freed");
      assertEquals(before[1], second.allocatedBytes().held(), "the second shard freed");
    } finally {
      first.limitMemory(0);
      second.limitMemory(0);
    }
  }

  @Test
  void theCudaBackendUsesEveryVisibleDeviceOrThoseNamed() {
    try (MaxSim all = MaxSim.builder().backend("cuda").build()) {
      assertTrue(all.backendInfo().contains(CudaDevices.visible() + " devices: "), all.backendInfo());
    }
    System.setProperty(CudaDevices.PROPERTY, "1");
    try (MaxSim second = MaxSim.builder().backend("cuda").build()) {
      assertTrue(second.backend() instanceof CudaBackend c && c.ordinal() == 1, second.backendInfo());
    } finally {
      System.clearProperty(CudaDevices.PROPERTY);
    }
  }
}
