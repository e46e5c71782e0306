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

  /**
   * A second finding: a group of 32,768 characters holds about 98,000 word pieces of Hangul (three letters a
   * syllable), more than a 256 MB heap's 54,613, so two segments of 40,820 that each fit were refused together, the
   * error naming the second as texts[1]. Groups are now bounded by those word pieces too; a segment too long alone is
   * named by its place among the segments.
   */
  public static final class DenseSegments {
    public static void main(String[] args) {
      try (MiniLmTokenEncoder encoder = MiniLmTokenEncoder.load();
          MaxSim maxSim = MaxSim.builder().backend("cpu").threads(1).build()) {
        MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
        TextSegment dense = TextSegment.from("각각각각각 ".repeat(2700));
        System.out.println("scored " + model.scoreAll(List.of(dense, dense), "각").content().size());
        TextSegment tooLong = TextSegment.from("각 ".repeat(20000));
        model.scoreAll(List.of(TextSegment.from("short"), dense, tooLong), "각");
      } catch (IllegalArgumentException e) {
        System.out.println(e.getMessage());
      }
    }
  }

  @Test
  @Timeout(600)
  void segmentsThatFitAloneAreScoredTogether() throws IOException, InterruptedException {
    assertEquals("scored 5", lastLines(FiveLongSegments.class, 1));
  }

  @Test
  @Timeout(600)
  void segmentsOfManyWordPiecesACharacterThatFitAloneAreScoredTogether() throws IOException, InterruptedException {
    String out = lastLines(DenseSegments.class, 2);
    assertTrue(out.startsWith("scored 2\nsegments[2] could not be encoded: texts hold more than "), out);
  }

  /** The last {@code n} lines of {@code main}'s output on a 256 MB heap, once it ended well. */
  private static String lastLines(Class<?> main, int n) throws IOException, InterruptedException {
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", "-Xmx256m", "-cp",
        System.getProperty("java.class.path"), main.getName());
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(500, TimeUnit.SECONDS), "the child JVM ended");
    assertEquals(0, p.exitValue(), out);
    List<String> lines = out.lines().filter(l -> !l.startsWith("WARNING") && !l.startsWith("SLF4J")).toList();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
  }
}
