package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** How Main words failures that no command reports itself. */
class MainErrorsTest {
  @Test
  void aLargerHeapIsSuggestedOnlyWhereItHelps() {
    assertTrue(CommandRunner.outOfMemory(new OutOfMemoryError("Java heap space")).contains("raise -Xmx"));
    String array = CommandRunner.outOfMemory(new OutOfMemoryError("Requested array size exceeds VM limit"));
    assertFalse(array.contains("raise -Xmx"), array);
    assertTrue(array.contains("2^31-1"), array);
    String direct = CommandRunner.outOfMemory(new OutOfMemoryError("Cannot reserve 8192 bytes of direct buffer memory"));
    assertFalse(direct.contains("raise -Xmx"), direct);
  }
}
