package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Where a written .safetensors file keeps each tensor's bytes, read from its header as another reader would. */
public final class SafeTensorsLayout {
  private SafeTensorsLayout() {}

  /** The file positions {@code [begin, end)} of tensor {@code name}'s bytes in {@code file}. */
  public static long[] bytesOf(byte[] file, String name) {
    long headerLength = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).getLong();
    String header = new String(file, 8, (int) headerLength, StandardCharsets.UTF_8);
    Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\":\\{[^}]*\"data_offsets\":\\[(\\d+),(\\d+)\\]")
        .matcher(header);
    assertTrue(m.find(), name + " in " + header);
    return new long[] {8 + headerLength + Long.parseLong(m.group(1)), 8 + headerLength + Long.parseLong(m.group(2))};
  }

  /** Every tensor of {@code file} starts at a multiple of its element's width, as readers that map them need. */
  public static void assertAligned(Path file) throws IOException {
    byte[] all = Files.readAllBytes(file);
    for (String name : SafeTensors.names(file)) {
      int width = SafeTensors.read(file, name).type().width();
      long begin = bytesOf(all, name)[0];
      assertEquals(0, begin % width, file.getFileName() + ": " + name + " starts at byte " + begin);
    }
  }
}
