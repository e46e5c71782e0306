package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;

/**
 * Documents of equal length laid out on the device for their values to be written there, by a kernel of another
 * jar or by copies: {@code documents} rows of {@code length} tokens of {@code dim} bf16 values, with no host copy.
 * The benchmarks at scale generate tens of GB this way where they are scored. Made through
 * {@link DeviceAccess#allocateDocuments}, scored by {@link CudaBackend#topK(Tokens, DeviceDocuments, int)}; close
 * it to free the device memory (closing its backend frees it too).
 */
public final class DeviceDocuments implements AutoCloseable {
  final DeviceTokens tokens;
  final long pointer;
  final long bytes;
  private final CudaBackend owner;
  /** Why it may no longer be used (closed, or its backend closed), or null; set under its backend's lock. */
  private volatile String closedBecause;

  private DeviceDocuments(DeviceTokens tokens, long pointer, long bytes, CudaBackend owner) {
    this.tokens = tokens;
    this.pointer = pointer;
    this.bytes = bytes;
    this.owner = owner;
  }

  /** Allocates the rows on {@code device}, their values unwritten; the caller holds the backend's lock. */
  static DeviceDocuments allocate(CudaDevice device, CudaBackend owner, int documents, int length, int dim) {
    if (documents < 1 || length < 1 || dim < 1) {
      throw new IllegalArgumentException("documents of " + documents + " x " + length + " x " + dim
          + "; expected documents, length and dim >= 1");
    }
    if ((long) documents * length > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("documents of " + documents + " x " + length + " tokens; expected at most "
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
      Driver.synchronize(device.stream);
      return new DeviceDocuments(t, p, bytes, owner);
    } catch (RuntimeException | Error e) {
      // the copy may still be queued: freed once nothing can read it, the first failure kept
      Releases releases = new Releases();
      releases.run(() -> Driver.synchronize(device.stream));
      releases.run(() -> device.release(p, bytes));
      releases.suppressedIn(e);
      throw e;
    }
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

  /** The device address of the tokens: {@link #dataBytes} of bf16 values, row after row, written by the caller. */
  public long dataAddress() {
    String why = closedBecause;
    if (why != null) {
      throw new IllegalStateException(why);
    }
    return tokens.data();
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
      throw new IllegalArgumentException("documents allocated by another backend instance (" + owner + "); expected"
          + " ones allocated by this one (" + backend + "): they live in their backend's device context");
    }
    return tokens;
  }

  /** Frees the device memory; closing it again, or after its backend closed, does nothing. */
  @Override
  public void close() {
    owner.release(this);
  }
}
