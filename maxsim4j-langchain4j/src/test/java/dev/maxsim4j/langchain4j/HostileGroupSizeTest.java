package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A hostile tester's finding: the scoring model encoded its segments 1,024 at a time however long they were, so
 * that segments each of which it scores alone were refused together ("encode the texts in smaller lists (or raise
 * -Xmx)"): advice a LangChain4j user cannot follow, since ReRankingContentAggregator passes every candidate in one
 * call. With the test JVM's 4 GB heap, 1,024 segments of about 1,400 word pieces (a page each) were refused. A group
 * is now bounded by its characters too, which bound MiniLM's word pieces.
 */
class HostileGroupSizeTest {
  /** Scores five segments of about 18,000 word pieces on a 256 MB heap: together they outgrow it, each fits. */
  public static final class FiveLongSegments {
    public static void main(String[] args) {
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load();
          MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build()) {
        List<TextSegment> segments = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          segments.add(TextSegment.from(("segment " + i + " the tide rises with the moon. ").repeat(2000)));
        }
        MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
        List<Double> all = model.scoreAll(segments, "tide").content();
        if (!all.get(4).equals(model.score(segments.get(4), "tide").content())) {
          throw new AssertionError("segment 4 scored " + all.get(4) + " with the others, otherwise alone");
        }
        System.out.println("scored " + all.size());
      } catch (IllegalArgumentException e) {
        System.out.println(e.getMessage());
      }
    }
  }

  @Test
  @Timeout(600)
  void segmentsThatFitAloneAreScoredTogether() throws IOException, InterruptedException {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", "-Xmx256m", "-cp",
        System.getProperty("java.class.path"), FiveLongSegments.class.getName());
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(500, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), out);
    assertEquals("scored 5", out.lines().filter(l -> !l.startsWith("WARNING") && !l.startsWith("SLF4J"))
        .reduce((a, b) -> b).orElse(""), out);
  }
}
