package dev.maxsim4j.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A folder's row-to-file map, and its absence, said in a warning, where it would pass the header's limit. */
class EncodeFilesMapTest {
  @Test
  void aMapPastTheLimitIsLeftOutWithAWarningOfItsOwn() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    List<String> files = List.of("a.txt", "sub/b \"quoted\".md");
    Map<String, String> fits = EncodeCommand.filesOfRows(files, EncodeCommand.FILES_LIMIT, err);
    assertEquals(Map.of(EncodeCommand.FILES, "[\"a.txt\",\"sub/b \\\"quoted\\\".md\"]"), fits);
    assertEquals("", bytes.toString(StandardCharsets.UTF_8));
    // the header holds the array quoted once more: 41 bytes here
    assertEquals(fits, EncodeCommand.filesOfRows(files, 41, err));
    assertEquals("", bytes.toString(StandardCharsets.UTF_8));
    assertEquals(Map.of(), EncodeCommand.filesOfRows(files, 40, err));
    String warning = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(warning.startsWith("maxsim4j: warning: the row-to-file map of 2 files would pass"), warning);
  }
}
