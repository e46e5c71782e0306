package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * {@code .safetensors} files: an 8-byte little-endian header length, a JSON header naming each tensor's
 * dtype, shape and byte range, then the data. The header is validated in full; tensors of F32, F16, BF16,
 * BOOL, U8, I8, F8_E4M3, I32 and I64 are read as views of the memory-mapped file, other dtypes are refused by
 * name.
 */
public final class SafeTensors {
  private SafeTensors() {}

  /** Names of the tensors in a file, in header order. */
  public static List<String> names(Path file) throws IOException {
    return SafeTensorsFile.open(file).names();
  }

  /**
   * Reads one tensor; {@code name} null means the file's only tensor. To read several tensors of one file, open
   * it once with {@link SafeTensorsFile#open}.
   */
  public static NdArray read(Path file, String name) throws IOException {
    return SafeTensorsFile.open(file).read(name);
  }

  /** Writes tensors, streaming each one's data, in the order of {@link #laidOut}. */
  public static void write(Path file, Map<String, NdArray> tensors) throws IOException {
    write(file, tensors, Map.of());
  }

  /**
   * As above, with {@code metadata} as the header's {@code __metadata__} (none where empty). A header over the
   * format's limit, which no reader would open, is refused before the file is written.
   */
  public static void write(Path file, Map<String, NdArray> tensors, Map<String, String> metadata)
      throws IOException {
    byte[] head = header(file.toString(), tensors, metadata);
    if (head.length > SafeTensorsHeader.MAX_HEADER) {
      throw new IllegalArgumentException(file + ": its safetensors header would take " + head.length + " bytes ("
          + Counts.of(tensors.size(), "tensor") + (metadata.isEmpty() ? "" : " and "
          + Counts.of(metadata.size(), "__metadata__ entry", "__metadata__ entries")) + "); expected at most "
          + SafeTensorsHeader.MAX_HEADER + ", the format's limit, which readers keep");
    }
    ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(head.length);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(len.flip());
      ch.write(ByteBuffer.wrap(head));
      for (Map.Entry<String, NdArray> e : laidOut(tensors)) {
        e.getValue().writeTo(ch);
      }
    }
  }

  /**
   * The tensors in the order their data is written: widest elements first (ties in the caller's order), so that
   * after the header, padded to 8 bytes, every tensor starts at a multiple of its element's width, as the format's
   * reference writer lays them out. Readers that view the mapped bytes as float32 or int64 arrays refuse (or fault
   * on) a tensor that starts elsewhere.
   */
  static List<Map.Entry<String, NdArray>> laidOut(Map<String, NdArray> tensors) {
    List<Map.Entry<String, NdArray>> order = new ArrayList<>(tensors.entrySet());
    order.sort(Comparator.comparingInt((Map.Entry<String, NdArray> e) -> e.getValue().type().width()).reversed());
    return order;
  }

  /** The largest header readers open, in bytes (the reference implementation's limit). */
  public static final long MAX_HEADER = SafeTensorsHeader.MAX_HEADER;

  /** Whether the header of {@code tensors} and {@code metadata} is within the format's limit. */
  public static boolean headerFits(Map<String, NdArray> tensors, Map<String, String> metadata) {
    return header("", tensors, metadata).length <= SafeTensorsHeader.MAX_HEADER;
  }

  /** The header's UTF-8 bytes, padded with spaces to a multiple of 8 as the format's writers do. */
  private static byte[] header(String file, Map<String, NdArray> tensors, Map<String, String> metadata) {
    StringBuilder json = new StringBuilder("{");
    if (!metadata.isEmpty()) {
      StringBuilder entries = new StringBuilder();
      metadata.forEach((k, v) -> entries.append(entries.isEmpty() ? "" : ",").append(MiniJson.quote(k)).append(":")
          .append(MiniJson.quote(v)));
      json.append("\"__metadata__\":{").append(entries).append("}");
    }
    long offset = 0;
    for (Map.Entry<String, NdArray> e : laidOut(tensors)) {
      NdArray a = e.getValue();
      StringBuilder shape = new StringBuilder();
      for (long s : a.shape()) {
        shape.append(shape.isEmpty() ? "" : ",").append(s);
      }
      json.append(json.length() > 1 ? "," : "").append(MiniJson.quote(e.getKey()))
          .append(":{\"dtype\":\"").append(SafeTensorsHeader.dtypeName(a.type())).append("\",\"shape\":[")
          .append(shape).append("],\"data_offsets\":[").append(offset).append(",").append(offset + a.byteSize())
          .append("]}");
      offset += a.byteSize();
    }
    json.append("}");
    try {
      // strict: getBytes would write a lone surrogate as '?', a header that reads back as other names
      ByteBuffer encoded = StandardCharsets.UTF_8.newEncoder().encode(CharBuffer.wrap(json));
      int length = encoded.limit();
      byte[] head = Arrays.copyOf(encoded.array(), length + (8 - length % 8) % 8);
      Arrays.fill(head, length, head.length, (byte) ' ');
      return head;
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(file + ": a tensor name or metadata text is not Unicode text (a lone"
          + " surrogate); expected names and metadata that UTF-8 can write");
    }
  }

  static byte[] bytes(MemorySegment s, long from, long count) {
    return s.asSlice(from, count).toArray(ValueLayout.JAVA_BYTE);
  }
}
