package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static dev.maxsim4j.cli.QuantizedFiles.bytes;
import static dev.maxsim4j.cli.QuantizedFiles.codes;
import static dev.maxsim4j.cli.QuantizedFiles.floats;
import static dev.maxsim4j.cli.QuantizedFiles.gaussians;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quantized inputs that do not fit their flags or hold bad values: one line naming the tensor, what it holds
 * and what was expected. A flag that does not fit the data exits 2 (the command line is wrong); bad data
 * exits 1, as every other bad input does.
 */
class QuantizedInputErrorsTest {
  @TempDir Path dir;
  private final SplittableRandom rnd = new SplittableRandom(5);

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  @BeforeEach
  void queries() throws IOException {
    Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 2 * 3 * 16), 2, 3, 16);
  }

  private String write(String name, Map<String, NdArray> tensors) throws IOException {
    SafeTensors.write(dir.resolve(name), tensors);
    return p(name);
  }

  private Map<String, NdArray> docs(NdArray.ElementType type, int width, NdArray scales) {
    Map<String, NdArray> t = new LinkedHashMap<>();
    DType dtype = type == NdArray.ElementType.I8 ? DType.INT8 : DType.FLOAT8_E4M3;
    t.put("embeddings", bytes("e", type, new long[] {2, 4, width}, codes(rnd, dtype, 8, width)));
    if (scales != null) {
      t.put("scales", scales);
    }
    return t;
  }

  private CliRun score(String docs, String... more) {
    String[] head = {"score", "--queries", p("q.npy"), "--docs", docs, "--out", p("s.npy")};
    String[] all = java.util.Arrays.copyOf(head, head.length + more.length);
    System.arraycopy(more, 0, all, head.length, more.length);
    return CliRun.of(all);
  }

  @Test
  void flagsThatDoNotFitTheDataAreUsageErrors() throws IOException {
    String i8 = write("i8.safetensors", docs(NdArray.ElementType.I8, 16, null));
    assertOneLineError(score(i8, "--docs-bits", "16"), 2,
        "--docs-bits is for uint8 packed bits, but docs " + i8 + ":embeddings holds int8");
    Npy.writeFloats(dir.resolve("f.npy"), gaussians(rnd, 2 * 4 * 16), 2, 4, 16);
    Npy.writeFloats(dir.resolve("fs.npy"), new float[8], 2, 4);
    assertOneLineError(score(p("f.npy"), "--doc-scales", p("fs.npy")), 2,
        "--doc-scales is for int8, float8_e4m3fn or packed-bit embeddings, but docs " + p("f.npy")
            + " holds float32");
    Map<String, NdArray> f32 = new LinkedHashMap<>();
    f32.put("embeddings", floats("e", new long[] {2, 4, 16}, gaussians(rnd, 2 * 4 * 16)));
    f32.put("s", floats("s", new long[] {2, 4}, new float[8]));
    String floatFile = write("f32.safetensors", f32);
    assertOneLineError(score(floatFile, "--docs-scale-tensor", "s"), 2,
        "--docs-scale-tensor is for int8, float8_e4m3fn or packed-bit embeddings, but docs " + floatFile
            + ":embeddings holds float32");
    Map<String, NdArray> u8 = new LinkedHashMap<>();
    u8.put("embeddings", bytes("e", NdArray.ElementType.U8, new long[] {2, 4, 2}, new byte[16]));
    String bits = write("u8.safetensors", u8);
    assertOneLineError(score(bits), 2, "docs " + bits + ":embeddings holds uint8 [2, 4, 2], which is read as packed"
        + " bits: give the token dimension with --docs-bits D");
    assertOneLineError(score(bits, "--docs-bits", "17"), 2, "--docs-bits 17 packs into 3 bytes per token, but docs "
        + bits + ":embeddings has shape [2, 4, 2] (2 bytes per token); expected --docs-bits between 9 and 16");
    assertOneLineError(score(bits, "--docs-bits", "8"), 2, "--docs-bits 8 packs into 1 byte per token");
    u8.put("embeddings", bytes("e", NdArray.ElementType.U8, new long[] {2, 4, 1}, new byte[8]));
    String oneByte = write("u8-1.safetensors", u8);
    assertOneLineError(score(oneByte, "--docs-bits", "9"), 2, "--docs-bits 9 packs into 2 bytes per token, but docs "
        + oneByte + ":embeddings has shape [2, 4, 1] (1 byte per token); expected --docs-bits between 1 and 8");
    assertOneLineError(score(bits, "--docs-bits", "0"), 2, "expected 1 <= --docs-bits");
    u8.put("embeddings", bytes("e", NdArray.ElementType.U8, new long[] {3, 4, 0}, new byte[0]));
    String empty = write("u8-0.safetensors", u8);
    assertOneLineError(score(empty, "--docs-bits", "1"), 1, "docs " + empty + ":embeddings has shape [3, 4, 0]: 0"
        + " bytes per token; expected ceil(1/8) = 1 byte of packed bits per token");
    assertOneLineError(score(p("f.npy"), "--docs-scale-tensor", "s"), 2,
        "--docs-scale-tensor needs --doc-scales FILE");
  }

  @Test
  void badScalesNameTheTensorAndWhatWasExpected() throws IOException {
    String shape = write("shape.safetensors", docs(NdArray.ElementType.I8, 16,
        floats("s", new long[] {8}, new float[8])));
    assertOneLineError(score(shape), 1, "docs scales " + shape + ":scales have shape [8]; expected [2, 4] (one per"
        + " token of " + shape + ":embeddings [2, 4, 16])");
    String half = write("half.safetensors", docs(NdArray.ElementType.I8, 16,
        new NdArray("s", NdArray.ElementType.F16, new long[] {2, 4}, null, new short[8], null)));
    assertOneLineError(score(half), 1, "docs scales " + half + ":scales hold float16; expected float32 scales [2, 4]");
    float[] nan = new float[8];
    nan[6] = Float.NaN;
    String nanFile = write("nan.safetensors", docs(NdArray.ElementType.F8_E4M3, 16,
        floats("s", new long[] {2, 4}, nan)));
    assertOneLineError(score(nanFile), 1, "docs scales " + nanFile + ":scales hold NaN at [1, 2]; expected finite"
        + " scales");
    float[] inf = new float[8];
    inf[1] = Float.NEGATIVE_INFINITY;
    String infFile = write("inf.safetensors", docs(NdArray.ElementType.I8, 16, floats("s", new long[] {2, 4}, inf)));
    assertOneLineError(score(infFile, "--docs-scale-tensor", "scales"), 1, "hold -Infinity at [0, 1]; expected"
        + " finite scales");
    Map<String, NdArray> f32 = new LinkedHashMap<>();
    f32.put("embeddings", floats("e", new long[] {2, 4, 16}, gaussians(rnd, 2 * 4 * 16)));
    f32.put("scales", floats("s", new long[] {2, 4}, new float[8]));
    String beside = write("beside.safetensors", f32);
    assertOneLineError(score(beside), 1, "docs " + beside + " holds a 'scales' tensor, but its embeddings " + beside
        + ":embeddings hold float32; expected scales only beside I8, F8_E4M3 or U8 embeddings");
  }

  @Test
  void fp8NanBytesAreRefusedWhereTheyAre() throws IOException {
    for (int nanByte : new int[] {0x7f, 0xff}) {
      for (int at : new int[] {0, 37, 127}) {
        byte[] c = codes(rnd, DType.FLOAT8_E4M3, 8, 16);
        c[at] = (byte) nanByte;
        Map<String, NdArray> t = new LinkedHashMap<>();
        t.put("embeddings", bytes("e", NdArray.ElementType.F8_E4M3, new long[] {2, 4, 16}, c));
        String f = write("f8.safetensors", t);
        assertOneLineError(score(f), 1, "docs " + f + ":embeddings holds the float8_e4m3fn NaN byte 0x"
            + Integer.toHexString(nanByte) + " at [" + at / 64 + ", " + at / 16 % 4 + ", " + at % 16
            + "]; expected finite values");
      }
    }
  }

  /**
   * A masked token is padding, which no score reads: fp8 NaN bytes there (a NaN-padded tensor cast to fp8) are not
   * refused, as NaN in a masked float token is not; the scores equal those of the file with that padding as zeros.
   */
  @Test
  void fp8NanBytesInMaskedTokensAreNotRefused() throws IOException {
    byte[] c = codes(rnd, DType.FLOAT8_E4M3, 8, 16);
    boolean[] mask = {true, true, false, true, false, false, true, false};
    byte[] zeroed = c.clone();
    for (int t = 0; t < 8; t++) {
      if (!mask[t]) {
        c[16 * t + t] = (byte) (t % 2 == 0 ? 0x7f : 0xff);
        Arrays.fill(c, 16 * t + 8, 16 * t + 10, (byte) 0x7f);
        Arrays.fill(zeroed, 16 * t, 16 * t + 16, (byte) 0);
      }
    }
    for (boolean packed : new boolean[] {false, true}) {
      String what = packed ? "packed" : "padded";
      long[] shape = packed ? new long[] {8, 16} : new long[] {2, 4, 16};
      long[] maskShape = packed ? new long[] {8} : new long[] {2, 4};
      Map<String, NdArray> t = new LinkedHashMap<>();
      t.put("embeddings", bytes("e", NdArray.ElementType.F8_E4M3, shape, c));
      t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, maskShape, null, null, mask));
      if (packed) {
        t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {3},
            MemorySegment.ofArray(new long[] {0, 4, 8})));
      }
      CliRun r = score(write("nan.safetensors", t));
      assertEquals(0, r.status(), what + ": " + r.err());
      float[] got = Npy.read(dir.resolve("s.npy")).floats();
      t.put("embeddings", bytes("e", NdArray.ElementType.F8_E4M3, shape, zeroed));
      assertEquals(0, score(write("zero.safetensors", t)).status(), what);
      float[] want = Npy.read(dir.resolve("s.npy")).floats();
      assertArrayEquals(want, got, 0f, what);
      // a NaN byte in a valid token is still refused where it is
      c[16 * 3 + 5] = 0x7f;
      t.put("embeddings", bytes("e", NdArray.ElementType.F8_E4M3, shape, c));
      String f = write("valid.safetensors", t);
      assertOneLineError(score(f), 1, "docs " + f + ":embeddings holds the float8_e4m3fn NaN byte 0x7f at "
          + (packed ? "[3, 5]" : "[0, 3, 5]") + "; expected finite values");
      c[16 * 3 + 5] = zeroed[16 * 3 + 5];
    }
  }

  /**
   * A masked token's scale is never read: NaN or an infinity there (a scale computed from NaN padding) is not refused,
   * and the scores equal those with scale 1 there; in a valid token it is refused where it is.
   */
  @Test
  void nonFiniteScalesOfMaskedTokensAreNotRefused() throws IOException {
    byte[] c = codes(rnd, DType.INT8, 8, 16);
    boolean[] mask = {true, false, true, true, false, false, true, false};
    float[] scales = QuantizedFiles.scales(rnd, 8);
    float[] ones = scales.clone();
    float[] bad = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN};
    for (int t = 0, b = 0; t < 8; t++) {
      if (!mask[t]) {
        scales[t] = bad[b++];
        ones[t] = 1f;
      }
    }
    for (boolean packed : new boolean[] {false, true}) {
      String what = packed ? "packed" : "padded";
      long[] shape = packed ? new long[] {8, 16} : new long[] {2, 4, 16};
      long[] tokens = packed ? new long[] {8} : new long[] {2, 4};
      Map<String, NdArray> t = new LinkedHashMap<>();
      t.put("embeddings", bytes("e", NdArray.ElementType.I8, shape, c));
      t.put("scales", floats("s", tokens, scales));
      t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, tokens, null, null, mask));
      if (packed) {
        t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {3},
            MemorySegment.ofArray(new long[] {0, 3, 8})));
      }
      CliRun r = score(write("nan.safetensors", t));
      assertEquals(0, r.status(), what + ": " + r.err());
      float[] got = Npy.read(dir.resolve("s.npy")).floats();
      t.put("scales", floats("s", tokens, ones));
      assertEquals(0, score(write("ones.safetensors", t)).status(), what);
      assertArrayEquals(Npy.read(dir.resolve("s.npy")).floats(), got, 0f, what);
      float[] valid = scales.clone();
      valid[3] = Float.NaN;
      t.put("scales", floats("s", tokens, valid));
      String f = write("valid.safetensors", t);
      assertOneLineError(score(f), 1, "docs scales " + f + ":scales hold NaN at " + (packed ? "[3]" : "[0, 3]")
          + "; expected finite scales");
    }
  }

  @Test
  void otherTypesAreNotEmbeddings() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", new NdArray("e", NdArray.ElementType.BOOL, new long[] {2, 4, 16}, null, null,
        new boolean[128]));
    String f = write("bool.safetensors", t);
    assertOneLineError(score(f), 1, "holds bool; expected float32, float16, bfloat16, int8, float8_e4m3fn or uint8"
        + " packed bits (with --docs-bits) embeddings");
  }
}
