package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.cli.CliRun;
import dev.maxsim4j.cli.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.store.FSDirectory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One run at a time updates a folder's index; a killed run's temporary files go at the next run. */
class UpdateLockTest {
  @TempDir Path dir;

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  private Path folder() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("notes"));
    String[] texts = {"Honey bees dance to show where the flowers are.", "Bread rises because yeast makes gas.",
        "The moon pulls the sea and makes the tides.", "Sea otters hold hands while they sleep."};
    for (int i = 0; i < texts.length; i++) {
      Files.writeString(folder.resolve("note" + i + ".txt"), (texts[i] + " ").repeat(40 * (i + 1)));
    }
    return folder;
  }

  @Test
  void twoRunsAtOnceLeaveTheTokensAndTheLuceneIndexInLine() throws Exception {
    Path folder = folder();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (String[] stores : new String[][] {{"int8", "binary"}, {"bf16", "int8"}}) {
        CountDownLatch start = new CountDownLatch(2);
        List<Future<CliRun>> runs = new ArrayList<>();
        for (String store : stores) {
          runs.add(pool.submit(() -> {
            start.countDown();
            start.await();
            return run("index", "--dir", folder.toString(), "--store", store);
          }));
        }
        for (Future<CliRun> r : runs) {
          CliRun result = r.get(5, TimeUnit.MINUTES);
          assertEquals(0, result.status(), result.err());
          assertFalse(result.err().contains("cannot"), result.err());
        }
        CliRun again = run("index", "--dir", folder.toString());
        assertEquals(0, again.status(), again.err());
        assertEquals("", again.err());
        assertTrue(again.out().contains("(0 encoded, 4 reused, 0 skipped)"), again.out());
        assertTrue(again.out().contains("(0 added, 0 removed)"), again.out());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** A leak hunter's finding: every folder a JVM ever indexed kept an entry of its in-process locks, for good. */
  @Test
  void aFolderNoRunUsesAnyMoreLeavesNoInProcessLock() throws Exception {
    int before = UpdateLock.foldersInUse();
    for (int i = 0; i < 20; i++) {
      Path index = Files.createDirectories(dir.resolve("folder" + i).resolve(TextIndex.FOLDER));
      try (UpdateLock first = new UpdateLock(System.err); UpdateLock second = new UpdateLock(System.err)) {
        assertTrue(first.hold(index));
        assertEquals(before + 1, UpdateLock.foldersInUse());
        first.close();
        assertTrue(second.hold(index)); // the same folder again, after the first let go
      }
      assertEquals(before, UpdateLock.foldersInUse(), "folder " + i);
    }
  }

  /**
   * A reviewer's finding: a run that gave up waiting (interrupted) closed a channel of its own on the lock file, and
   * closing any channel on a file releases the process's lock on it: another process could then update the index
   * under the run that held it. This JVM keeps one channel per lock file; another process still finds it locked.
   */
  @Test
  void aRunThatGivesUpWaitingLeavesTheHoldersLockInPlace() throws Exception {
    Path index = Files.createDirectories(dir.resolve("shared").resolve(TextIndex.FOLDER));
    try (UpdateLock held = new UpdateLock(System.err)) {
      assertTrue(held.hold(index));
      CountDownLatch gaveUp = new CountDownLatch(1);
      Thread waiter = new Thread(() -> {
        try (UpdateLock second = new UpdateLock(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()))) {
          second.hold(index);
        } catch (IOException expected) {
          gaveUp.countDown(); // interrupted while waiting
        }
      });
      waiter.start();
      while (waiter.getState() != Thread.State.WAITING && waiter.isAlive()) {
        Thread.sleep(10);
      }
      waiter.interrupt();
      assertTrue(gaveUp.await(30, TimeUnit.SECONDS), "the waiting run gave up");
      Path probe = dir.resolve("LockProbe.java");
      Files.writeString(probe, "import java.nio.channels.*; import java.nio.file.*;\n"
          + "class LockProbe { public static void main(String[] a) throws Exception {\n"
          + "  try (FileChannel c = FileChannel.open(Path.of(a[0]), StandardOpenOption.WRITE)) {\n"
          + "    System.out.print(c.tryLock() == null ? \"held\" : \"free\"); } } }\n");
      Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          probe.toString(), index.resolve(UpdateLock.FILE).toString()).redirectErrorStream(true).start();
      assertTrue(child.waitFor(2, TimeUnit.MINUTES));
      assertEquals("held", new String(child.getInputStream().readAllBytes()).trim(),
          "another process could take the lock this run holds");
    }
  }

  @Test
  void aRunInAnotherProcessWaitsForTheLockAndSaysSo() throws Exception {
    Path folder = folder();
    Path index = folder.resolve(TextIndex.FOLDER);
    Path log = dir.resolve("child.log");
    Process child;
    try (UpdateLock held = new UpdateLock(System.err)) {
      assertTrue(held.hold(index));
      child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "--add-modules", "jdk.incubator.vector", "-cp", System.getProperty("java.class.path"),
          Main.class.getName(), "index", "--dir", folder.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (!Files.readString(log).contains("waiting for it to finish") && System.nanoTime() < deadline) {
        assertTrue(child.isAlive(), Files.readString(log));
        Thread.sleep(100);
      }
      assertTrue(Files.readString(log).contains("another maxsim4j run is updating the index in"),
          Files.readString(log));
      Thread.sleep(500);
      assertTrue(child.isAlive(), Files.readString(log));
      assertFalse(Files.exists(index.resolve("manifest.tsv")), "nothing written while the lock is held");
    }
    assertTrue(child.waitFor(5, TimeUnit.MINUTES), Files.readString(log));
    assertEquals(0, child.exitValue(), Files.readString(log));
    assertTrue(Files.readString(log).contains("indexed 4 files (4 encoded"), Files.readString(log));
  }

  @Test
  void aKilledRunsTemporaryFilesGoAtTheNextRunOnlyOursAndOnlyOlderOnes() throws IOException {
    Path folder = folder();
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    Path index = folder.resolve(TextIndex.FOLDER);
    long minuteAgo = System.currentTimeMillis() - 60_000;
    List<Path> killed = List.of(index.resolve("tokens-0123456789abcdef.tmp"),
        index.resolve("manifest-0123456789abcdef.tmp"), index.resolve("tokens-fedcba9876543210.safetensors"));
    List<Path> others = List.of(index.resolve("notes.tmp"), index.resolve("tokens.tmp.keep"),
        folder.resolve("tokens-0123456789abcdef.tmp"));
    for (Path p : killed) {
      Files.writeString(p, "cut short");
      Files.setLastModifiedTime(p, FileTime.fromMillis(minuteAgo));
    }
    for (Path p : others) {
      Files.writeString(p, "not ours");
      Files.setLastModifiedTime(p, FileTime.fromMillis(minuteAgo));
    }
    Path future = index.resolve("manifest-aaaaaaaaaaaaaaaa.tmp");
    Files.writeString(future, "newer than the run");
    Files.setLastModifiedTime(future, FileTime.fromMillis(System.currentTimeMillis() + 3_600_000));

    CliRun again = run("index", "--dir", folder.toString());
    assertEquals(0, again.status(), again.err());
    assertTrue(again.out().contains("(0 encoded, 4 reused"), again.out());
    for (Path p : killed) {
      assertFalse(Files.exists(p), p + " stayed");
    }
    for (Path p : others) {
      assertTrue(Files.exists(p), p + " was deleted");
    }
    assertTrue(Files.exists(future), "a temporary file newer than the run was deleted");
    CliRun search = run("search", "--dir", folder.toString(), "--query", "otters", "--k", "1");
    assertEquals(0, search.status(), search.err());
    assertTrue(search.out().contains("note3.txt"), search.out());
  }

  /**
   * A pipe, a link or a folder where the lock file belongs is refused, named, and never opened: runs went on
   * without the lock, so two of them could update the index at once and delete each other's tokens file.
   */
  @Test
  void aLockFileThatIsAPipeALinkOrAFolderIsRefusedUnopened() throws Exception {
    Path folder = folder();
    Path index = Files.createDirectories(folder.resolve(TextIndex.FOLDER));
    Path lockFile = index.resolve(UpdateLock.FILE);
    Process p = new ProcessBuilder("mkfifo", lockFile.toString()).start();
    assertEquals(0, p.waitFor());
    for (String command : new String[] {"index", "search"}) {
      String[] args = command.equals("index") ? new String[] {"index", "--dir", folder.toString()}
          : new String[] {"search", "--dir", folder.toString(), "--query", "otters"};
      CliRun pipe = assertTimeoutPreemptively(Duration.ofMinutes(2), () -> run(args));
      assertRefused(pipe, lockFile, "not a regular file (a pipe");
    }
    Files.delete(lockFile);
    Path elsewhere = dir.resolve("elsewhere.lock");
    Files.createSymbolicLink(lockFile, elsewhere);
    assertRefused(run("index", "--dir", folder.toString()), lockFile, "a symbolic link");
    assertFalse(Files.exists(elsewhere), "the lock followed a link out of the index folder");
    Files.delete(lockFile);
    Files.createDirectory(lockFile);
    assertRefused(run("index", "--dir", folder.toString()), lockFile, "a folder");
    Files.delete(lockFile);
    CliRun fixed = run("index", "--dir", folder.toString());
    assertEquals(0, fixed.status(), fixed.err());
    assertTrue(Files.isRegularFile(lockFile, java.nio.file.LinkOption.NOFOLLOW_LINKS));
  }

  /**
   * A hostile tester's finding: a lock file that could not be opened to write (made read-only by its owner) in a
   * folder that can be written let runs go on without the lock, silently: each update left a tokens file behind
   * and two at once blamed another program for Lucene's lock. It is refused, named. Root writes a read-only file:
   * there it is made immutable (chattr), where the file system lets it.
   */
  @Test
  void aLockFileThatCannotBeOpenedToWriteIsRefused() throws Exception {
    Path folder = folder();
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    Path lockFile = folder.resolve(TextIndex.FOLDER).resolve(UpdateLock.FILE);
    boolean root = "root".equals(System.getProperty("user.name"));
    if (root) {
      Process p = new ProcessBuilder("chattr", "+i", lockFile.toString()).redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      Assumptions.assumeTrue(p.waitFor() == 0, "chattr +i, which makes a file root cannot write, works here");
    } else {
      assertTrue(lockFile.toFile().setWritable(false));
    }
    try {
      Files.writeString(folder.resolve("note1.txt"), "otters changed their minds");
      CliRun r = run("index", "--dir", folder.toString());
      assertEquals(1, r.status(), r.out() + r.err());
      assertTrue(r.err().contains(lockFile + " cannot be opened to write (") && r.err().contains("make it"
          + " writable, or remove it"), r.err());
      assertEquals(1, r.err().strip().lines().count(), r.err());
    } finally {
      if (root) {
        new ProcessBuilder("chattr", "-i", lockFile.toString()).start().waitFor();
      } else {
        lockFile.toFile().setWritable(true);
      }
    }
    CliRun fixed = run("index", "--dir", folder.toString());
    assertEquals(0, fixed.status(), fixed.err());
  }

  private static void assertRefused(CliRun r, Path lockFile, String kind) {
    assertEquals(1, r.status(), r.out() + r.err());
    assertTrue(r.err().contains(lockFile + " is " + kind) && r.err().contains("remove it"), r.err());
    assertEquals(1, r.err().strip().lines().count(), r.err());
  }

  @Test
  void aLuceneWriteLockHeldByAnotherProgramIsNamedAsSuch() throws IOException {
    Path folder = folder();
    assertEquals(0, run("index", "--dir", folder.toString()).status());
    Files.writeString(folder.resolve("note0.txt"), "Penguins huddle together against the cold.");
    Path lucene = folder.resolve(TextIndex.FOLDER).resolve(LuceneIndex.FOLDER);
    try (var d = FSDirectory.open(lucene); IndexWriter other = new IndexWriter(d, new IndexWriterConfig())) {
      CliRun index = run("index", "--dir", folder.toString());
      assertEquals(1, index.status(), index.err());
      assertTrue(index.err().contains("cannot write the Lucene index in " + lucene + ": another program holds its"
          + " write lock (write.lock)"), index.err());
      CliRun search = run("search", "--dir", folder.toString(), "--query", "penguins", "--k", "1");
      assertEquals(0, search.status(), search.err());
      assertTrue(search.err().contains("another program holds its write lock"), search.err());
      assertTrue(search.out().contains("note0.txt"), search.out());
    }
    CliRun again = run("index", "--dir", folder.toString());
    assertEquals(0, again.status(), again.err());
    assertEquals("", again.err());
  }
}
