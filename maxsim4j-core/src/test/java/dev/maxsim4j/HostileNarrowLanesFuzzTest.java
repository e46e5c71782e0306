package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link HostileParityFuzzTest}'s hostile values (every type pair, huge, tiny and zero scales, NaN, infinities,
 * masks, segments, every entry point) on lanes narrower than this machine's, each width in a JVM of its own:
 * {@link NarrowLanesTest} meets those widths with ordinary values only, and 128-bit lanes (NEON, SSE), where the
 * e4m3, int8 and one-bit expansion takes its scalar codec (no vector of V bytes below 8 lanes), not at all.
 * Fresh seeds each run; a failure prints the child's output with the seed.
 */
class HostileNarrowLanesFuzzTest {

  @ParameterizedTest
  @CsvSource({"-XX:MaxVectorSize=32, 256", "-XX:MaxVectorSize=16, 128", "-XX:MaxVectorSize=8, 64"})
  void hostileValuesOnNarrowLanesScoreAsTheReference(String flag, int bits) throws Exception {
    String output = ChildJvm.run(List.of(flag, "-Dfuzz.cases=" + Integer.getInteger("fuzz.narrow.cases", 150)),
        Child.class, 300, String.valueOf(bits));
    String line = output.lines().filter(l -> l.startsWith("child: ")).findFirst().orElse(output);
    // a CPU whose widest lanes are narrower than asked has no such lanes to test
    assertTrue(line.startsWith("child: " + bits + "-bit lanes, every case matched") || line.contains("narrower"),
        line);
  }

  /** The child JVM: the hostile parity fuzz on the lanes its flag leaves, which it checks it got. */
  static final class Child {
    public static void main(String[] args) throws Exception {
      String lanes = args[0] + "-bit";
      try (MaxSim vector = MaxSim.builder().backend("vector").threads(1).build()) {
        if (!vector.backendInfo().contains(lanes)) {
          System.out.println("child: narrower lanes here: " + vector.backendInfo());
          return;
        }
      }
      try {
        new HostileParityFuzzTest().everyTypePairScoresAsTheReferenceOnEveryEntryPoint();
      } catch (AssertionError e) {
        e.printStackTrace(System.out);
        System.exit(1);
      }
      System.out.println("child: " + lanes + " lanes, every case matched");
    }
  }
}
