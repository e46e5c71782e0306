package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.GpuTest;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A batch copied to the device in pieces ({@link DeviceTokens#uploadInPieces}, the way batches too large to stage
 * whole go) lands as the same bytes as one staged whole: the tokens of every way a batch is held (fp32, bf16 and
 * int8 arrays, native memory), its row arrays, mask, scales and fp16 copy, with pieces that split values and regions
 * at odd places.
 */
@GpuTest
class PiecewiseUploadTest {
  @Test
  void aBatchCopiedInPiecesHoldsTheBytesOfOneStagedWhole() {
    SplittableRandom rnd = new SplittableRandom();
    long seed = rnd.nextLong();
    SplittableRandom r = new SplittableRandom(seed);
    try (CudaDevice device = new CudaDevice(0); Arena arena = Arena.ofShared()) {
      int n = 7;
      int length = 30;
      int dim = 33;
      int values = n * length * dim;
      float[] floats = new float[values];
      for (int i = 0; i < values; i++) {
        floats[i] = (float) r.nextGaussian();
      }
      boolean[] mask = new boolean[n * length];
      for (int i = 0; i < mask.length; i++) {
        mask[i] = r.nextInt(5) != 0;
      }
      TokenBatch f32 = TokenBatch.ofFloats(floats, n, length, dim).withMask(mask);
      short[] bits = new short[values];
      for (int i = 0; i < values; i++) {
        bits[i] = DType.BFLOAT16.narrow(floats[i]);
      }
      TokenBatch bf16 = TokenBatch.ofHalfs(DType.BFLOAT16, bits, n, length, dim);
      MemorySegment held = arena.allocate(2L * values, 2);
      MemorySegment.copy(bits, 0, held, ValueLayout.JAVA_SHORT_UNALIGNED, 0, values);
      TokenBatch nativeBf16 = TokenBatch.fromMemorySegment(held, DType.BFLOAT16, n, length, dim);
      TokenBatch int8 = f32.quantize(DType.INT8);
      TokenBatch query = TokenBatch.ofHalfs(DType.BFLOAT16, java.util.Arrays.copyOf(bits, 32 * dim), 1, 32, dim);
      String where = "seed " + seed;
      for (long piece : new long[] {1, 7, 4096, 65541, 1L << 20}) {
        assertSameBytes(device, Internals.tokens(f32), false, piece, where + ", fp32 with a mask");
        assertSameBytes(device, Internals.tokens(bf16), false, piece, where + ", bf16");
        assertSameBytes(device, Internals.tokens(nativeBf16), false, piece, where + ", bf16 in native memory");
        assertSameBytes(device, Internals.tokens(int8), false, piece, where + ", int8 with scales");
        Tokens q = Internals.tokens(query);
        assertTrue(HalfOperands.bytes(q) > 0, "the query batch has an fp16 copy");
        assertSameBytes(device, q, true, piece, where + ", bf16 query with its fp16 copy");
      }
    }
  }

  private static void assertSameBytes(CudaDevice device, Tokens t, boolean half, long piece, String where) {
    long bytes = DeviceTokens.bytesFor(t, half);
    long whole = device.allocate(bytes);
    long pieces = device.allocate(bytes);
    try {
      DeviceTokens a = DeviceTokens.upload(device, t, whole, half);
      DeviceTokens b = DeviceTokens.uploadInPieces(t, pieces, half, device::pinned, device.stream, piece);
      String at = where + ", pieces of " + piece + " bytes";
      assertEquals(a.rows(), b.rows(), at);
      assertEquals(a.storedTokens(), b.storedTokens(), at);
      assertEquals(a.maxLength(), b.maxLength(), at);
      assertRegion(device, a.data(), b.data(), (long) t.storedTokens * t.tokenBytes, whole, pieces, at + ": tokens");
      assertRegion(device, a.rowStart(), b.rowStart(), 4L * t.rows, whole, pieces, at + ": row starts");
      assertRegion(device, a.rowLength(), b.rowLength(), 4L * t.rows, whole, pieces, at + ": row lengths");
      assertRegion(device, a.validCount(), b.validCount(), 4L * t.rows, whole, pieces, at + ": valid counts");
      assertRegion(device, a.mask(), b.mask(), t.storedTokens, whole, pieces, at + ": mask");
      assertRegion(device, a.scales(), b.scales(), 4L * t.storedTokens, whole, pieces, at + ": scales");
      if (half) {
        assertNotNull(b.halfOperands(), at + ": fp16 copy");
        // the values and the weights, not the alignment between them (what staging memory held before)
        assertRegion(device, a.halfOperands().data(), b.halfOperands().data(), 2L * t.storedTokens * t.dim, whole,
            pieces, at + ": fp16 copy");
        assertRegion(device, a.halfOperands().scales(), b.halfOperands().scales(), 4L * t.storedTokens, whole, pieces,
            at + ": fp16 copy's weights");
      }
    } finally {
      device.release(whole, bytes);
      device.release(pieces, bytes);
    }
  }

  /** The {@code bytes} at {@code a} and {@code b} are equal, each at the same offset in its own copy. */
  private static void assertRegion(CudaDevice device, long a, long b, long bytes, long wholeBase, long piecesBase,
      String where) {
    if (a == 0 || b == 0) {
      assertEquals(a, b, where + ": absent from one copy only");
      return;
    }
    assertEquals(a - wholeBase, b - piecesBase, where + ": offset");
    MemorySegment host = device.pinned(2 * bytes);
    Driver.copyToHost(host.asSlice(0, bytes), a, bytes, device.stream);
    Driver.copyToHost(host.asSlice(bytes, bytes), b, bytes, device.stream);
    Driver.synchronize(device.stream);
    assertArrayEquals(host.asSlice(0, bytes).toArray(ValueLayout.JAVA_BYTE),
        host.asSlice(bytes, bytes).toArray(ValueLayout.JAVA_BYTE), where);
  }
}
