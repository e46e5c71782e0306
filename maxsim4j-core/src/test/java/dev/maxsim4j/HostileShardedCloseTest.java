package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.BackendSelector;
import dev.maxsim4j.internal.ShardedBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A sharded backend whose devices fail to close, one with an exception and one with an Error, still closes every
 * device, and throws the first failure with the other suppressed in it (it kept the first and dropped the rest, and
 * an Error left the devices after it open).
 */
class HostileShardedCloseTest {

  /** {@code inner}, but its close runs {@code onClose} first (which may throw) and counts. */
  private static Backend closing(Backend inner, Runnable onClose, AtomicInteger closes) {
    return (Backend) Proxy.newProxyInstance(Backend.class.getClassLoader(), new Class<?>[] {Backend.class},
        (proxy, method, args) -> {
          if (method.getName().equals("close")) {
            closes.incrementAndGet();
            inner.close();
            onClose.run();
            return null;
          }
          try {
            return method.invoke(inner, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Test
  void everyDeviceClosesAndEveryFailureIsKept() {
    AtomicInteger closes = new AtomicInteger();
    IllegalStateException first = new IllegalStateException("device 0 failed to close");
    OutOfMemoryError second = new OutOfMemoryError("device 2 failed to close");
    List<Backend> backends = List.of(
        closing(BackendSelector.create("cpu", 1), () -> { throw first; }, closes),
        closing(BackendSelector.create("cpu", 1), () -> {}, closes),
        closing(BackendSelector.create("cpu", 1), () -> { throw second; }, closes),
        closing(BackendSelector.create("cpu", 1), () -> {}, closes));
    ShardedBackend sharded = ShardedBackend.equalParts(backends);
    IllegalStateException thrown = assertThrows(IllegalStateException.class, sharded::close);
    assertSame(first, thrown);
    assertEquals(List.of(second), List.of(thrown.getSuppressed()));
    assertEquals(4, closes.get(), "every device closed");
  }
}
