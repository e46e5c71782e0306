package dev.maxsim4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Documents memory-mapped from a file that shrinks under the mapping, after the kernels have been compiled: the
 * next call fails with an error the caller can catch (the bulk copies' fault), never a JVM crash (a compiled
 * vector load's SIGBUS), for every storage type; the backend keeps working for other inputs.
 */
@EnabledOnOs({OS.LINUX, OS.MAC}) // Windows refuses to truncate a mapped file
class MappedInputShrinksTest {

  @ParameterizedTest
  @EnumSource(DType.class)
  void aShrunkMappingIsAnErrorNotACrash(DType type, @TempDir Path dir) throws IOException {
    int n = 200;
    int l = 32;
    int d = 128;
    long bytes = n * l * type.bytesPerToken(d);
    Path file = dir.resolve("documents.bin");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE); Arena arena = Arena.ofShared(); MaxSim m = MaxSim.builder().backend("vector")
            .threads(2).build()) {
      ch.write(ByteBuffer.allocate((int) bytes), 0);
      MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes, arena);
      TokenBatch docs = type.isQuantized() ? TokenBatch.fromMemorySegment(mapped, type, null, n, l, d)
          : TokenBatch.fromMemorySegment(mapped, type, n, l, d);
      TokenBatch q = TokenBatch.ofFloats(new float[2 * 8 * d], 2, 8, d);
      for (int i = 0; i < 300; i++) { // enough calls for the JIT to compile the kernels' loops
        m.topK(q, docs, 3);
      }
      ch.truncate(bytes / 2);
      Throwable fault = assertThrows(Throwable.class, () -> m.topK(q, docs, 3));
      boolean internal = false;
      for (Throwable t = fault; t != null && !internal; t = t.getCause()) {
        internal = t instanceof InternalError;
      }
      assertTrue(internal, type + ": the fault of a read past the shrunk file, an InternalError: " + fault);
      TokenBatch heap = TokenBatch.ofFloats(new float[4 * d], 4, 1, d);
      assertEquals(4, m.scores(q, heap)[0].length, type + ": the backend still scores");
    }
    Files.deleteIfExists(file);
  }
}
