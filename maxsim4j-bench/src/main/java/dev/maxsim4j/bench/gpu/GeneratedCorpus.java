package dev.maxsim4j.bench.gpu;

import dev.maxsim4j.internal.Backend.TopKResult;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.CudaBackend;
import dev.maxsim4j.internal.cuda.DeviceAccess;
import dev.maxsim4j.internal.cuda.DeviceDocuments;
import dev.maxsim4j.internal.cuda.LaunchArguments;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

/**
 * A bf16 document corpus made on the device for measurements at scale (src/main/cuda/maxsim_fill.cu):
 * {@code documents} documents of {@code length} tokens of {@code dim} values, uniform in +-sqrt(3 / dim) (tokens of
 * unit norm on average), a function of the seed only, never on the host. Close it to free the device memory.
 */
final class GeneratedCorpus implements AutoCloseable {
  private static final String MODULE = "maxsim_fill";
  private static final String KERNEL = "maxsim_fill_bf16";
  private static final int FILL_THREADS = 256;
  /** Blocks per SM of the fill's grid-stride loop: enough to keep every SM's stores in flight. */
  private static final int FILL_BLOCKS_PER_SM = 16;
  /** The odd multiplier of the seed in maxsim_fill.cu: element i is a hash of {@code seed * M + i} (mod 2^64). */
  private static final long SEED_MULTIPLIER = 0x9e3779b97f4a7c15L;

  private final CudaBackend backend;
  private final DeviceDocuments documents;

  private GeneratedCorpus(CudaBackend backend, DeviceDocuments documents) {
    this.backend = backend;
    this.documents = documents;
  }

  /** The corpus of {@code seed} on {@code backend}'s device. */
  static GeneratedCorpus generate(CudaBackend backend, int documents, int length, int dim, long seed) {
    return new GeneratedCorpus(backend, backend.withDevice(device -> {
      DeviceDocuments made = device.allocateDocuments(documents, length, dim);
      try {
        fill(device, new FillArguments(made.dataAddress(), (long) documents * length * dim, seed,
            (float) Math.sqrt(3.0 / dim)));
        device.synchronize();
        return made;
      } catch (RuntimeException | Error e) {
        try {
          made.close(); // waits for the fill first
        } catch (RuntimeException | Error failed) {
          e.addSuppressed(failed);
        }
        throw e;
      }
    }));
  }

  /**
   * Documents {@code firstDocument ..} of the corpus that {@link #generate(CudaBackend, int, int, int, long)} makes
   * from {@code seed}: the shard of it this device holds when several share the corpus.
   */
  static GeneratedCorpus generate(CudaBackend backend, int documents, int length, int dim, long seed,
      long firstDocument) {
    return generate(backend, documents, length, dim, seedFrom(seed, firstDocument * length * dim));
  }

  /**
   * The parameters of maxsim_fill_bf16, mirrored in name, order and width (GeneratedCorpusTest compares them with
   * the kernel's signature: an argument out of place would fill the wrong memory).
   */
  record FillArguments(long out, long count, long seed, float scale) {
    void writeTo(LaunchArguments a) {
      a.i64(out).i64(count).i64(seed).f32(scale);
    }
  }

  private static void fill(DeviceAccess device, FillArguments arguments) {
    DeviceAccess.Kernel kernel = device.kernel(MODULE, GeneratedCorpus::image, KERNEL);
    device.launch(kernel, device.multiprocessors() * FILL_BLOCKS_PER_SM, FILL_THREADS, arguments::writeTo);
  }

  private static byte[] image() {
    String name = MODULE + ".fatbin";
    try (InputStream in = GeneratedCorpus.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("kernel module " + name + " is missing from the bench jar (built without"
            + " nvcc, or with -Dmaxsim4j.cuda.skip=true)");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read kernel module " + name, e);
    }
  }

  /**
   * The seed whose corpus begins as the corpus of {@code seed} does at element {@code firstElement}, so that
   * shards generated on several devices are, together, the corpus one device would generate: M is odd, so
   * {@code seed + firstElement / M} (mod 2^64) hashes to {@code seed * M + firstElement}.
   */
  static long seedFrom(long seed, long firstElement) {
    return seed + firstElement * inverse(SEED_MULTIPLIER);
  }

  /** The inverse of an odd number mod 2^64, by Newton's iteration (each step doubles the correct low bits). */
  static long inverse(long odd) {
    long x = odd; // odd * odd = 1 mod 8: three bits
    for (int i = 0; i < 5; i++) {
      x *= 2 - odd * x;
    }
    return x;
  }

  /** Bytes of the tokens (bf16), without the row arrays: what a host copy holds. */
  long dataBytes() {
    return documents.dataBytes();
  }

  /** Each query's {@code k} best documents. */
  TopKResult topK(Tokens queries, int k) {
    return backend.topK(queries, documents, k);
  }

  /**
   * The median device milliseconds of {@code repeat} launches of the forward of {@code queries} against the whole
   * corpus alone (CUDA events, after one launch not timed): what a top-k call spends beside it is its selection and
   * the call's own work.
   */
  double forwardMillis(Tokens queries, int repeat) {
    return backend.withDevice(device -> {
      Runnable forward = device.allPairsForward(queries, documents);
      forward.run();
      device.synchronize();
      double[] ms = new double[repeat];
      for (int i = 0; i < repeat; i++) {
        ms[i] = device.millis(forward);
      }
      java.util.Arrays.sort(ms);
      return ms[repeat / 2];
    });
  }

  /** Copies the tokens into {@code destination} (host memory of {@link #dataBytes} at least). */
  void copyToHost(MemorySegment destination) {
    if (destination.byteSize() < dataBytes()) {
      throw new IllegalArgumentException("destination of " + destination.byteSize() + " bytes; expected at least "
          + dataBytes());
    }
    backend.withDevice(device -> {
      device.copyToHost(destination, documents.dataAddress(), dataBytes());
      return null;
    });
  }

  @Override
  public void close() {
    documents.close();
  }
}
