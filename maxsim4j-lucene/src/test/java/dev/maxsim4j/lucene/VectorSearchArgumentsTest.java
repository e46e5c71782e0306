package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.lucene.codecs.Codec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The codec and the k-nearest query refuse bad arguments as the rest of the integration does, naming them. */
class VectorSearchArgumentsTest {
  private static void refused(Executable call, String message) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(message), e.getMessage());
  }

  @Test
  void theCodecNamesTheDimensionsItWasGiven() {
    for (int bad : new int[] {0, -5, WideVectorsCodec.MAX_DIMENSIONS + 1}) {
      refused(() -> WideVectorsCodec.forDimensions(bad), "dimensions = " + bad + "; expected 1 to 65536");
      refused(() -> new WideVectorsCodec(bad), "maxDimensions = " + bad + "; expected 1 to 65536");
    }
    assertEquals(Codec.getDefault(), WideVectorsCodec.forDimensions(1024));
    assertTrue(WideVectorsCodec.forDimensions(1025) instanceof WideVectorsCodec);
  }

  @Test
  void theQueryNamesAMissingFieldOrTarget() {
    refused(() -> new CompleteKnnFloatVectorQuery(null, new float[] {1}, 1), "field");
    refused(() -> new CompleteKnnFloatVectorQuery("f", null, 1), "target");
    refused(() -> new CompleteKnnFloatVectorQuery(null, new float[] {1}, 1, null), "field");
    refused(() -> new CompleteKnnFloatVectorQuery("f", null, 1, null), "target");
  }
}
