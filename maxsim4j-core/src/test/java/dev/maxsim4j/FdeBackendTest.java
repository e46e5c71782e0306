package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.internal.BackendSelector;
import dev.maxsim4j.internal.ShardedBackend;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * FDE encodings through a MaxSim on the CPU backends, one and sharded: bit for bit the encoder's own, with the
 * encoder's checks and messages.
 */
class FdeBackendTest {
  private static MaxSim cpu;
  private static MaxSim sharded;

  @BeforeAll
  static void open() {
    cpu = MaxSim.builder().backend("cpu").threads(2).build();
    sharded = MaxSim.over(ShardedBackend.equalParts(List.of(BackendSelector.create("cpu", 1),
        BackendSelector.create("scalar", 1), BackendSelector.create("reference", 1))));
  }

  @AfterAll
  static void close() {
    cpu.close();
    sharded.close();
  }

  static List<FdeCases.Case> cases() {
    return FdeCases.cases();
  }

  @ParameterizedTest
  @MethodSource("cases")
  void equalsTheEncoderBitForBit(FdeCases.Case c) {
    float[][] queries = c.encoder().encodeQueries(c.batch());
    float[][] documents = c.encoder().encodeDocuments(c.batch());
    for (MaxSim m : new MaxSim[] {cpu, sharded}) {
      String on = c + " on " + m.backendName();
      FdeCases.assertSameEncodings(queries, m.encodeQueries(c.encoder(), c.batch()), on + ", queries");
      FdeCases.assertSameEncodings(documents, m.encodeDocuments(c.encoder(), c.batch()), on + ", documents");
    }
  }

  @Test
  void checksAsTheEncoderDoes() {
    FixedDimensionalEncoder e = FixedDimensionalEncoder.builder(8).build();
    TokenBatch wrong = new RandomBatches().padded(DType.FLOAT32, 2, 3, 5, 0);
    assertEquals(assertThrows(IllegalArgumentException.class, () -> e.encodeDocuments(wrong)).getMessage(),
        assertThrows(IllegalArgumentException.class, () -> cpu.encodeDocuments(e, wrong)).getMessage());
    assertEquals(assertThrows(IllegalArgumentException.class, () -> e.encodeQueries(null)).getMessage(),
        assertThrows(IllegalArgumentException.class, () -> cpu.encodeQueries(e, null)).getMessage());
    IllegalArgumentException noEncoder = assertThrows(IllegalArgumentException.class,
        () -> cpu.encodeQueries(null, wrong));
    assertEquals(true, noEncoder.getMessage().startsWith("encoder"), noEncoder.getMessage());
  }

  @Test
  void anEmptyBatchEncodesToNoRows() {
    FixedDimensionalEncoder e = FixedDimensionalEncoder.builder(4).build();
    TokenBatch none = TokenBatch.ofFloats(new float[0], 0, 3, 4);
    assertEquals(0, cpu.encodeDocuments(e, none).length);
    assertEquals(0, sharded.encodeQueries(e, none).length);
  }

  @Test
  void aClosedMaxSimRefuses() {
    MaxSim m = MaxSim.builder().backend("cpu").threads(1).build();
    m.close();
    TokenBatch b = new RandomBatches().padded(DType.FLOAT32, 1, 2, 4, 0);
    assertThrows(IllegalStateException.class, () -> m.encodeDocuments(FixedDimensionalEncoder.builder(4).build(), b));
  }
}
