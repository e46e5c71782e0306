package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The reused pinned memory's size: grown to what is asked, given back where a period of calls left most unused. */
class PinnedSizingTest {
  private static final long MB = 1L << 20;
  private static final long SECOND = 1_000_000_000L;
  private static final long PERIOD = PinnedSizing.PERIOD_NANOS;

  /** A clock the test moves. */
  private static final class Clock {
    long now;
  }

  @Test
  void growsByHalfAgainAtLeastToWhatIsAsked() {
    PinnedSizing sizing = new PinnedSizing(() -> 0);
    assertEquals(0, sizing.next(0, 0));
    assertEquals(10 * MB, sizing.next(0, 10 * MB));
    assertEquals(15 * MB, sizing.next(10 * MB, 11 * MB));
    assertEquals(100 * MB, sizing.next(15 * MB, 100 * MB));
    assertEquals(100 * MB, sizing.next(100 * MB, 100 * MB));
  }

  @Test
  void aPeriodOfSmallCallsGivesBackWhatOneLargeCallLeft() {
    Clock clock = new Clock();
    PinnedSizing sizing = new PinnedSizing(() -> clock.now);
    long held = sizing.next(0, 2048 * MB);
    for (clock.now = SECOND; clock.now < PERIOD; clock.now += SECOND) {
      held = sizing.next(held, 10 * MB);
      assertEquals(2048 * MB, held, "within the growth's period, at " + clock.now / SECOND + " s");
    }
    clock.now = PERIOD;
    held = sizing.next(held, 10 * MB);
    assertEquals(2048 * MB, held, "the growth's own request belongs to its period");
    for (clock.now += SECOND; clock.now < 2 * PERIOD; clock.now += SECOND) {
      held = sizing.next(held, clock.now == PERIOD + 5 * SECOND ? 40 * MB : 10 * MB);
      assertEquals(2048 * MB, held, "in the next period, at " + clock.now / SECOND + " s");
    }
    held = sizing.next(held, 10 * MB);
    assertEquals(60 * MB, held, "half again the period's largest call");
    for (int i = 0; i < 10; i++) {
      clock.now += PERIOD;
      held = sizing.next(held, 40 * MB);
    }
    assertEquals(60 * MB, held, "calls that use a quarter or more keep it");
  }

  @Test
  void manyCallsInAShortTimeGiveNothingBack() {
    Clock clock = new Clock();
    PinnedSizing sizing = new PinnedSizing(() -> clock.now);
    long held = sizing.next(0, 2048 * MB);
    for (int i = 0; i < 100_000; i++) {
      clock.now += PERIOD / 200_000;
      held = sizing.next(held, MB);
    }
    assertEquals(2048 * MB, held, "a large call each period keeps its memory, whatever the small calls between");
  }

  @Test
  void smallGainsAndBusyPeriodsKeepTheMemory() {
    Clock clock = new Clock();
    PinnedSizing sizing = new PinnedSizing(() -> clock.now);
    long held = sizing.next(0, 60 * MB);
    for (int i = 0; i < 4; i++) {
      clock.now += PERIOD;
      held = sizing.next(held, MB);
    }
    assertEquals(60 * MB, held, "freeing less than the minimum is not worth a new allocation");
    held = sizing.next(held, 1024 * MB);
    for (int i = 0; i < 40; i++) {
      clock.now += PERIOD / 8;
      held = sizing.next(held, i % 8 == 3 ? 300 * MB : MB);
    }
    assertEquals(1024 * MB, held, "a period whose largest call uses more than a quarter keeps it");
  }
}
