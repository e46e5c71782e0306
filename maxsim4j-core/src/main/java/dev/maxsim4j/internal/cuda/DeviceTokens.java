package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.DType;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.LongFunction;

/**
 * A token batch in device memory, laid out as {@link Tokens} describes it: stored tokens in their dtype (the
 * raw bytes of compressed types), row starts and lengths, valid-token counts, the mask as bytes (absent: 0)
 * and, for compressed types, one fp32 scale per stored token (absent: 0); {@code maxLength} is the longest
 * row, {@code storedTokens} the tokens in {@code data}. {@code halfOperands}: the same rows as fp16 operands, each
 * token's scale its weight ({@link HalfOperands}), for bf16 queries that go there exactly; else null.
 */
record DeviceTokens(DType dtype, int dim, int rows, int maxLength, int storedTokens, long data, long rowStart,
    long rowLength, long validCount, long mask, long scales, DeviceTokens halfOperands) {
  /** The largest batch staged whole. */
  static final long WHOLE_STAGING_BYTES = 256L << 20;
  /** The pinned memory a batch copied in pieces goes through: large enough that each copy runs at full speed. */
  static final long PIECE_BYTES = 64L << 20;

  /** Tokens with no fp16 copy. */
  DeviceTokens(DType dtype, int dim, int rows, int maxLength, int storedTokens, long data, long rowStart,
      long rowLength, long validCount, long mask, long scales) {
    this(dtype, dim, rows, maxLength, storedTokens, data, rowStart, rowLength, validCount, mask, scales, null);
  }

  /** Tokens of an uncompressed type (no scales). */
  DeviceTokens(DType dtype, int dim, int rows, int maxLength, int storedTokens, long data, long rowStart,
      long rowLength, long validCount, long mask) {
    this(dtype, dim, rows, maxLength, storedTokens, data, rowStart, rowLength, validCount, mask, 0L);
  }

  /**
   * Bytes the upload of {@code t} needs without the fp16 copy: data, three int arrays, the mask, the scales, each
   * 256-byte aligned.
   */
  static long bytesFor(Tokens t) {
    return bytesFor(t, false);
  }

  /** As above, with room for the fp16 copy where {@code halfCopy} asks for one and {@code t} may have it. */
  static long bytesFor(Tokens t, boolean halfCopy) {
    return align(dataBytes(t)) + 3 * align(4L * t.rows) + (t.mask == null ? 0 : align(t.storedTokens))
        + (t.dtype.isQuantized() ? align(4L * t.storedTokens) : 0) + (halfCopy ? HalfOperands.bytes(t) : 0);
  }

  private static long dataBytes(Tokens t) {
    return (long) t.storedTokens * t.tokenBytes;
  }

  static long align(long bytes) {
    return (bytes + 255) & ~255L;
  }

  /**
   * Copies {@code t} into {@code device} (a buffer of {@link #bytesFor} bytes) through pinned staging
   * memory, and waits for the copy.
   */
  static DeviceTokens upload(CudaDevice dev, Tokens t, long device) {
    return upload(dev, t, device, false);
  }

  /** As above, with the fp16 copy where {@code halfCopy} asks for one ({@code device} of {@code bytesFor(t, true)}). */
  static DeviceTokens upload(CudaDevice dev, Tokens t, long device, boolean halfCopy) {
    if (inPieces(bytesFor(t, halfCopy))) {
      return uploadInPieces(t, device, halfCopy, dev::pinned, dev.stream, PIECE_BYTES);
    }
    DeviceTokens tokens = uploadAsync(t, device, dev.pinned(bytesFor(t, halfCopy)), dev.stream, halfCopy);
    Driver.synchronize(dev.stream);
    return tokens;
  }

  /**
   * Whether a batch of {@code bytes} (as {@link #bytesFor} counts them) is copied in pieces: staged whole, a corpus of
   * tens of GB would ask for page-locked memory of its size, which may not be there and, once there, stays held
   * until a minute of smaller calls gives it back.
   */
  static boolean inPieces(long bytes) {
    return bytes > WHOLE_STAGING_BYTES;
  }

  /**
   * Copies {@code t} into {@code device} as {@link #uploadAsync} lays it out, {@code pieceBytes} at a time through the
   * pinned memory {@code pinnedFor} gives (which no work queued on {@code stream} may be reading), and waits for it.
   */
  static DeviceTokens uploadInPieces(Tokens t, long device, boolean halfCopy, LongFunction<MemorySegment> pinnedFor,
      Driver.Stream stream, long pieceBytes) {
    long region = dataRegion(t);
    long metadataBytes = bytesFor(t, halfCopy) - region;
    MemorySegment staging = pinnedFor.apply(Math.min(pieceBytes, Math.max(dataBytes(t), metadataBytes)));
    copyInPieces(dataOf(t), device, dataBytes(t), staging, pieceBytes, stream);
    try (Arena arena = Arena.ofConfined()) { // the row arrays, mask and scales, laid out here first
      MemorySegment metadata = arena.allocate(metadataBytes, 8);
      DeviceTokens tokens = stageMetadata(t, device, metadata, halfCopy);
      copyInPieces(metadata, device + region, metadataBytes, staging, pieceBytes, stream);
      return tokens;
    }
  }

  /** {@code t}'s stored tokens as bytes, wherever they are held. */
  private static MemorySegment dataOf(Tokens t) {
    if (t.f32 != null) {
      return MemorySegment.ofArray(t.f32);
    } else if (t.s16 != null) {
      return MemorySegment.ofArray(t.s16);
    } else if (t.s8 != null) {
      return MemorySegment.ofArray(t.s8);
    }
    return t.segment;
  }

  /** The first {@code bytes} of {@code source} to {@code device}, a piece at a time through {@code staging}. */
  private static void copyInPieces(MemorySegment source, long device, long bytes, MemorySegment staging,
      long pieceBytes, Driver.Stream stream) {
    for (long at = 0; at < bytes; at += pieceBytes) {
      long n = Math.min(pieceBytes, bytes - at);
      MemorySegment.copy(source, at, staging, 0, n);
      Driver.copyToDevice(device + at, staging, n, stream);
      Driver.synchronize(stream); // the next piece is written where this one was
    }
  }

  /**
   * Copies {@code t} into {@code device} through {@code staging} (pinned, at least {@link #bytesFor}
   * bytes) asynchronously on the device's stream: the caller must not reuse that staging memory before
   * the stream has passed this copy (one synchronisation at the end of a call does it).
   */
  static DeviceTokens uploadAsync(CudaDevice dev, Tokens t, long device, MemorySegment staging) {
    return uploadAsync(t, device, staging, dev.stream);
  }

  /** As above, the copy queued on {@code stream}. */
  static DeviceTokens uploadAsync(Tokens t, long device, MemorySegment staging, Driver.Stream stream) {
    return uploadAsync(t, device, staging, stream, false);
  }

  /** As above, with the fp16 copy where {@code halfCopy} asks for one (staging of {@code bytesFor(t, true)}). */
  static DeviceTokens uploadAsync(Tokens t, long device, MemorySegment staging, Driver.Stream stream,
      boolean halfCopy) {
    long bytes = bytesFor(t, halfCopy);
    MemorySegment stage = staging.asSlice(0, bytes);
    long dataBytes = dataBytes(t);
    if (t.f32 != null) {
      MemorySegment.copy(t.f32, 0, stage, ValueLayout.JAVA_FLOAT_UNALIGNED, 0, t.f32.length);
    } else if (t.s16 != null) {
      MemorySegment.copy(t.s16, 0, stage, ValueLayout.JAVA_SHORT_UNALIGNED, 0, t.s16.length);
    } else if (t.s8 != null) {
      MemorySegment.copy(t.s8, 0, stage, ValueLayout.JAVA_BYTE, 0, Math.toIntExact(dataBytes));
    } else {
      MemorySegment.copy(t.segment, 0, stage, 0, dataBytes);
    }
    DeviceTokens tokens = stageMetadata(t, device, stage.asSlice(dataRegion(t)), halfCopy);
    Driver.copyToDevice(device, stage, bytes, stream);
    return tokens;
  }

  /** Bytes from the start of {@code t}'s device copy to its row arrays: the data, aligned. */
  static long dataRegion(Tokens t) {
    return align(dataBytes(t));
  }

  /**
   * Writes {@code t}'s row starts, lengths, valid counts, mask, scales and fp16 copy into {@code metadata} (pinned, the
   * {@link #bytesFor} bytes after {@link #dataRegion}) as they lie after the data of its device copy at
   * {@code device}, which the caller fills with the data and then the metadata.
   */
  static DeviceTokens stageMetadata(Tokens t, long device, MemorySegment metadata) {
    return stageMetadata(t, device, metadata, false);
  }

  /** As above, with the fp16 copy after the scales where {@code halfCopy} asks for one and {@code t} fits. */
  static DeviceTokens stageMetadata(Tokens t, long device, MemorySegment metadata, boolean halfCopy) {
    long base = device + dataRegion(t);
    long off = 0;
    long rowStart = base + off;
    MemorySegment.copy(t.rowStart, 0, metadata, ValueLayout.JAVA_INT_UNALIGNED, off, t.rows);
    off += align(4L * t.rows);
    long rowLength = base + off;
    MemorySegment.copy(t.rowLength, 0, metadata, ValueLayout.JAVA_INT_UNALIGNED, off, t.rows);
    off += align(4L * t.rows);
    long validCount = base + off;
    MemorySegment.copy(t.validCount, 0, metadata, ValueLayout.JAVA_INT_UNALIGNED, off, t.rows);
    off += align(4L * t.rows);
    long mask = 0;
    if (t.mask != null) {
      mask = base + off;
      for (int i = 0; i < t.storedTokens; i++) {
        metadata.set(ValueLayout.JAVA_BYTE, off + i, (byte) (t.mask[i] ? 1 : 0));
      }
      off += align(t.storedTokens);
    }
    long scales = 0;
    if (t.dtype.isQuantized()) {
      scales = base + off;
      if (t.scales != null) {
        MemorySegment.copy(t.scales, 0, metadata, ValueLayout.JAVA_FLOAT_UNALIGNED, off, t.storedTokens);
      } else {
        for (int i = 0; i < t.storedTokens; i++) { // no scales: every token's is 1
          metadata.set(ValueLayout.JAVA_FLOAT_UNALIGNED, off + 4L * i, 1f);
        }
      }
      off += align(4L * t.storedTokens);
    }
    DeviceTokens half = null;
    long halfBytes = halfCopy ? HalfOperands.bytes(t) : 0;
    if (halfBytes > 0 && HalfOperands.write(t, metadata.asSlice(off, halfBytes))) {
      half = new DeviceTokens(DType.FLOAT16, t.dim, t.rows, t.maxRowLength, t.storedTokens, base + off, rowStart,
          rowLength, validCount, mask, base + off + HalfOperands.weightsOffset(t));
    }
    return new DeviceTokens(t.dtype, t.dim, t.rows, t.maxRowLength, t.storedTokens, device, rowStart, rowLength,
        validCount, mask, scales, half);
  }
}
