package dev.maxsim4j.cli.io;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A .safetensors header checked against the format: a JSON object of tensors, each an object of exactly
 * {@code dtype} (a string), {@code shape} (non-negative integers) and {@code data_offsets} (two integers
 * {@code begin <= end} inside the file, spanning the tensor's bytes), no two tensors overlapping; plus an
 * optional {@code __metadata__} object, of which the entries whose values are strings are kept and the others named.
 */
record SafeTensorsHeader(Map<String, Tensor> tensors, Map<String, String> metadata, List<String> otherMetadata,
    long dataStart) {
  /** The prefix of the __metadata__ keys this project writes and reads. */
  private static final String PROJECT_KEYS = "maxsim4j.";

  /** Larger headers are refused (the reference implementation's limit). */
  static final long MAX_HEADER = 100_000_000L;
  /** The most axes a shape may have (as for .npy). */
  static final int MAX_RANK = 64;
  /**
   * The most JSON values a header may hold, about 100,000 tensors: far more than an embeddings file has, and few
   * enough that the parsed header takes some hundred MiB of heap, not gigabytes.
   */
  static final long MAX_VALUES = 1_000_000L;
  private static final Set<String> FIELDS = Set.of("dtype", "shape", "data_offsets");
  /** Byte widths of the format's dtypes, readable or not, so that every tensor's span is checked. */
  private static final Map<String, Integer> WIDTHS = Map.ofEntries(Map.entry("BOOL", 1), Map.entry("U8", 1),
      Map.entry("I8", 1), Map.entry("F8_E4M3", 1), Map.entry("F8_E5M2", 1), Map.entry("I16", 2),
      Map.entry("U16", 2), Map.entry("F16", 2), Map.entry("BF16", 2), Map.entry("I32", 4), Map.entry("U32", 4),
      Map.entry("F32", 4), Map.entry("I64", 8), Map.entry("U64", 8), Map.entry("F64", 8));

  record Tensor(String name, String dtype, long[] shape, long begin, long end) {}

  /**
   * Where {@code text}, the header read up to an error, begins with a whole JSON object and has more after it (or
   * where the error came {@code after} its end), the likely cause: a length field too large, which takes in the
   * data's first bytes; else "".
   */
  private static String lengthHint(String text, boolean after, long length) {
    int end = text.lastIndexOf('}');
    if (end < 0 || !after && text.substring(end + 1).isBlank()) {
      return "";
    }
    String object = text.substring(0, end + 1);
    try {
      if (!(MiniJson.parse(object, Integer.MAX_VALUE, MAX_VALUES) instanceof Map<?, ?>)) {
        return "";
      }
    } catch (IllegalArgumentException e) {
      return "";
    }
    return "; its JSON object ends at byte " + (8 + object.getBytes(StandardCharsets.UTF_8).length)
        + ", so its length field (" + length + ") may be too large";
  }

  static SafeTensorsHeader read(Path file, MemorySegment all) {
    long size = all.byteSize();
    if (size < 8) {
      throw new IllegalArgumentException(file + " is not a .safetensors file (" + Counts.of(size, "byte")
          + ", too short)");
    }
    long length = ByteBuffer.wrap(SafeTensors.bytes(all, 0, 8)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    if (length > MAX_HEADER && length <= size - 8) {
      throw new IllegalArgumentException(file + " has a safetensors header of " + length + " bytes; expected at most "
          + MAX_HEADER + " (the format's limit, which other readers keep too)");
    }
    if (length <= 0 || length > size - 8) {
      throw new IllegalArgumentException(file + " is not a .safetensors file (header length " + length + ", file "
          + size + " bytes)");
    }
    String text;
    ByteBuffer bytes = ByteBuffer.wrap(SafeTensors.bytes(all, 8, length));
    CharBuffer decoded = CharBuffer.allocate((int) length);
    if (StandardCharsets.UTF_8.newDecoder().decode(bytes, decoded, true).isError()) {
      throw new IllegalArgumentException(file + " has a safetensors header that is not UTF-8 (at byte "
          + (8 + bytes.position()) + ")" + lengthHint(decoded.flip().toString(), true, length));
    }
    text = decoded.flip().toString();
    // the format puts the object at the header's first byte: other readers (safetensors) refuse JSON's space before it
    if (" \t\r\n".indexOf(text.charAt(0)) >= 0) {
      throw new IllegalArgumentException(file + " has a bad safetensors header: it starts with "
          + Printable.character(text.charAt(0), '\'') + "; expected '{' at its first byte");
    }
    Object parsed;
    try {
      // arrays are bounded by the values a header may hold; a shape's axes are checked as its tensor is read, so an
      // array under __metadata__, which means nothing here, is left unread whatever its length
      parsed = MiniJson.parse(text, Integer.MAX_VALUE, MAX_VALUES);
    } catch (IllegalArgumentException e) {
      String limits = e.getMessage().contains(" values") ? "; expected a header of at most " + MAX_VALUES
          + " JSON values (some " + MAX_VALUES / 10 + " tensors)" : "";
      throw new IllegalArgumentException(file + " has a bad safetensors header: " + e.getMessage() + limits
          + lengthHint(text, false, length));
    }
    if (!(parsed instanceof Map<?, ?> map)) {
      throw new IllegalArgumentException(file + " has a safetensors header that is not a JSON object");
    }
    long dataStart = 8 + length;
    long dataSize = size - dataStart;
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    Map<String, String> metadata = new LinkedHashMap<>();
    List<String> otherMetadata = new ArrayList<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      String name = (String) e.getKey();
      if (name.equals("__metadata__")) {
        if (e.getValue() == null) {
          continue; // null is no metadata, as the format's reference reader takes it
        }
        if (!(e.getValue() instanceof Map<?, ?> entries)) {
          throw new IllegalArgumentException(file + ": safetensors __metadata__ is " + kind(e.getValue())
              + "; expected a JSON object");
        }
        // the format's metadata maps strings to strings; other values, which some writers leave, mean nothing here,
        // except under this project's own keys, where a record that is not read must not pass unseen
        entries.forEach((k, v) -> {
          if (v instanceof String value) {
            metadata.put((String) k, value);
          } else if (((String) k).startsWith(PROJECT_KEYS)) {
            throw new IllegalArgumentException(file + ": safetensors __metadata__ entry " + shown(k) + " is "
                + kind(v) + "; expected a string, as quantize writes it");
          } else {
            otherMetadata.add((String) k);
          }
        });
        continue;
      }
      tensors.put(name, tensor(file, name, e.getValue(), dataSize));
    }
    checkLayout(file, tensors.values(), dataSize);
    return new SafeTensorsHeader(tensors, metadata, otherMetadata, dataStart);
  }

  private static Tensor tensor(Path file, String name, Object value, long dataSize) {
    String where = file + ": tensor " + MiniJson.shown(name);
    if (!(value instanceof Map<?, ?> info)) {
      throw new IllegalArgumentException(where + " is " + kind(value) + "; expected an object with dtype, shape"
          + " and data_offsets");
    }
    for (Object key : info.keySet()) {
      if (!FIELDS.contains(key)) {
        throw new IllegalArgumentException(where + " has an unknown field " + MiniJson.shown((String) key)
            + "; expected dtype, shape and data_offsets");
      }
    }
    for (String field : List.of("dtype", "shape", "data_offsets")) {
      if (!info.containsKey(field)) {
        throw new IllegalArgumentException(where + " has no \"" + field + "\"");
      }
    }
    if (!(info.get("dtype") instanceof String dtype)) {
      throw new IllegalArgumentException(where + " has a dtype that is " + kind(info.get("dtype"))
          + "; expected a string such as \"F32\"");
    }
    if (info.get("shape") instanceof List<?> axes && axes.size() > MAX_RANK) {
      throw new IllegalArgumentException(where + " has a shape of " + axes.size() + " axes; expected at most "
          + MAX_RANK);
    }
    long[] shape = integers(where, "shape", info.get("shape"), -1);
    long[] offsets = integers(where, "data_offsets", info.get("data_offsets"), 2);
    if (offsets[0] > offsets[1] || offsets[1] > dataSize) {
      throw new IllegalArgumentException(where + " has data_offsets " + Arrays.toString(offsets)
          + "; expected begin <= end <= " + dataSize + " (the data bytes in the file)");
    }
    Integer width = WIDTHS.get(dtype);
    if (width != null) {
      long bytes = NdArray.elements(where, shape, null);
      if (bytes > Long.MAX_VALUE / width || bytes * width != offsets[1] - offsets[0]) {
        throw new IllegalArgumentException(where + ": data_offsets " + Arrays.toString(offsets) + " span "
            + Counts.of(offsets[1] - offsets[0], "byte") + "; expected "
            + (bytes > Long.MAX_VALUE / width ? "more than 2^63" : String.valueOf(bytes * width))
            + " for shape " + Arrays.toString(shape) + " of " + dtype);
      }
    }
    return new Tensor(name, dtype, shape, offsets[0], offsets[1]);
  }

  /** A JSON array of non-negative integers ({@code count} of them unless negative). */
  private static long[] integers(String where, String field, Object value, int count) {
    String expected = count < 0 ? "an array of non-negative integers" : "an array of " + count
        + " non-negative integers";
    if (!(value instanceof List<?> list) || (count >= 0 && list.size() != count)) {
      throw new IllegalArgumentException(where + " has " + field + " " + shown(value) + "; expected " + expected);
    }
    long[] out = new long[list.size()];
    for (int i = 0; i < out.length; i++) {
      if (!(list.get(i) instanceof Long v) || v < 0) {
        throw new IllegalArgumentException(where + " has " + field + " " + shown(value) + "; expected " + expected);
      }
      out[i] = v;
    }
    return out;
  }

  /**
   * The format's layout: the tensors' byte ranges tile the data section exactly, no two overlapping, no hole
   * between them and nothing after the last (a file that breaks it is damaged or was not written as safetensors).
   */
  private static void checkLayout(Path file, java.util.Collection<Tensor> tensors, long dataSize) {
    List<Tensor> sorted = new ArrayList<>(tensors);
    sorted.sort(Comparator.comparingLong(Tensor::begin).thenComparingLong(Tensor::end));
    long covered = 0;
    String last = null;
    for (Tensor t : sorted) {
      if (t.begin() < covered) {
        throw new IllegalArgumentException(file + ": tensors " + MiniJson.shown(last) + " and "
            + MiniJson.shown(t.name()) + " overlap (" + MiniJson.shown(t.name()) + " starts at byte " + t.begin()
            + " of the data, before byte " + covered + " where the other ends)");
      }
      if (t.begin() > covered) {
        throw new IllegalArgumentException(file + ": bytes " + covered + " to " + t.begin() + " of the data belong"
            + " to no tensor (before " + MiniJson.shown(t.name()) + "); expected the tensors' data_offsets to"
            + " cover the data with no hole");
      }
      covered = t.end();
      last = t.name();
    }
    if (covered != dataSize) {
      throw new IllegalArgumentException(file + ": the data section holds " + Counts.of(dataSize, "byte")
          + " but its tensors end at byte " + covered + "; expected no bytes after the last tensor");
    }
  }

  private static String kind(Object value) {
    return switch (value) {
      case null -> "null";
      case Map<?, ?> m -> "an object";
      case List<?> l -> "an array";
      case String s -> "a string";
      case Boolean b -> "a boolean";
      default -> "a number";
    };
  }

  private static String shown(Object value) {
    String s = value instanceof List<?> l && l.size() > 8 ? "an array of " + l.size() + " entries"
        : MiniJson.text(value);
    return Printable.of(s);
  }

  static String dtypeName(NdArray.ElementType type) {
    return switch (type) {
      case F32 -> "F32";
      case F16 -> "F16";
      case BF16 -> "BF16";
      case BOOL -> "BOOL";
      case U8 -> "U8";
      case I8 -> "I8";
      case F8_E4M3 -> "F8_E4M3";
      case I32 -> "I32";
      case I64 -> "I64";
    };
  }
}
