package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Reading a batch whose MemorySegment's arena was closed names the cause, outside MaxSim's calls too. */
class HostileClosedMemoryTest {

  private static void namesTheClosedMemory(Executable call) {
    IllegalStateException e = assertThrows(IllegalStateException.class, call);
    assertTrue(e.getMessage().contains("MemorySegment whose arena was closed"), e.getMessage());
  }

  @Test
  void everyReaderNamesTheClosedArena() {
    Arena arena = Arena.ofShared();
    MemorySegment memory = arena.allocate(4L * 2 * 3 * 4);
    TokenBatch floats = TokenBatch.fromMemorySegment(memory, DType.FLOAT32, 2, 3, 4);
    TokenBatch bytes = TokenBatch.fromMemorySegment(memory, DType.INT8, null, 2, 3, 16);
    arena.close();
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(4).build();
    namesTheClosedMemory(floats::toFloatArray);
    namesTheClosedMemory(() -> floats.get(1, 2, 3));
    namesTheClosedMemory(floats::l2Normalized);
    namesTheClosedMemory(() -> floats.quantize(DType.INT8));
    namesTheClosedMemory(bytes::toByteArray);
    namesTheClosedMemory(() -> encoder.encodeQueries(floats));
    namesTheClosedMemory(() -> encoder.encodeDocuments(floats));
    try (MaxSim maxSim = MaxSim.builder().backend("scalar").threads(1).build()) {
      namesTheClosedMemory(() -> maxSim.encodeQueries(encoder, floats));
    }
  }
}
