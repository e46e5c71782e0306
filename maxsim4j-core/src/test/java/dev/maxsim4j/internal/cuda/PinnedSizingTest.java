package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The reused pinned memory's size: grown to what is asked, given back where a window of calls left most unused. */
class PinnedSizingTest {
  private static final long MB = 1L << 20;

  @Test
  void growsByHalfAgainAtLeastToWhatIsAsked() {
    PinnedSizing sizing = new PinnedSizing();
    assertEquals(0, sizing.next(0, 0));
    assertEquals(10 * MB, sizing.next(0, 10 * MB));
    assertEquals(15 * MB, sizing.next(10 * MB, 11 * MB));
    assertEquals(100 * MB, sizing.next(15 * MB, 100 * MB));
    assertEquals(100 * MB, sizing.next(100 * MB, 100 * MB));
  }

  @Test
  void aWindowOfSmallCallsGivesBackWhatOneLargeCallLeft() {
    PinnedSizing sizing = new PinnedSizing();
    long held = sizing.next(0, 2048 * MB);
    for (int i = 1; i < PinnedSizing.WINDOW; i++) {
      held = sizing.next(held, 10 * MB);
      assertEquals(2048 * MB, held, "within the growth's window, call " + i);
    }
    for (int i = 1; i < PinnedSizing.WINDOW; i++) {
      held = sizing.next(held, i == 5 ? 40 * MB : 10 * MB);
      assertEquals(2048 * MB, held, "call " + i + " of the next window");
    }
    held = sizing.next(held, 10 * MB);
    assertEquals(60 * MB, held, "half again the window's largest call");
    for (int i = 0; i < 3 * PinnedSizing.WINDOW; i++) {
      held = sizing.next(held, 40 * MB);
    }
    assertEquals(60 * MB, held, "calls that use a quarter or more keep it");
  }

  @Test
  void smallGainsAndBusyWindowsKeepTheMemory() {
    PinnedSizing sizing = new PinnedSizing();
    long held = sizing.next(0, 60 * MB);
    for (int i = 0; i < 4 * PinnedSizing.WINDOW; i++) {
      held = sizing.next(held, MB);
    }
    assertEquals(60 * MB, held, "freeing less than the minimum is not worth a new allocation");
    held = sizing.next(held, 1024 * MB);
    for (int i = 0; i < 4 * PinnedSizing.WINDOW; i++) {
      held = sizing.next(held, i % PinnedSizing.WINDOW == 7 ? 300 * MB : MB);
    }
    assertEquals(1024 * MB, held, "a window whose largest call uses more than a quarter keeps it");
  }
}
