package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.BackendSelector;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A shared arena closed after a call's up-front check but before the backend reads the batch: the call fails with
 * the same named IllegalStateException as a batch closed before the call, not the JDK's bare "Already closed".
 */
class HostileArenaClosedMidCallTest {
  private static final Set<String> READS = Set.of("score", "scoreRows", "scoreRowsAsync", "topK", "backward",
      "lossStep", "encodeFde", "makeResident");

  /** A backend that, on its first reading call, lets the test close the arena before it reads anything. */
  private static final class Gate {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch closed = new CountDownLatch(1);

    void await() {
      entered.countDown();
      try {
        assertTrue(closed.await(10, TimeUnit.SECONDS));
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }

  private static MaxSim pausing(Gate gate, String backend) {
    Backend real = BackendSelector.create(backend, 2);
    Backend paused = (Backend) Proxy.newProxyInstance(Backend.class.getClassLoader(), new Class<?>[] {Backend.class},
        (proxy, method, args) -> {
          if (READS.contains(method.getName())) {
            if (method.getName().equals("scoreRowsAsync")) {
              Executor executor = (Executor) args[3];
              args[3] = (Executor) r -> executor.execute(() -> {
                gate.await();
                r.run();
              });
            } else {
              gate.await();
            }
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    return MaxSim.over(paused);
  }

  private static MemorySegment filled(Arena arena, int floats) {
    MemorySegment s = arena.allocate(ValueLayout.JAVA_FLOAT, floats);
    for (int i = 0; i < floats; i++) {
      s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (i % 7) * 0.25f - 0.5f);
    }
    return s;
  }

  private static void namesClosedMemory(String side, Throwable e) {
    IllegalStateException ise = assertInstanceOf(IllegalStateException.class, e, String.valueOf(e));
    assertTrue(ise.getMessage().startsWith(side + " read their tokens from a MemorySegment whose arena was closed"),
        ise.getMessage());
  }

  /** Runs {@code call} on another thread, closes the arena once the backend is entered, returns what it threw. */
  private static Throwable closedMidCall(String backend, boolean queriesInMemory,
      Function<MaxSim, Function<TokenBatch[], Object>> call) throws Exception {
    Gate gate = new Gate();
    Arena arena = Arena.ofShared();
    TokenBatch memory = TokenBatch.fromMemorySegment(filled(arena, 3 * 5 * 8), DType.FLOAT32, 3, 5, 8);
    TokenBatch heap = TokenBatch.ofFloats(new RandomBatches(3).floats(3 * 5 * 8), 3, 5, 8);
    TokenBatch[] qd = queriesInMemory ? new TokenBatch[] {memory, heap} : new TokenBatch[] {heap, memory};
    try (MaxSim m = pausing(gate, backend)) {
      Function<TokenBatch[], Object> body = call.apply(m);
      Throwable[] thrown = new Throwable[1];
      Thread t = new Thread(() -> {
        try {
          Object r = body.apply(qd);
          if (r instanceof java.util.concurrent.CompletableFuture<?> f) {
            f.join();
          }
        } catch (CompletionException e) {
          thrown[0] = e.getCause();
        } catch (Throwable e) {
          thrown[0] = e;
        }
      });
      t.start();
      assertTrue(gate.entered.await(10, TimeUnit.SECONDS));
      arena.close();
      gate.closed.countDown();
      t.join(10_000);
      assertTrue(!t.isAlive());
      return thrown[0];
    }
  }

  @Test
  void everyCallNamesMemoryClosedAfterItsCheck() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(8).build();
    for (String backend : new String[] {"vector", "scalar"}) {
      for (boolean queriesInMemory : new boolean[] {true, false}) {
        String side = queriesInMemory ? "queries" : "documents";
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory, m -> b -> m.scores(b[0], b[1])));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory, m -> b -> m.topK(b[0], b[1], 2)));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory, m -> b -> m.pairwise(b[0], b[1])));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory, m -> b -> m.candidates(b[0], b[1], 1)));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory, m -> b -> m.scoresAsync(b[0], b[1])));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory,
            m -> b -> m.scoresAsync(b[0], m.upload(b[1]))));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory, m -> b -> m.scoresForTraining(b[0], b[1])));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory,
            m -> b -> m.lossAllPairs(b[0], b[1], Loss.contrastive(1f))));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory,
            m -> b -> m.lossCandidates(b[0], b[1], 1, Loss.contrastive(1f))));
        namesClosedMemory(side, closedMidCall(backend, queriesInMemory,
            m -> b -> queriesInMemory ? m.encodeQueries(encoder, b[0]) : m.encodeDocuments(encoder, b[1])));
      }
    }
  }

  /**
   * The readers outside MaxSim's calls, their arena closed by another thread while they loop: where the close lands
   * is up to the scheduler, but wherever it lands, before a read or during one, the error names the batch.
   */
  @Test
  void readersNameMemoryClosedWhileTheyRead() throws Exception {
    FixedDimensionalEncoder encoder = FixedDimensionalEncoder.builder(8).build();
    int rows = 256;
    String[] names = {"toFloatArray", "get", "l2Normalized", "quantize", "toByteArray", "encodeQueries"};
    for (int round = 0; round < 4 * names.length; round++) {
      String reader = names[round % names.length];
      Arena arena = Arena.ofShared();
      TokenBatch batch = TokenBatch.fromMemorySegment(filled(arena, rows * 16 * 8), DType.FLOAT32, rows, 16, 8);
      TokenBatch bytes = TokenBatch.fromMemorySegment(arena.allocate(rows * 16 * 8L), DType.INT8, null, rows, 16, 8);
      CountDownLatch readOnce = new CountDownLatch(1);
      Throwable[] thrown = new Throwable[1];
      Thread t = new Thread(() -> {
        try {
          for (int i = 0; ; i++) {
            switch (reader) {
              case "toFloatArray" -> batch.toFloatArray();
              case "get" -> batch.get(i % rows, i % 16, i % 8);
              case "l2Normalized" -> batch.l2Normalized();
              case "quantize" -> batch.quantize(DType.INT8);
              case "toByteArray" -> bytes.toByteArray();
              default -> encoder.encodeQueries(batch);
            }
            readOnce.countDown();
          }
        } catch (Throwable e) {
          thrown[0] = e;
          readOnce.countDown();
        }
      });
      t.start();
      assertTrue(readOnce.await(10, TimeUnit.SECONDS));
      arena.close();
      t.join(10_000);
      assertTrue(!t.isAlive(), reader);
      IllegalStateException e = assertInstanceOf(IllegalStateException.class, thrown[0], reader + ": " + thrown[0]);
      assertTrue(e.getMessage().contains("read their tokens from a MemorySegment whose arena was closed"),
          reader + ": " + e.getMessage());
    }
  }
}
