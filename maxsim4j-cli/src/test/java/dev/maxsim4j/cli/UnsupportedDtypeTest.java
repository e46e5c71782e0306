package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;

import dev.maxsim4j.cli.io.Npy;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An array of a dtype no command reads (NumPy's default float64, an F64 tensor) is refused naming the argument that
 * gave it and what that argument takes: it was "Q.npy has dtype '<f8 (float64)'; expected float32, float16, bool,
 * uint8, int8, int32 or int64", which named neither the option nor the types an embeddings, mask or offsets file
 * may hold.
 */
class UnsupportedDtypeTest {
  @TempDir Path dir;

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  /** A .npy of {@code descr} and {@code shape} holding zeros of {@code width} bytes each. */
  private void npy(String name, String descr, int width, long... shape) throws IOException {
    StringBuilder dims = new StringBuilder();
    long n = 1;
    for (long s : shape) {
      dims.append(s).append(", ");
      n *= s;
    }
    String dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    int pad = 64 - (10 + dict.length() + 1) % 64;
    byte[] header = (dict + " ".repeat(pad % 64) + "\n").getBytes(StandardCharsets.US_ASCII);
    ByteBuffer b = ByteBuffer.allocate(10 + header.length + (int) (n * width)).order(ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}).putShort((short) header.length).put(header);
    Files.write(dir.resolve(name), b.array());
  }

  /** A .safetensors holding one F64 tensor "embeddings" of {@code shape}, zeros. */
  private void f64Safetensors(String name, long... shape) throws IOException {
    long n = 1;
    StringBuilder dims = new StringBuilder();
    for (long s : shape) {
      dims.append(dims.isEmpty() ? "" : ",").append(s);
      n *= s;
    }
    String json = "{\"embeddings\":{\"dtype\":\"F64\",\"shape\":[" + dims + "],\"data_offsets\":[0," + 8 * n + "]}}";
    byte[] h = json.getBytes(StandardCharsets.US_ASCII);
    ByteBuffer b = ByteBuffer.allocate(8 + h.length + (int) (8 * n)).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(h.length).put(h);
    Files.write(dir.resolve(name), b.array());
  }

  @Test
  void float64EmbeddingsNameTheirOptionAndTheTypesItTakes() throws IOException {
    npy("q64.npy", "<f8", 8, 2, 3, 4);
    Npy.writeFloats(dir.resolve("d.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    assertOneLineError(CliRun.of("score", "--queries", p("q64.npy"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "--queries " + p("q64.npy") + " has dtype '<f8 (float64)'; expected float32 '<f4', float16 '<f2', int8 '|i1'"
            + " or uint8 '|u1' (packed bits) embeddings");
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("q64.npy"), "--out", p("s.npy")), 1,
        "--docs " + p("q64.npy") + " has dtype '<f8 (float64)'");
    f64Safetensors("e64.safetensors", 5, 4);
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("e64.safetensors"), "--out",
        p("s.npy")), 1, "--docs " + p("e64.safetensors") + ":embeddings has dtype \"F64\"; expected F32, F16, BF16,"
            + " I8, F8_E4M3 or U8 (packed bits) embeddings");
    assertOneLineError(CliRun.of("quantize", "--in", p("e64.safetensors"), "--to", "int8", "--out",
        p("c.safetensors")), 1, "quantize: --in " + p("e64.safetensors") + ":embeddings has dtype \"F64\"; expected"
            + " F32, F16 or BF16 embeddings to quantize");
  }

  /** A file that is not what its name says was refused naming the file alone: "q.txt is not a .npy file". */
  @Test
  void aFileThatCannotBeReadNamesItsOptionToo() throws IOException {
    Npy.writeFloats(dir.resolve("d.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Files.writeString(dir.resolve("q.npy"), "one text per line\n");
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("s.npy")), 1,
        "--queries " + p("q.npy") + " is not a .npy file");
    byte[] whole = Files.readAllBytes(dir.resolve("d.npy"));
    Files.write(dir.resolve("cut.npy"), java.util.Arrays.copyOf(whole, whole.length - 8));
    assertOneLineError(CliRun.of("score", "--queries", p("d.npy"), "--docs", p("cut.npy"), "--out", p("s.npy")), 1,
        "--docs " + p("cut.npy") + " holds");
    Files.writeString(dir.resolve("m.npy"), "not a mask");
    assertOneLineError(CliRun.of("score", "--queries", p("d.npy"), "--docs", p("d.npy"), "--doc-mask", p("m.npy"),
        "--out", p("s.npy")), 1, "--doc-mask " + p("m.npy") + " is not a .npy file");
    Files.writeString(dir.resolve("e.safetensors"), "not a safetensors file at all");
    assertOneLineError(CliRun.of("score", "--queries", p("d.npy"), "--docs", p("e.safetensors"), "--out",
        p("s.npy")), 1, "--docs " + p("e.safetensors") + " is not a .safetensors file");
    assertOneLineError(CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "int8", "--out", p("c.safetensors")),
        1, "--in " + p("e.safetensors") + " is not a .safetensors file");
  }

  @Test
  void masksOffsetsAndScalesOfAnUnreadDtypeNameTheirOption() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), new float[2 * 3 * 4], 2, 3, 4);
    Npy.writeFloats(dir.resolve("t.npy"), new float[5 * 4], 5, 4);
    npy("m.npy", "<f8", 8, 2, 3);
    npy("o.npy", "<f8", 8, 3);
    npy("s.npy", "<f8", 8, 5);
    npy("i8.npy", "|i1", 1, 5, 4);
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--query-mask", p("m.npy"), "--docs", p("q.npy"),
        "--out", p("x.npy")), 1, "--query-mask " + p("m.npy") + " has dtype '<f8 (float64)'; expected bool '|b1',"
            + " uint8 '|u1', int32 '<i4' or int64 '<i8' (0 or 1) mask");
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("t.npy"), "--doc-offsets", p("o.npy"),
        "--out", p("x.npy")), 1, "--doc-offsets " + p("o.npy") + " has dtype '<f8 (float64)'; expected int32 '<i4'"
            + " or int64 '<i8' offsets");
    assertOneLineError(CliRun.of("score", "--queries", p("q.npy"), "--docs", p("i8.npy"), "--doc-scales", p("s.npy"),
        "--out", p("x.npy")), 1, "--doc-scales " + p("s.npy") + " has dtype '<f8 (float64)'; expected float32 '<f4'"
            + " scales");
  }
}
