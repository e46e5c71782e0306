package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import org.junit.jupiter.api.Test;

class HostilePaddingBitsTest {
  @Test
  void paddingBitsOfABinaryValueDoNotScore() {
    float[][] q = {{1, 1, 1, 1, 1}};
    TokenBatch clear = QuantizedLateInteractionField.decode(
        QuantizedLateInteractionField.encode(DType.BINARY, new byte[] {(byte) 0b10100000}, null, 1, 5));
    TokenBatch set = QuantizedLateInteractionField.decode(
        QuantizedLateInteractionField.encode(DType.BINARY, new byte[] {(byte) 0b10100111}, null, 1, 5));
    for (String backend : new String[] {"scalar", "vector"}) {
      try (MaxSim m = MaxSim.builder().backend(backend).threads(1).build()) {
        float a = m.scores(TokenBatch.ofQuery(q), clear)[0][0];
        float b = m.scores(TokenBatch.ofQuery(q), set)[0][0];
        float c = m.scores(TokenBatch.ofQuery(q).quantize(DType.BINARY), set)[0][0];
        float e = m.scores(TokenBatch.ofQuery(q).quantize(DType.BINARY), clear)[0][0];
        assertEquals(a, b, backend + " fp32 query");
        assertEquals(e, c, backend + " binary query");
      }
    }
  }
}
