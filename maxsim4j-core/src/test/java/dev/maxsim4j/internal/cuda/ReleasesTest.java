package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Release steps: each runs whatever failed before it; the first failure is thrown with the later ones in it. */
class ReleasesTest {
  @Test
  void everyStepRunsAndTheFirstFailureCarriesTheOthers() {
    List<String> ran = new ArrayList<>();
    Releases releases = new Releases();
    IllegalStateException first = new IllegalStateException("first");
    OutOfMemoryError second = new OutOfMemoryError("second");
    releases.run(() -> ran.add("a"));
    releases.run(() -> {
      ran.add("b");
      throw first;
    });
    releases.run(() -> {
      ran.add("c");
      throw second;
    });
    releases.run(() -> ran.add("d"));
    assertEquals(List.of("a", "b", "c", "d"), ran);
    assertSame(first, assertThrows(IllegalStateException.class, releases::throwIfFailed));
    assertArrayEquals(new Throwable[] {second}, first.getSuppressed());
  }

  @Test
  void anErrorFirstIsThrownAsItself() {
    Releases releases = new Releases();
    releases.run(() -> {
      throw new StackOverflowError("deep");
    });
    assertThrows(StackOverflowError.class, releases::throwIfFailed);
  }

  @Test
  void aPrimaryExceptionCarriesTheFailures() {
    Releases releases = new Releases();
    assertDoesNotThrow(releases::throwIfFailed);
    IllegalStateException quiet = releases.suppressedIn(new IllegalStateException("left"));
    assertEquals(0, quiet.getSuppressed().length);
    IllegalArgumentException failure = new IllegalArgumentException("step");
    releases.run(() -> {
      throw failure;
    });
    IllegalStateException left = releases.suppressedIn(new IllegalStateException("left"));
    assertArrayEquals(new Throwable[] {failure}, left.getSuppressed());
  }
}
