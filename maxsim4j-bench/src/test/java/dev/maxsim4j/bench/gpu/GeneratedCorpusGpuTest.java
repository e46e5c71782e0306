package dev.maxsim4j.bench.gpu;

import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.Synthetic;
import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.CudaBackend;
import dev.maxsim4j.internal.cuda.PinnedHostMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The bench's fill kernel, launched through the core's device access: every value is the hash of its seed and
 * index that maxsim_fill.cu computes (so the arguments reach it in order), a shard continues the whole corpus, and
 * top-k over the corpus on the device equals top-k over its host copy.
 */
@Tag("gpu")
class GeneratedCorpusGpuTest {
  private static final int DOCUMENTS = 300;
  private static final int LENGTH = 7;
  private static final int DIM = 33;
  private static CudaBackend cuda;

  @BeforeAll
  static void open() {
    if (CudaBackend.unavailableReason().isEmpty()) {
      cuda = new CudaBackend(1);
    }
  }

  /** Each test is reported skipped, with the reason, where there is no usable GPU. */
  @BeforeEach
  void requireGpu() {
    Optional<String> reason = CudaBackend.unavailableReason();
    assumeTrue(reason.isEmpty(), () -> "GPU test skipped: " + reason.orElse(""));
  }

  @AfterAll
  static void close() {
    if (cuda != null) {
      cuda.close();
    }
  }

  /** The bf16 bits maxsim_fill.cu writes at element {@code i} of the corpus of {@code seed}. */
  private static short expected(long seed, long i, float scale) {
    long x = seed * 0x9e3779b97f4a7c15L + i;
    x ^= x >>> 30;
    x *= 0xbf58476d1ce4e5b9L;
    x ^= x >>> 27;
    x *= 0x94d049bb133111ebL;
    x ^= x >>> 31;
    float u = (float) (x >>> 40) * (1.0f / 16777216.0f);
    return DType.BFLOAT16.narrow((2.f * u - 1.f) * scale);
  }

  private static short[] hostCopy(GeneratedCorpus corpus) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment host = arena.allocate(corpus.dataBytes(), 2);
      corpus.copyToHost(host);
      return host.toArray(JAVA_SHORT);
    }
  }

  @Test
  void everyValueIsTheHashOfItsSeedAndIndex() {
    float scale = (float) Math.sqrt(3.0 / DIM);
    try (GeneratedCorpus corpus = GeneratedCorpus.generate(cuda, DOCUMENTS, LENGTH, DIM, 5)) {
      short[] values = hostCopy(corpus);
      assertEquals((long) DOCUMENTS * LENGTH * DIM, values.length);
      for (int i = 0; i < values.length; i++) {
        assertEquals(expected(5, i, scale), values[i], "element " + i);
      }
    }
  }

  @Test
  void aShardContinuesTheWholeCorpus() {
    try (GeneratedCorpus whole = GeneratedCorpus.generate(cuda, DOCUMENTS, LENGTH, DIM, 9);
        GeneratedCorpus last = GeneratedCorpus.generate(cuda, 100, LENGTH, DIM, 9, DOCUMENTS - 100)) {
      short[] all = hostCopy(whole);
      short[] shard = hostCopy(last);
      short[] tail = java.util.Arrays.copyOfRange(all, all.length - shard.length, all.length);
      assertArrayEquals(tail, shard);
    }
  }

  @Test
  void topKOnTheDeviceEqualsTopKOverTheHostCopy() {
    Tokens q = Internals.tokens(Synthetic.store(DType.BFLOAT16, Synthetic.fastUnitValues(3, 2 * 32, DIM), 2, 32,
        DIM));
    try (GeneratedCorpus corpus = GeneratedCorpus.generate(cuda, DOCUMENTS, LENGTH, DIM, 11);
        PinnedHostMemory host = cuda.withDevice(d -> d.allocatePinned(corpus.dataBytes()))) {
      corpus.copyToHost(host.segment());
      TopKResult onDevice = corpus.topK(q, 10);
      TopKResult copy = cuda.topK(q, Internals.tokens(TokenBatch.fromMemorySegment(host.segment(), DType.BFLOAT16,
          DOCUMENTS, LENGTH, DIM)), 10);
      assertEquals("yes", GpuScaleBench.sameResult(copy, onDevice));
      assertThrows(IllegalArgumentException.class, () -> corpus.copyToHost(host.segment().asSlice(0, 2)));
    }
  }

  @Test
  void theForwardAloneIsTimedOnTheDevice() {
    Tokens q = Internals.tokens(Synthetic.store(DType.BFLOAT16, Synthetic.fastUnitValues(4, 32, DIM), 1, 32, DIM));
    Tokens other = Internals.tokens(TokenBatch.of(new float[1][32][DIM]));
    try (GeneratedCorpus corpus = GeneratedCorpus.generate(cuda, DOCUMENTS, LENGTH, DIM, 13)) {
      double ms = corpus.forwardMillis(q, 3);
      assertTrue(ms > 0 && ms < 1000, "forward ms " + ms);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> corpus.forwardMillis(other, 1));
      assertEquals("queries of FLOAT32; expected the documents' BFLOAT16", e.getMessage());
    }
  }

  @Test
  void copyBandwidthsArePositive() {
    assertTrue(CopyBandwidth.deviceToDevice(cuda, 1 << 20, 4) > 0);
    try (PinnedHostMemory pinned = cuda.withDevice(d -> d.allocatePinned(1 << 20))) {
      assertTrue(CopyBandwidth.hostToDevice(cuda, pinned, 1 << 18, 8) > 0);
    }
  }
}
