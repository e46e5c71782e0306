package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.BackendSelector;
import dev.maxsim4j.internal.ShardedBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The multi-device path on CPU backends: a MaxSim sharded over 2 and 3 backends (equal parts, and capacities
 * too small for equal parts, 3:0:1, that leave a shard empty) answers every call with the same bits as one backend.
 */
class ShardedBackendTest {
  private static MaxSim one;
  private static final List<MaxSim> sharded = new ArrayList<>();

  @BeforeAll
  static void open() {
    one = MaxSim.over(BackendSelector.create("cpu", 1));
    sharded.add(MaxSim.over(ShardedBackend.equalParts(cpus(2))));
    sharded.add(MaxSim.over(ShardedBackend.equalParts(cpus(3))));
    long[] weights = {3, 0, 1}; // bytes: no equal part fits, so the shards follow the capacities, one empty
    List<Backend> three = cpus(3);
    ToLongFunction<Backend> capacity = b -> weights[three.indexOf(b)];
    sharded.add(MaxSim.over(new ShardedBackend(three, capacity)));
  }

  @AfterAll
  static void close() {
    one.close();
    sharded.forEach(MaxSim::close);
  }

  private static List<Backend> cpus(int n) {
    List<Backend> b = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      b.add(BackendSelector.create("cpu", 1));
    }
    return b;
  }

  @Test
  void inferenceOverEveryLayoutAndTypeEqualsOneBackend() {
    RandomBatches r = new RandomBatches();
    for (DType type : DType.values()) {
      TokenBatch q = r.padded(type.isQuantized() ? DType.BFLOAT16 : type, 3, 9, 40, 1);
      List<TokenBatch> corpora = List.of(r.padded(type, 23, 13, 40, 0), r.padded(type, 17, 13, 40, 1),
          r.padded(type, 19, 13, 40, 2), r.packed(type, 21, 0, 30, 40, true), r.packed(type, 2, 1, 9, 40, false));
      for (int c = 0; c < corpora.size(); c++) {
        for (int m = 0; m < sharded.size(); m++) {
          ShardingChecks.inference(one, sharded.get(m), q, corpora.get(c), true,
              r + " " + type + " corpus " + c + " sharding " + m);
        }
      }
    }
  }

  @Test
  void tiesAcrossShardsGoToTheLowestDocument() {
    float[][] a = {{1, 0}, {0, 1}};
    float[][] b = {{0.5f, 0.5f}};
    TokenBatch d = TokenBatch.of(new float[][][] {b, a, b, a, a, b, a});
    TokenBatch q = TokenBatch.of(new float[][][] {{{1, 0}}, {{0, 1}}});
    for (MaxSim m : sharded) {
      TopK top = m.topK(q, d, 5);
      assertArrayEquals(new int[] {1, 3, 4, 6, 0}, top.indices()[0], m.backendInfo());
      ShardingChecks.assertSameTopK(one.topK(q, d, 5), top, m.backendInfo());
    }
  }

  @Test
  void aCorpusInMemoryIsShardedAsViewsAndScoresTheSame() {
    RandomBatches r = new RandomBatches();
    TokenBatch heap = r.padded(DType.BFLOAT16, 29, 11, 24, 0);
    short[] bits = new short[29 * 11 * 24];
    float[] values = heap.toFloatArray();
    for (int i = 0; i < bits.length; i++) {
      bits[i] = DType.BFLOAT16.narrow(values[i]);
    }
    try (Arena arena = Arena.ofShared()) {
      MemorySegment memory = arena.allocate(2L * bits.length, 2);
      MemorySegment.copy(bits, 0, memory, ValueLayout.JAVA_SHORT_UNALIGNED, 0, bits.length);
      TokenBatch d = TokenBatch.fromMemorySegment(memory, DType.BFLOAT16, 29, 11, 24);
      TokenBatch q = r.padded(DType.BFLOAT16, 4, 5, 24, 1);
      for (MaxSim m : sharded) {
        ShardingChecks.inference(one, m, q, d, true, r + " segment " + m.backendInfo());
      }
    }
  }

  @Test
  void fewerDocumentsOrQueriesThanShards() {
    RandomBatches r = new RandomBatches();
    TokenBatch q = r.padded(DType.FLOAT32, 1, 4, 8, 0);
    TokenBatch d = r.padded(DType.FLOAT32, 1, 6, 8, 0);
    for (MaxSim m : sharded) {
      ShardingChecks.inference(one, m, q, d, true, r + " one document " + m.backendInfo());
      ShardingChecks.training(one, m, q, r.padded(DType.FLOAT32, 1, 6, 8, 1), r.padded(DType.FLOAT32, 2, 6, 8, 2),
          2, true, r + " one query " + m.backendInfo());
    }
  }

  @Test
  void trainingSplitsByQueriesWithTheSameBits() {
    RandomBatches r = new RandomBatches();
    for (DType type : new DType[] {DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16}) {
      int nq = 7;
      int k = 3;
      TokenBatch q = r.padded(type, nq, 12, 33, 2);
      List<TokenBatch[]> docs = List.of(new TokenBatch[] {r.padded(type, nq, 9, 33, 1), r.padded(type, nq * k, 9,
          33, 2)}, new TokenBatch[] {r.packed(type, nq, 0, 14, 33, true), r.packed(type, nq * k, 1, 14, 33, true)});
      for (TokenBatch[] pair : docs) {
        for (MaxSim m : sharded) {
          ShardingChecks.training(one, m, q, pair[0], pair[1], k, true, r + " " + type + " " + m.backendInfo());
        }
      }
    }
  }

  @Test
  void describesEveryDeviceAndKeepsTheFirstOnesName() {
    MaxSim m = sharded.get(0);
    assertEquals(one.backendName(), m.backendName());
    assertTrue(m.backendInfo().contains("2 devices: "), m.backendInfo());
  }

  @Test
  void aClosedShardedMaxSimRefusesCallsAndItsResidentBatchesCloseQuietly() {
    MaxSim m = MaxSim.over(ShardedBackend.equalParts(cpus(2)));
    TokenBatch d = new RandomBatches().padded(DType.FLOAT32, 5, 3, 4, 0);
    ResidentBatch resident = m.upload(d);
    m.close();
    assertThrows(IllegalStateException.class, () -> m.scores(d, resident));
    resident.close();
  }

  @Test
  void needsTwoBackends() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ShardedBackend.equalParts(cpus(1)));
    assertTrue(e.getMessage().contains("expected two or more"), e.getMessage());
  }
}
