package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.constantpool.MemberRefEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The CLI and the LangChain4j integration are automatic modules, compiled on the class path, where javac does
 * not stop an import of the core's internals; this reads their class files and finds none.
 */
class SealedInternalsTest {
  @Test
  void neitherTheCliNorTheLangChain4jIntegrationRefersToTheCoreInternals() throws Exception {
    for (Class<?> c : new Class<?>[] {Main.class, MiniLmTokenEncoder.class}) {
      assertEquals(List.of(), internalReferences(location(c)), "only the bench may use dev.maxsim4j.internal");
    }
    // the check finds what it looks for: the core's public classes do refer to its internals
    assertTrue(internalReferences(location(dev.maxsim4j.MaxSim.class)).stream()
        .anyMatch(r -> r.startsWith("dev/maxsim4j/MaxSim.class -> ")));
  }

  @Test
  void everyFileMovedIntoPlaceGoesThroughTheOneForcedAtomicMove() throws Exception {
    // a move of its own skips the force to disk before the rename: a crash could leave an empty file in place
    List<String> moves = new ArrayList<>();
    forEachClassFile(location(Main.class), (name, bytes) -> {
      for (PoolEntry e : ClassFile.of().parse(bytes).constantPool()) {
        if (e instanceof MemberRefEntry m && m.owner().asInternalName().equals("java/nio/file/Files")
            && m.name().stringValue().equals("move")) {
          moves.add(name);
        }
      }
    });
    assertEquals(List.of("dev/maxsim4j/cli/io/AtomicOutput.class"), moves, "only AtomicOutput.moveIntoPlace moves");
  }

  /** "class file -> referenced name" for each constant naming something under dev/maxsim4j/internal/. */
  private static List<String> internalReferences(Path location) throws IOException {
    List<String> found = new ArrayList<>();
    int[] classes = {0};
    forEachClassFile(location, (name, bytes) -> {
      classes[0]++;
      for (PoolEntry e : ClassFile.of().parse(bytes).constantPool()) {
        if (e instanceof Utf8Entry u && u.stringValue().contains("dev/maxsim4j/internal/")) {
          found.add(name + " -> " + u.stringValue());
        }
      }
    });
    assertTrue(classes[0] > 3, "read the classes of " + location);
    return found;
  }

  private interface ClassFileVisitor {
    void visit(String name, byte[] bytes) throws IOException;
  }

  /** Every .class under a classes folder or in a jar. */
  private static void forEachClassFile(Path location, ClassFileVisitor visitor) throws IOException {
    if (Files.isDirectory(location)) {
      visitTree(location, visitor);
    } else {
      try (FileSystem jar = FileSystems.newFileSystem(location)) {
        visitTree(jar.getPath("/"), visitor);
      }
    }
  }

  private static void visitTree(Path root, ClassFileVisitor visitor) throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(root)) {
      files = walk.filter(p -> p.toString().endsWith(".class") && !p.endsWith("module-info.class")).toList();
    }
    for (Path f : files) {
      visitor.visit(root.relativize(f).toString(), Files.readAllBytes(f));
    }
  }

  private static Path location(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
