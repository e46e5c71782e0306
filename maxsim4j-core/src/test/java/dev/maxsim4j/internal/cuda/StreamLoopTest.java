package dev.maxsim4j.internal.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.GpuTest;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The persistent loop's life cycle ({@link StreamLoop}): one grid answers a run of calls; an idle period, or
 * any other operation, ends it and the next call launches a new one; closing the backend while it runs ends
 * it. (Its scores are checked against launches and the reference in PersistentKernelTest.)
 */
@GpuTest
class StreamLoopTest {

  @Test
  void oneGridAnswersARunOfCallsAndIdleOrOtherWorkEndsIt() throws Exception {
    SplittableRandom rnd = new SplittableRandom(7);
    Tokens documents = StreamingWorkTest.tokens(rnd, 2000, 300, 128, 4);
    try (CudaBackend plain = new CudaBackend(1)) {
      CudaBackend looped = new CudaBackend(1, TimeUnit.MILLISECONDS.toNanos(100));
      runOfCalls(plain, looped, documents, rnd);
      looped.makeResident(documents); // left open: closing the backend frees it
      check(plain, looped, StreamingWorkTest.tokens(rnd, 1, 32, 128, 0), documents, "the last call");
      looped.close(); // with its grid running: ends it, frees what it held
      assertThrows(IllegalStateException.class, looped::loopLaunches);
    }
  }

  private static void runOfCalls(CudaBackend plain, CudaBackend looped, Tokens documents, SplittableRandom rnd)
      throws Exception {
    {
      AutoCloseable onPlain = plain.makeResident(documents);
      AutoCloseable onLoop = looped.makeResident(documents);
      // the plain backend first: its launches would wait for the loop's grid to end (it holds every SM)
      Tokens[] queries = new Tokens[200];
      float[][] expected = new float[queries.length][];
      for (int call = 0; call < queries.length; call++) {
        queries[call] = StreamingWorkTest.tokens(rnd, 1, 32, 128, 0);
        expected[call] = plain.score(Problem.allPairs(queries[call], documents), null);
      }
      for (int call = 0; call < queries.length; call++) {
        assertArrayEquals(expected[call], looped.score(Problem.allPairs(queries[call], documents), null), "call " + call);
      }
      System.out.println("StreamLoopTest, 200 calls in a row: " + looped.loopHistory());
      assertEquals(1, looped.loopLaunches(), "grids for 200 calls in a row: " + looped.loopHistory());
      Thread.sleep(400); // past the idle time
      Tokens q = StreamingWorkTest.tokens(rnd, 1, 32, 128, 0);
      float[] after = plain.score(Problem.allPairs(q, documents), null);
      assertArrayEquals(after, looped.score(Problem.allPairs(q, documents), null), "after idle");
      assertEquals(2, looped.loopLaunches(), "grids after an idle period");
      looped.score(Problem.allPairs(StreamingWorkTest.tokens(rnd, 3, 32, 128, 0), documents), null);
      check(plain, looped, StreamingWorkTest.tokens(rnd, 1, 32, 128, 0), documents, "after another launch");
      assertEquals(3, looped.loopLaunches(), "grids after another operation");
      onLoop.close();
      onPlain.close();
    }
  }

  private static void check(CudaBackend plain, CudaBackend looped, Tokens query, Tokens documents, String where) {
    Problem p = Problem.allPairs(query, documents);
    assertArrayEquals(plain.score(p, null), looped.score(p, null), where);
  }
}
