package dev.maxsim4j.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.ResidentBatch;
import dev.maxsim4j.TokenBatch;
import org.junit.jupiter.api.Test;

/** The bridge to the public classes' package-private members: what it returns, and that it is installed once. */
class InternalsTest {
  @Test
  void reachesTheBackendAndTheTokensBehindThePublicTypes() {
    TokenBatch batch = TokenBatch.ofFloats(new float[12], 2, 2, 3);
    Tokens tokens = Internals.tokens(batch);
    assertEquals(3, tokens.dim);
    assertSame(tokens, Internals.tokens(batch), "the batch's own tokens, not a copy");
    try (MaxSim maxSim = MaxSim.builder().backend("reference").threads(1).build();
        MaxSim other = MaxSim.builder().backend("reference").threads(1).build();
        ResidentBatch resident = maxSim.upload(batch)) {
      assertEquals("reference", Internals.backend(maxSim).name());
      assertSame(batch, Internals.batchFor(resident, maxSim));
      assertThrows(IllegalStateException.class, () -> Internals.batchFor(resident, other));
    }
  }

  @Test
  void isInstalledOnceByThePublicPackage() {
    IllegalStateException twice = assertThrows(IllegalStateException.class, () -> Internals.install(
        new Internals.Access() {
          @Override
          public Backend backend(MaxSim maxSim) {
            return null;
          }

          @Override
          public Tokens tokens(TokenBatch batch) {
            return null;
          }

          @Override
          public TokenBatch batchFor(ResidentBatch resident, MaxSim user) {
            return null;
          }
        }));
    assertTrue(twice.getMessage().contains("called twice"), twice.getMessage());
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> Internals.install(null));
    assertTrue(none.getMessage().startsWith("implementation is null"), none.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Internals.backend(null));
  }
}
