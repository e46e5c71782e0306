package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** quantize stages one token of d floats: a batch of no token has nothing to stage, whatever its d. */
class HostileQuantizeWideTest {
  @Test
  void aBatchOfNoTokenQuantizesWhateverItsDimension() {
    int d = Integer.MAX_VALUE; // bytesPerToken fits; a float[d] passes the JVM's array limit
    TokenBatch empty = TokenBatch.ofBytes(DType.BINARY, new byte[0], null, 2, 0, d);
    for (DType type : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      TokenBatch q = empty.quantize(type);
      assertEquals(d, q.dim(), type.toString());
      assertEquals(2, q.size(), type.toString());
      assertEquals(0, q.scales().length, type.toString());
    }
    TokenBatch packed = TokenBatch.packedFromMemorySegment(MemorySegment.ofArray(new byte[0]), DType.INT8, null,
        new int[] {0, 0}, d);
    assertEquals(0, packed.quantize(DType.BINARY).toByteArray().length);
  }

  @Test
  void aTokenTooWideToStageIsRefusedByName() {
    int d = Integer.MAX_VALUE;
    // one BINARY token of d bits claims 256 MiB; the check comes before any byte is read
    MemorySegment claimed = Arena.ofAuto().allocate(16).reinterpret(DType.BINARY.bytesPerToken(d));
    TokenBatch wide = TokenBatch.fromMemorySegment(claimed, DType.BINARY, null, 1, 1, d);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> wide.quantize(DType.BINARY));
    assertTrue(e.getMessage().contains("quantize") && e.getMessage().contains(String.valueOf(d)), e.getMessage());
  }
}
