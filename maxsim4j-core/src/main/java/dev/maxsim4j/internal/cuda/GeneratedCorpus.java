package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;

/**
 * A bf16 document corpus made on the device for measurements at scale (maxsim_fill.cu): {@code documents}
 * documents of {@code length} tokens of {@code dim} values, uniform in +-sqrt(3 / dim) (tokens of unit norm on
 * average), a function of the seed only, never on the host. Made and used through {@link CudaBackend}; close it
 * to free the device memory.
 */
public final class GeneratedCorpus implements AutoCloseable {
  private static final String FILL = "maxsim_fill";
  private static final int FILL_THREADS = 256;
  /** Blocks per SM of the fill's grid-stride loop: enough to keep every SM's stores in flight. */
  private static final int FILL_BLOCKS_PER_SM = 16;
  /** The odd multiplier of the seed in maxsim_fill.cu: element i is a hash of {@code seed * M + i} (mod 2^64). */
  private static final long SEED_MULTIPLIER = 0x9e3779b97f4a7c15L;

  final DeviceTokens tokens;
  final long pointer;
  final long bytes;
  private final CudaBackend owner;
  /** Why it may no longer be used (closed, or its backend closed), or null; set under its backend's lock. */
  private volatile String closedBecause;

  private GeneratedCorpus(DeviceTokens tokens, long pointer, long bytes, CudaBackend owner) {
    this.tokens = tokens;
    this.pointer = pointer;
    this.bytes = bytes;
    this.owner = owner;
  }

  /** Allocates and fills a corpus on {@code device}; the caller holds the backend's lock. */
  static GeneratedCorpus generate(CudaDevice device, KernelParams params, CudaBackend owner, int documents,
      int length, int dim, long seed) {
    if (documents < 1 || length < 1 || dim < 1) {
      throw new IllegalArgumentException("corpus of " + documents + " x " + length + " x " + dim
          + "; expected documents, length and dim >= 1");
    }
    if ((long) documents * length > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("corpus of " + documents + " x " + length + " tokens; expected at most "
          + Integer.MAX_VALUE + " tokens (token indices are int)");
    }
    int tokens = documents * length;
    int[] start = new int[documents];
    int[] len = new int[documents];
    for (int i = 0; i < documents; i++) {
      start[i] = i * length;
      len[i] = length;
    }
    // no storage on the host: only the rows, which stageMetadata lays out as every device batch has them
    Tokens rows = new Tokens(DType.BFLOAT16, dim, length, start, len, tokens, null, null, null, MemorySegment.NULL);
    long bytes = DeviceTokens.bytesFor(rows);
    long region = DeviceTokens.dataRegion(rows);
    long p = device.allocate(bytes);
    try {
      MemorySegment stage = device.pinned(bytes - region);
      DeviceTokens t = DeviceTokens.stageMetadata(rows, p, stage.asSlice(0, bytes - region));
      Driver.copyToDevice(p + region, stage, bytes - region, device.stream);
      params.set(new KernelArgs.FillBf16(p, (long) tokens * dim, seed, (float) Math.sqrt(3.0 / dim)));
      Driver.launch(device.function(FILL, "maxsim_fill_bf16"), "maxsim_fill_bf16",
          device.multiprocessors * FILL_BLOCKS_PER_SM, 1, FILL_THREADS, 0, device.stream, params.pointers());
      Driver.synchronize(device.stream);
      return new GeneratedCorpus(t, p, bytes, owner);
    } catch (RuntimeException | Error e) {
      // the copy or the fill may still be queued: freed once nothing can write it, the first failure kept
      Releases releases = new Releases();
      releases.run(() -> Driver.synchronize(device.stream));
      releases.run(() -> device.release(p, bytes));
      releases.suppressedIn(e);
      throw e;
    }
  }

  /**
   * The seed whose corpus begins as the corpus of {@code seed} does at element {@code firstElement}, so that
   * shards generated on several devices are, together, the corpus one device would generate: M is odd, so
   * {@code seed + firstElement / M} (mod 2^64) hashes to {@code seed * M + firstElement}.
   */
  public static long seedFrom(long seed, long firstElement) {
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

  public int documents() {
    return tokens.rows();
  }

  public int length() {
    return tokens.maxLength();
  }

  public int dim() {
    return tokens.dim();
  }

  /** Bytes of the tokens (bf16), without the row arrays: what a host copy holds. */
  public long dataBytes() {
    return 2L * tokens.storedTokens() * tokens.dim();
  }

  /** Whether it has been closed, or its backend has. */
  boolean closed() {
    return closedBecause != null;
  }

  /** Marks it freed, for the reason {@code why} that later uses throw; the backend frees the memory. */
  void markClosed(String why) {
    closedBecause = why;
  }

  /**
   * The device tokens, for a call of {@code backend}; throws {@link IllegalArgumentException} where another backend
   * made it (its memory is in another context, maybe on another GPU) and {@link IllegalStateException} once it or
   * its backend is closed.
   */
  DeviceTokens open(CudaBackend backend) {
    String why = closedBecause;
    if (why != null) {
      throw new IllegalStateException(why);
    }
    if (backend != owner) {
      throw new IllegalArgumentException("corpus generated by another backend instance (" + owner + "); expected"
          + " one generated by this one (" + backend + "): a corpus lives in its backend's device context");
    }
    return tokens;
  }

  /** Frees the device memory; closing it again, or after its backend closed, does nothing. */
  @Override
  public void close() {
    owner.release(this);
  }
}
