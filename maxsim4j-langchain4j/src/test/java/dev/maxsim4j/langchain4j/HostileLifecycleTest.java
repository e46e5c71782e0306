package dev.maxsim4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.segment.TextSegment;
import dev.maxsim4j.MaxSim;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The scoring model and encoder under hostile use: empty lists, a closed MaxSim or encoder, one model shared by
 * threads, and an encoder closed while other threads encode. Each either answers as it would alone or fails with
 * the documented exception, never with a wrong score or a crash in native code.
 */
class HostileLifecycleTest extends WithModel {
  private static List<TextSegment> segments(int n) {
    List<TextSegment> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(TextSegment.from("segment " + i + " on the tides of the sea"));
    }
    return out;
  }

  @Test
  void emptyInputsAnswerEmptyAndTextlessQueriesAreRefused() {
    assertEquals(0, encoder.encode(List.of()).size());
    MaxSimScoringModel model = new MaxSimScoringModel(encoder, maxSim);
    assertEquals(List.of(), model.scoreAll(List.of(), "tide").content());
    assertThrows(IllegalArgumentException.class, () -> model.scoreAll(segments(1), " \t\u200B"));
    assertThrows(IllegalArgumentException.class, () -> model.scoreAll(segments(1), "\uD800"));
  }

  @Test
  void closedResourcesFailWithIllegalStateException() {
    MaxSim closed = MaxSim.builder().backend("cpu").threads(1).build();
    closed.close();
    assertThrows(IllegalStateException.class,
        () -> new MaxSimScoringModel(encoder, closed).scoreAll(segments(2), "tide"));
    MiniLmTokenEncoder gone = MiniLmTokenEncoder.load();
    gone.close();
    gone.close(); // a second close does nothing
    assertThrows(IllegalStateException.class, () -> new MaxSimScoringModel(gone, maxSim).scoreAll(segments(2), "t"));
    assertThrows(IllegalStateException.class, () -> gone.hasWordPiece("tide"));
    assertThrows(IllegalStateException.class, () -> gone.tokenCount("tide"));
  }

  @Test
  void oneModelSharedByThreadsScoresAsItDoesAloneAndACloseMidwayFailsCleanly() throws Exception {
    List<TextSegment> segments = segments(40);
    MaxSimScoringModel shared = new MaxSimScoringModel(encoder, maxSim, 16);
    List<Double> alone = shared.scoreAll(segments, "why does the sea rise").content();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<Double>>> runs = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        runs.add(pool.submit(() -> shared.scoreAll(segments, "why does the sea rise").content()));
      }
      for (Future<List<Double>> run : runs) {
        assertEquals(alone, run.get());
      }
      MiniLmTokenEncoder closing = MiniLmTokenEncoder.load();
      MaxSimScoringModel model = new MaxSimScoringModel(closing, maxSim, 16);
      List<Future<Object>> during = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        during.add(pool.submit(() -> {
          try {
            return model.scoreAll(segments, "why does the sea rise").content();
          } catch (IllegalStateException e) {
            return e;
          }
        }));
      }
      closing.close();
      for (Future<Object> f : during) {
        Object r = f.get();
        assertTrue(r.equals(alone) || r instanceof IllegalStateException e && e.getMessage().contains("closed"),
            String.valueOf(r));
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
