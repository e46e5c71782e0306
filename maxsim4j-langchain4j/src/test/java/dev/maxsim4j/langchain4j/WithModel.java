package dev.maxsim4j.langchain4j;

import dev.maxsim4j.MaxSim;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Tests that need the model and a CPU MaxSim: loaded once per test class, closed after it. */
abstract class WithModel {
  static MiniLmTokenEncoder encoder;
  static MaxSim maxSim;

  @BeforeAll
  static void load() {
    encoder = MiniLmTokenEncoder.load();
    maxSim = MaxSim.builder().backend("cpu").threads(2).build();
  }

  @AfterAll
  static void close() {
    maxSim.close();
    encoder.close();
  }
}
