package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code .safetensors} files: an 8-byte little-endian header length, a JSON header naming each tensor's
 * dtype, shape and byte range, then the data. Reads F32, F16, BF16, BOOL and U8; writes the same.
 */
public final class SafeTensors {
  private SafeTensors() {}

  /** Names of the tensors in a file, in header order. */
  public static List<String> names(Path file) throws IOException {
    return new ArrayList<>(header(file).keySet());
  }

  /** Reads one tensor; {@code name} null means the file's only tensor. */
  public static NdArray read(Path file, String name) throws IOException {
    Map<String, Object> header = header(file);
    String source = file + (name == null ? "" : ":" + name);
    if (name == null) {
      if (header.size() != 1) {
        throw new IllegalArgumentException(file + " holds " + header.size() + " tensors " + header.keySet()
            + "; name one with the matching --...-tensor option");
      }
      name = header.keySet().iterator().next();
    }
    if (!(header.get(name) instanceof Map<?, ?> info)) {
      throw new IllegalArgumentException(file + " has no tensor '" + name + "'; it holds " + header.keySet());
    }
    String dtype = String.valueOf(info.get("dtype"));
    List<?> shapeList = (List<?>) info.get("shape");
    List<?> offsets = (List<?>) info.get("data_offsets");
    long[] shape = shapeList.stream().mapToLong(o -> ((Number) o).longValue()).toArray();
    long begin = ((Number) offsets.get(0)).longValue();
    long end = ((Number) offsets.get(1)).longValue();
    long n = 1;
    for (long s : shape) {
      n = Math.multiplyExact(n, s);
    }
    int width = switch (dtype) {
      case "F32" -> 4;
      case "F16", "BF16" -> 2;
      case "BOOL", "U8" -> 1;
      default -> throw new IllegalArgumentException(source + " has dtype " + dtype + "; expected F32, F16, BF16, BOOL or U8");
    };
    if (end - begin != n * width) {
      throw new IllegalArgumentException(source + ": data_offsets span " + (end - begin) + " bytes; expected "
          + n * width + " for shape " + java.util.Arrays.toString(shape) + " of " + dtype);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long dataStart = 8 + headerLength(ch, file);
      ByteBuffer buf = ByteBuffer.allocate(Math.toIntExact(end - begin)).order(ByteOrder.LITTLE_ENDIAN);
      ch.read(buf, dataStart + begin);
      if (buf.hasRemaining()) {
        throw new IllegalArgumentException(source + ": file ends before the tensor's data");
      }
      buf.flip();
      int count = Math.toIntExact(n);
      return switch (dtype) {
        case "F32" -> {
          float[] f = new float[count];
          buf.asFloatBuffer().get(f);
          yield NdArray.ofFloats(source, shape, f);
        }
        case "F16", "BF16" -> {
          short[] s = new short[count];
          buf.asShortBuffer().get(s);
          yield new NdArray(source, dtype.equals("F16") ? NdArray.ElementType.F16 : NdArray.ElementType.BF16,
              shape, null, s, null);
        }
        default -> {
          boolean[] b = new boolean[count];
          for (int i = 0; i < count; i++) {
            b[i] = buf.get() != 0;
          }
          yield new NdArray(source, NdArray.ElementType.BOOL, shape, null, null, b);
        }
      };
    }
  }

  /** Writes tensors in order; each value is an {@link NdArray}. */
  public static void write(Path file, Map<String, NdArray> tensors) throws IOException {
    StringBuilder json = new StringBuilder("{");
    long offset = 0;
    List<byte[]> bodies = new ArrayList<>();
    for (Map.Entry<String, NdArray> e : tensors.entrySet()) {
      NdArray a = e.getValue();
      byte[] body = bytes(a);
      bodies.add(body);
      StringBuilder shape = new StringBuilder();
      for (long s : a.shape()) {
        shape.append(shape.isEmpty() ? "" : ",").append(s);
      }
      String dtype = switch (a.type()) {
        case F32 -> "F32";
        case F16 -> "F16";
        case BF16 -> "BF16";
        case BOOL -> "BOOL";
      };
      json.append(json.length() > 1 ? "," : "").append(MiniJson.quote(e.getKey()))
          .append(":{\"dtype\":\"").append(dtype).append("\",\"shape\":[").append(shape)
          .append("],\"data_offsets\":[").append(offset).append(",").append(offset + body.length).append("]}");
      offset += body.length;
    }
    json.append("}");
    byte[] head = json.toString().getBytes(StandardCharsets.UTF_8);
    int pad = (8 - head.length % 8) % 8;
    ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(head.length + pad);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(len.flip());
      ch.write(ByteBuffer.wrap(head));
      ch.write(ByteBuffer.wrap(" ".repeat(pad).getBytes(StandardCharsets.US_ASCII)));
      for (byte[] b : bodies) {
        ch.write(ByteBuffer.wrap(b));
      }
    }
  }

  private static byte[] bytes(NdArray a) {
    return switch (a.type()) {
      case F32 -> {
        ByteBuffer b = ByteBuffer.allocate(a.floats().length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(a.floats());
        yield b.array();
      }
      case F16, BF16 -> {
        ByteBuffer b = ByteBuffer.allocate(a.halfs().length * 2).order(ByteOrder.LITTLE_ENDIAN);
        b.asShortBuffer().put(a.halfs());
        yield b.array();
      }
      case BOOL -> {
        byte[] b = new byte[a.flags().length];
        for (int i = 0; i < b.length; i++) {
          b[i] = (byte) (a.flags()[i] ? 1 : 0);
        }
        yield b;
      }
    };
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> header(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long length = headerLength(ch, file);
      ByteBuffer buf = ByteBuffer.allocate((int) length);
      ch.read(buf, 8);
      Object parsed;
      try {
        parsed = MiniJson.parse(new String(buf.array(), StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(file + " has a bad safetensors header: " + e.getMessage());
      }
      if (!(parsed instanceof Map<?, ?> map)) {
        throw new IllegalArgumentException(file + " has a safetensors header that is not a JSON object");
      }
      Map<String, Object> tensors = new LinkedHashMap<>((Map<String, Object>) map);
      tensors.remove("__metadata__");
      return tensors;
    }
  }

  private static long headerLength(FileChannel ch, Path file) throws IOException {
    ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    ch.read(len, 0);
    long length = len.flip().remaining() == 8 ? len.getLong() : -1;
    if (length <= 0 || length > Math.min(100_000_000L, ch.size() - 8)) {
      throw new IllegalArgumentException(file + " is not a .safetensors file (header length " + length + ")");
    }
    return length;
  }
}
