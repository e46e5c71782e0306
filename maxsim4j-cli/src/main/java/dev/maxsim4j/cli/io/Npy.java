package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * NumPy {@code .npy} files (format versions 1-3): reads little-endian float32, float16, bool and uint8 in C
 * order; writes float32.
 */
public final class Npy {
  private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
  private static final Pattern DESCR = Pattern.compile("'descr'\\s*:\\s*'([^']*)'");
  private static final Pattern FORTRAN = Pattern.compile("'fortran_order'\\s*:\\s*(True|False)");
  private static final Pattern SHAPE = Pattern.compile("'shape'\\s*:\\s*\\(([^)]*)\\)");

  private Npy() {}

  public static NdArray read(Path file) throws IOException {
    String name = file.toString();
    ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    if (buf.remaining() < 10) {
      throw new IllegalArgumentException(name + " is not a .npy file (too short)");
    }
    for (byte b : MAGIC) {
      if (buf.get() != b) {
        throw new IllegalArgumentException(name + " is not a .npy file (bad magic)");
      }
    }
    int major = buf.get();
    buf.get();
    int headerLength = major == 1 ? Short.toUnsignedInt(buf.getShort()) : buf.getInt();
    if (headerLength < 0 || headerLength > buf.remaining()) {
      throw new IllegalArgumentException(name + ": header length " + headerLength + " exceeds the file");
    }
    byte[] hb = new byte[headerLength];
    buf.get(hb);
    String header = new String(hb, major >= 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
    String descr = find(DESCR, header, name, "descr");
    if ("True".equals(find(FORTRAN, header, name, "fortran_order"))) {
      throw new IllegalArgumentException(name + " is in Fortran order; expected C order (np.ascontiguousarray)");
    }
    long[] shape = parseShape(find(SHAPE, header, name, "shape"), name);
    long n = 1;
    for (long s : shape) {
      n = Math.multiplyExact(n, s);
    }
    int width = switch (descr) {
      case "<f4" -> 4;
      case "<f2", "<u2" -> 2;
      case "|b1", "|u1", "<u1", "|i1" -> 1;
      default -> throw new IllegalArgumentException(name + " has dtype '" + descr
          + "'; expected float32 (<f4), float16 (<f2), bool (|b1) or uint8 (|u1)");
    };
    if ((long) width * n != buf.remaining()) {
      throw new IllegalArgumentException(name + " holds " + buf.remaining() + " data bytes; expected "
          + width * n + " for shape " + java.util.Arrays.toString(shape) + " of " + descr);
    }
    int count = Math.toIntExact(n);
    return switch (width) {
      case 4 -> {
        float[] f = new float[count];
        buf.asFloatBuffer().get(f);
        yield NdArray.ofFloats(name, shape, f);
      }
      case 2 -> {
        short[] s = new short[count];
        buf.asShortBuffer().get(s);
        yield new NdArray(name, NdArray.ElementType.F16, shape, null, s, null);
      }
      default -> {
        boolean[] b = new boolean[count];
        for (int i = 0; i < count; i++) {
          b[i] = buf.get() != 0;
        }
        yield new NdArray(name, NdArray.ElementType.BOOL, shape, null, null, b);
      }
    };
  }

  /** Writes float32 data of the given shape. */
  public static void writeFloats(Path file, float[] data, long... shape) throws IOException {
    ByteBuffer body = ByteBuffer.allocate(data.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    body.asFloatBuffer().put(data);
    write(file, "<f4", shape, body.array());
  }

  /** Writes float16 bits of the given shape. */
  public static void writeHalfs(Path file, short[] data, long... shape) throws IOException {
    ByteBuffer body = ByteBuffer.allocate(data.length * 2).order(ByteOrder.LITTLE_ENDIAN);
    body.asShortBuffer().put(data);
    write(file, "<f2", shape, body.array());
  }

  /** Writes a bool array of the given shape. */
  public static void writeBools(Path file, boolean[] data, long... shape) throws IOException {
    byte[] body = new byte[data.length];
    for (int i = 0; i < data.length; i++) {
      body[i] = (byte) (data[i] ? 1 : 0);
    }
    write(file, "|b1", shape, body);
  }

  private static void write(Path file, String descr, long[] shape, byte[] body) throws IOException {
    StringBuilder dims = new StringBuilder();
    for (long s : shape) {
      dims.append(s).append(", ");
    }
    if (shape.length > 1) {
      dims.setLength(dims.length() - 1);
    }
    String dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims.toString().trim() + "), }";
    int unpadded = MAGIC.length + 2 + 2 + dict.length() + 1;
    int pad = (64 - unpadded % 64) % 64;
    String header = dict + " ".repeat(pad) + "\n";
    ByteBuffer head = ByteBuffer.allocate(MAGIC.length + 4 + header.length()).order(ByteOrder.LITTLE_ENDIAN);
    head.put(MAGIC).put((byte) 1).put((byte) 0).putShort((short) header.length());
    head.put(header.getBytes(StandardCharsets.ISO_8859_1));
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(head.flip());
      ch.write(ByteBuffer.wrap(body));
    }
  }

  private static String find(Pattern p, String header, String name, String key) {
    Matcher m = p.matcher(header);
    if (!m.find()) {
      throw new IllegalArgumentException(name + ": .npy header has no '" + key + "': " + header.trim());
    }
    return m.group(1);
  }

  private static long[] parseShape(String text, String name) {
    List<Long> dims = new ArrayList<>();
    for (String part : text.split(",")) {
      String t = part.trim();
      if (!t.isEmpty()) {
        try {
          dims.add(Long.parseLong(t));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(name + ": bad shape entry '" + t + "'");
        }
      }
    }
    return dims.stream().mapToLong(Long::longValue).toArray();
  }
}
