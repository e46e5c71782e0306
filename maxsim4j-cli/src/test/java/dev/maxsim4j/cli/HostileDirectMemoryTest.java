package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Native memory that quantize allocates for its output (Arena.allocate) is capped by the JDK's direct-memory limit,
 * which is -XX:MaxDirectMemorySize or, unset, the heap's -Xmx: the refusal must say how to raise it.
 */
class HostileDirectMemoryTest {
  @Test
  void directMemoryExhaustionNamesTheLimitAndHowToRaiseIt() {
    // the JDK's own wording, as quantize --to int8 of a 146 MiB float32 file printed it under JAVA_OPTS=-Xmx24m
    String line = CommandRunner.outOfMemory(new OutOfMemoryError(
        "Cannot reserve 38400000 bytes of direct buffer memory (allocated: 0, limit: 25165824)"));
    assertTrue(line.contains("38400000 bytes"), line);
    assertTrue(line.contains("-XX:MaxDirectMemorySize"), line);
    assertTrue(line.contains("-Xmx") && line.contains("JAVA_OPTS"), line);
  }
}
