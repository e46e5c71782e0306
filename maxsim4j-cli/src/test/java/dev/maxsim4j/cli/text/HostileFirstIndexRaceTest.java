package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile tester's finding: a search started beside the first `index --store int8` of a folder read it without the
 * lock (there was no index folder yet), settled on bf16, waited for the lock while the other run wrote the int8 index,
 * then encoded every file again and replaced that index with a bf16 one, silently. A run that finds the first index
 * written once it holds the lock reads the folder again and keeps it.
 */
class HostileFirstIndexRaceTest {
  @TempDir Path dir;

  @Test
  void aRunThatWaitedForTheFirstIndexKeepsItsStoreAndTokens() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("notes"));
    for (int i = 0; i < 3; i++) {
      Files.writeString(folder.resolve("n" + i + ".txt"), "otters hold hands while they sleep, note " + i);
    }
    PrintStream err = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    try (TextModel encoder = TextModel.load(); UpdateLock lock = new UpdateLock(err)) {
      // the other run writes the first index between this run's reading of the folder and its taking of the lock:
      // the encoder is asked for in between
      boolean[] otherRan = {false};
      TextIndex index = TextIndex.update(folder, () -> {
        if (!otherRan[0]) {
          otherRan[0] = true;
          try (UpdateLock other = new UpdateLock(err)) {
            TextIndex.update(folder, () -> encoder, true, new Warnings(err), err, Store.INT8, other);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
        return encoder;
      }, false, new Warnings(err), err, null, lock);
      assertEquals(Store.INT8, index.store());
      assertEquals(0, index.encoded(), "files encoded again");
    }
  }
}
