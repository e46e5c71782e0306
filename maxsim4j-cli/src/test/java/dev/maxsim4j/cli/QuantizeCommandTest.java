package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.CliRun.assertOneLineError;
import static dev.maxsim4j.cli.QuantizedFiles.gaussians;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.cli.io.SafeTensorsLayout;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** quantize writes what TokenBatch.quantize makes, in the layout score reads, and score ranks it the same. */
class QuantizeCommandTest {
  private static final String[] TO = {"int8", "fp8", "binary"};
  private static final DType[] TYPES = {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};

  @TempDir Path dir;
  private final SplittableRandom rnd = new SplittableRandom();

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  private static short[] bf16(float[] f) {
    return DType.BFLOAT16.narrow(f);
  }

  @Test
  void paddedWithMaskMatchesTheLibrarysQuantizeAndScores() throws IOException {
    for (int d : new int[] {1, 3, 33, 127, 513}) {
      int n = 3;
      int l = 4;
      float[] e = gaussians(rnd, n * l * d);
      java.util.Arrays.fill(e, 0, d, 0f); // an all-zero token
      boolean[] mask = new boolean[n * l];
      for (int i = 0; i < mask.length; i++) {
        mask[i] = rnd.nextInt(3) != 0;
      }
      Map<String, NdArray> t = new LinkedHashMap<>();
      t.put("embeddings", new NdArray("e", NdArray.ElementType.BF16, new long[] {n, l, d}, null, bf16(e), null));
      t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {n, l}, null, null, mask));
      SafeTensors.write(dir.resolve("e.safetensors"), t);
      float[] q = gaussians(rnd, 2 * 5 * d);
      Npy.writeFloats(dir.resolve("q.npy"), q, 2, 5, d);
      TokenBatch source = TokenBatch.ofHalfs(DType.BFLOAT16, bf16(e), n, l, d);
      for (int x = 0; x < TO.length; x++) {
        DType dtype = TYPES[x];
        String what = TO[x] + " d=" + d;
        CliRun r = CliRun.of("quantize", "--in", p("e.safetensors"), "--to", TO[x], "--out", p("c.safetensors"));
        assertEquals(0, r.status(), what + ": " + r.err());
        // a token's codes and scale against its bf16 values: at d = 1 and 3 the file grows, and says so
        boolean smaller = dtype.bytesPerToken(d) + 4 <= 2 * d;
        assertTrue(r.out().contains("mask copied") && r.out().contains(smaller ? "x smaller" : "x larger"), r.out());
        TokenBatch expected = source.quantize(dtype);
        assertEquals(List.of("scales", "embeddings", "mask"), SafeTensors.names(dir.resolve("c.safetensors")));
        SafeTensorsLayout.assertAligned(dir.resolve("c.safetensors"));
        NdArray codes = SafeTensors.read(dir.resolve("c.safetensors"), "embeddings");
        assertEquals(TokenType.elementType(dtype), codes.type(), what);
        assertArrayEquals(new long[] {n, l, dtype.bytesPerToken(d)}, codes.shape(), what);
        NdArray scales = SafeTensors.read(dir.resolve("c.safetensors"), "scales");
        assertArrayEquals(new long[] {n, l}, scales.shape());
        assertArrayEquals(expected.scales(), scales.floats(), 0f, what);
        assertArrayEquals(mask, SafeTensors.read(dir.resolve("c.safetensors"), "mask").flags());
        // the stored bytes decode to exactly the library's quantized values
        TokenBatch stored = TokenBatch.ofBytes(dtype, codes.bytes(), scales.floats(), n, l, d);
        assertArrayEquals(expected.toFloatArray(), stored.toFloatArray(), 0f, what);

        String[] score = dtype == DType.BINARY
            ? new String[] {"score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--docs-bits",
                String.valueOf(d), "--out", p("s.npy")}
            : new String[] {"score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--out", p("s.npy")};
        CliRun s = CliRun.of(score);
        assertEquals(0, s.status(), what + ": " + s.err());
        try (MaxSim m = MaxSim.create()) {
          float[][] api = m.scores(TokenBatch.ofFloats(q, 2, 5, d), expected.withMask(mask));
          float[] got = Npy.read(dir.resolve("s.npy")).floats();
          for (int i = 0; i < 2; i++) {
            assertArrayEquals(api[i], java.util.Arrays.copyOfRange(got, i * n, i * n + n), 0f, what);
          }
        }
      }
    }
  }

  @Test
  void aFileOfNoTokensIsQuantizedAndSaysSo() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", new NdArray("e", NdArray.ElementType.F32, new long[] {2, 0, 8}, new float[0], null, null));
    SafeTensors.write(dir.resolve("empty.safetensors"), t);
    CliRun r = CliRun.of("quantize", "--in", p("empty.safetensors"), "--to", "int8", "--out", p("c0.safetensors"));
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("no tokens") && !r.out().contains("0.00x"), r.out());
    assertArrayEquals(new long[] {2, 0, 8}, SafeTensors.read(dir.resolve("c0.safetensors"), "embeddings").shape());
  }

  /**
   * A hostile tester's finding: quantize wrote codes of 2^31-1 rows of no token, which score refuses (rows are Java
   * arrays). A shape score cannot read as a batch is now refused as score refuses it, before any file is written.
   */
  @Test
  void aShapeScoreCannotReadIsRefusedAsScoreRefusesIt() throws IOException {
    Map<String, NdArray> q = new LinkedHashMap<>();
    q.put("embeddings", new NdArray("q", NdArray.ElementType.F32, new long[] {1, 1, 4}, new float[4], null, null));
    SafeTensors.write(dir.resolve("q.safetensors"), q);
    for (long rows : new long[] {Integer.MAX_VALUE, Integer.MAX_VALUE - 7, 1L << 30}) {
      Map<String, NdArray> t = new LinkedHashMap<>();
      t.put("embeddings", new NdArray("e", NdArray.ElementType.F32, new long[] {rows, 0, 4}, new float[0], null,
          null));
      SafeTensors.write(dir.resolve("rows.safetensors"), t);
      CliRun score = CliRun.of("score", "--queries", p("q.safetensors"), "--docs", p("rows.safetensors"), "--out",
          p("s.npy"));
      assertOneLineError(score, 1, "rows");
      CliRun r = CliRun.of("quantize", "--in", p("rows.safetensors"), "--to", "int8", "--out", p("c.safetensors"));
      String why = score.err().substring(score.err().indexOf(":embeddings: ")).strip();
      assertOneLineError(r, 1, "quantize: --in " + dir.resolve("rows.safetensors") + why);
      assertFalse(Files.exists(dir.resolve("c.safetensors")), "no output written for " + rows + " rows");
    }
    // a million rows of no token, which score reads, are quantized
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", new NdArray("e", NdArray.ElementType.F32, new long[] {1 << 20, 0, 4}, new float[0], null,
        null));
    SafeTensors.write(dir.resolve("rows.safetensors"), t);
    CliRun r = CliRun.of("quantize", "--in", p("rows.safetensors"), "--to", "int8", "--out", p("c.safetensors"));
    assertEquals(0, r.status(), r.err());
    CliRun score = CliRun.of("score", "--queries", p("q.safetensors"), "--docs", p("c.safetensors"), "--out",
        p("s.npy"));
    assertEquals(0, score.status(), score.err());
  }

  /**
   * The input's __metadata__ is kept (any characters), but for its d records, which named the input's tensors: the
   * output records d for its own embeddings.
   */
  @Test
  void theInputsMetadataIsKeptButItsDimensionRecords() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("vectors", NdArray.ofFloats("e", new long[] {3, 4, 5}, gaussians(rnd, 60)));
    Map<String, String> metadata = new LinkedHashMap<>();
    metadata.put("format", "pt");
    metadata.put("model", "colbert \"v2\"\n\u00e9\u4e2d");
    metadata.put("maxsim4j.dim.vectors", "5");
    metadata.put("maxsim4j.dim.embeddings", "7");
    SafeTensors.write(dir.resolve("m.safetensors"), t, metadata);
    for (String to : TO) {
      CliRun r = CliRun.of("quantize", "--in", p("m.safetensors"), "--to", to, "--out", p("q.safetensors"));
      assertEquals(0, r.status(), r.err());
      Map<String, String> kept = dev.maxsim4j.cli.io.SafeTensorsFile.open(dir.resolve("q.safetensors")).metadata();
      assertEquals(Map.of("format", "pt", "model", "colbert \"v2\"\n\u00e9\u4e2d", "maxsim4j.dim.embeddings", "5"),
          kept, to);
    }
  }

  /**
   * __metadata__ entries whose values are not strings (numbers, objects, null: other writers leave them, the format
   * has strings only) are not kept, and the summary names them as it names the tensors it leaves out: a hostile
   * tester saw them go without a word.
   */
  @Test
  void metadataEntriesThatAreNotStringsAreNamedAsLeftOut() throws IOException {
    String json = "{\"__metadata__\":{\"format\":\"pt\",\"n\":1e99999,\"o\":{\"a\":1},\"z\":null},"
        + "\"embeddings\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[0,8]}}";
    byte[] head = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    java.nio.ByteBuffer file = java.nio.ByteBuffer.allocate(8 + head.length + 8)
        .order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(head.length).put(head).putFloat(1).putFloat(-2);
    java.nio.file.Files.write(dir.resolve("meta.safetensors"), file.array());
    CliRun r = CliRun.of("quantize", "--in", p("meta.safetensors"), "--to", "int8", "--out", p("mq.safetensors"));
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("__metadata__ entries that are not strings left out: [\"n\", \"o\", \"z\"]"),
        r.out());
    assertEquals(Map.of("format", "pt", "maxsim4j.dim.embeddings", "2"),
        dev.maxsim4j.cli.io.SafeTensorsFile.open(dir.resolve("mq.safetensors")).metadata());
  }

  @Test
  void packedWithOffsetsKeepsTheOffsetsAndSpansManySlices() throws IOException {
    int d = 8;
    int tokens = QuantizeCommand.SLICE_TOKENS * 2 + 5;
    float[] e = gaussians(rnd, tokens * d);
    long[] offsets = {0, 7, 7, QuantizeCommand.SLICE_TOKENS + 3, tokens};
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {tokens, d}, e));
    t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {offsets.length},
        MemorySegment.ofArray(offsets)));
    SafeTensors.write(dir.resolve("e.safetensors"), t);
    CliRun r = CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "int8", "--out", p("c.safetensors"));
    assertEquals(0, r.status(), r.err());
    assertEquals(List.of("offsets", "scales", "embeddings"), SafeTensors.names(dir.resolve("c.safetensors")));
    SafeTensorsLayout.assertAligned(dir.resolve("c.safetensors"));
    assertArrayEquals(offsets, SafeTensors.read(dir.resolve("c.safetensors"), "offsets").integers());
    int[] o = {0, 7, 7, QuantizeCommand.SLICE_TOKENS + 3, tokens};
    TokenBatch expected = TokenBatch.packedFloats(e, o, d).quantize(DType.INT8);
    NdArray scales = SafeTensors.read(dir.resolve("c.safetensors"), "scales");
    assertArrayEquals(new long[] {tokens}, scales.shape());
    assertArrayEquals(expected.scales(), scales.floats(), 0f);
    TokenBatch stored = TokenBatch.packedBytes(DType.INT8,
        SafeTensors.read(dir.resolve("c.safetensors"), "embeddings").bytes(), scales.floats(), o, d);
    assertArrayEquals(expected.toFloatArray(), stored.toFloatArray(), 0f);
  }

  @Test
  void badArgumentsAreOneLine() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {2, 4}, gaussians(rnd, 8)));
    SafeTensors.write(dir.resolve("e.safetensors"), t);
    assertOneLineError(CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "int4", "--out", p("c.safetensors")),
        2, "--to = int4; expected int8, fp8 or binary");
    assertOneLineError(CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "int8", "--out", p("c.npy")), 2,
        "does not end in .safetensors");
    assertOneLineError(CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "int8", "--out",
        p("e.safetensors")), 1, "is also the input");
    assertOneLineError(CliRun.of("quantize", "--in", p("none.safetensors"), "--to", "int8", "--out",
        p("c.safetensors")), 1, "no such file");
    assertEquals(0, CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "int8", "--out",
        p("c.safetensors")).status());
    assertOneLineError(CliRun.of("quantize", "--in", p("c.safetensors"), "--to", "int8", "--out",
        p("again.safetensors")), 1, "holds int8; expected float32, float16 or bfloat16 embeddings to quantize");
    assertFalse(Files.exists(dir.resolve("again.safetensors")));
    float[] nan = gaussians(rnd, 3 * 2 * 4);
    nan[(2 * 2 + 1) * 4 + 3] = Float.NaN;
    t.put("embeddings", NdArray.ofFloats("e", new long[] {3, 2, 4}, nan));
    SafeTensors.write(dir.resolve("nan.safetensors"), t);
    assertOneLineError(CliRun.of("quantize", "--in", p("nan.safetensors"), "--to", "fp8", "--out",
        p("n.safetensors")), 1, "quantize: " + p("nan.safetensors") + ":embeddings: token [2, 1] holds NaN at"
            + " dimension 3; expected finite values to quantize");
    // five axes: score reads two to four, so quantize writes nothing it would refuse
    t.put("embeddings", NdArray.ofFloats("e", new long[] {1, 1, 5, 6, 4}, gaussians(rnd, 120)));
    SafeTensors.write(dir.resolve("five.safetensors"), t);
    assertOneLineError(CliRun.of("quantize", "--in", p("five.safetensors"), "--to", "int8", "--out",
        p("f.safetensors")), 1, "has shape [1, 1, 5, 6, 4]; expected tokens [.., d]");
    assertFalse(Files.exists(dir.resolve("f.safetensors")));
    try (Stream<Path> files = Files.list(dir)) {
      assertFalse(files.anyMatch(f -> f.getFileName().toString().endsWith(".tmp")), "no temporary file is left");
    }
  }

  /** Padding zeroed in every slice of a long input (the slices' copies share one room) is stored as zeros. */
  @Test
  void maskedNonFiniteTokensInEverySliceAreStoredAsZeros() throws IOException {
    int d = 3;
    int tokens = 2 * QuantizeCommand.SLICE_TOKENS + 5;
    float[] e = gaussians(rnd, tokens * d);
    boolean[] mask = new boolean[tokens];
    float[] zeroed = e.clone();
    for (int t = 0; t < tokens; t++) {
      mask[t] = t % 7 != 3;
      if (!mask[t]) {
        e[t * d + t % d] = Float.NaN;
        java.util.Arrays.fill(zeroed, t * d, (t + 1) * d, 0f);
      }
    }
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {1, tokens, d}, e));
    t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {1, tokens}, null, null, mask));
    SafeTensors.write(dir.resolve("e.safetensors"), t);
    CliRun r = CliRun.of("quantize", "--in", p("e.safetensors"), "--to", "int8", "--out", p("c.safetensors"));
    assertEquals(0, r.status(), r.err());
    byte[] expected = TokenBatch.ofFloats(zeroed, 1, tokens, d).quantize(DType.INT8).toByteArray();
    assertArrayEquals(expected, SafeTensors.read(dir.resolve("c.safetensors"), "embeddings").segment()
        .toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
  }

  /**
   * An int32 or int64 mask (a tokenizer's attention_mask) masks the tokens a bool mask of the same flags masks: its
   * elements were read a byte per token, so that token 1 of an int64 mask read element 0's high bytes (0, masked)
   * and a NaN in a valid token was stored as zeros. Found by a reviewer.
   */
  @Test
  void integerMasksMaskTheTokensABoolMaskMasks() throws IOException {
    int d = 4;
    float[] e = gaussians(rnd, 9 * d);
    java.util.Arrays.fill(e, 8 * d, 9 * d, Float.NaN); // token 8, masked
    boolean[] mask = {true, true, false, false, false, false, false, true, false};
    long[] longs = new long[9];
    int[] ints = new int[9];
    for (int t = 0; t < 9; t++) {
      longs[t] = mask[t] ? 1 : 0;
      ints[t] = mask[t] ? 1 : 0;
    }
    Map<String, NdArray> masks = new LinkedHashMap<>();
    masks.put("bool", new NdArray("m", NdArray.ElementType.BOOL, new long[] {1, 9}, null, null, mask));
    masks.put("int32", NdArray.ofSegment("m", NdArray.ElementType.I32, new long[] {1, 9},
        java.lang.foreign.MemorySegment.ofArray(ints)));
    masks.put("int64", NdArray.ofSegment("m", NdArray.ElementType.I64, new long[] {1, 9},
        java.lang.foreign.MemorySegment.ofArray(longs)));
    for (Map.Entry<String, NdArray> m : masks.entrySet()) {
      Map<String, NdArray> t = new LinkedHashMap<>();
      t.put("embeddings", NdArray.ofFloats("e", new long[] {1, 9, d}, e));
      t.put("mask", m.getValue());
      SafeTensors.write(dir.resolve(m.getKey() + ".safetensors"), t);
      CliRun r = CliRun.of("quantize", "--in", p(m.getKey() + ".safetensors"), "--to", "int8", "--out",
          p(m.getKey() + ".q.safetensors"));
      assertEquals(0, r.status(), m.getKey() + ": " + r.err());
    }
    for (String tensor : new String[] {"embeddings", "scales"}) {
      byte[] expected = bytesOf(dir.resolve("bool.q.safetensors"), tensor);
      assertArrayEquals(expected, bytesOf(dir.resolve("int32.q.safetensors"), tensor), tensor);
      assertArrayEquals(expected, bytesOf(dir.resolve("int64.q.safetensors"), tensor), tensor);
    }
    // a NaN in a token the int64 mask keeps is refused, as with a bool mask
    longs[8] = 1;
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {1, 9, d}, e));
    t.put("mask", NdArray.ofSegment("m", NdArray.ElementType.I64, new long[] {1, 9},
        java.lang.foreign.MemorySegment.ofArray(longs)));
    SafeTensors.write(dir.resolve("kept.safetensors"), t);
    CliRun kept = CliRun.of("quantize", "--in", p("kept.safetensors"), "--to", "int8", "--out", p("k.safetensors"));
    assertEquals(1, kept.status(), kept.err());
    assertTrue(kept.err().contains("token [0, 8] holds NaN"), kept.err());
  }

  private static byte[] bytesOf(Path file, String tensor) throws IOException {
    return SafeTensors.read(file, tensor).segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
  }

  /**
   * A masked token is padding, which score never reads: NaN or an infinity there (NaN-filled or np.empty padding)
   * is stored as zeros, where quantize refused the whole file that score scores; in a valid token it is refused.
   */
  @Test
  void nonFiniteValuesInMaskedTokensAreStoredAsZeros() throws IOException {
    int d = 5;
    float[] e = gaussians(rnd, 3 * 2 * d);
    java.util.Arrays.fill(e, 1 * d, 2 * d, Float.NaN); // token [0, 1], masked
    e[2 * d + 2] = Float.NEGATIVE_INFINITY; // token [1, 0], masked
    e[5 * d + 4] = Float.POSITIVE_INFINITY; // token [2, 1], masked
    boolean[] mask = {true, false, false, true, true, false};
    float[] q = gaussians(rnd, 2 * 3 * d);
    Npy.writeFloats(dir.resolve("q.npy"), q, 2, 3, d);
    float[] zeroed = e.clone();
    for (int t = 0; t < mask.length; t++) {
      if (!mask[t]) {
        java.util.Arrays.fill(zeroed, t * d, (t + 1) * d, 0f);
      }
    }
    for (NdArray.ElementType type : new NdArray.ElementType[] {NdArray.ElementType.F32, NdArray.ElementType.F16,
        NdArray.ElementType.BF16}) {
      DType source = type == NdArray.ElementType.F32 ? DType.FLOAT32 : type == NdArray.ElementType.F16
          ? DType.FLOAT16 : DType.BFLOAT16;
      Map<String, NdArray> t = new LinkedHashMap<>();
      t.put("embeddings", type == NdArray.ElementType.F32 ? NdArray.ofFloats("e", new long[] {3, 2, d}, e)
          : new NdArray("e", type, new long[] {3, 2, d}, null, source.narrow(e), null));
      t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {3, 2}, null, null, mask));
      SafeTensors.write(dir.resolve("e.safetensors"), t);
      TokenBatch clean = type == NdArray.ElementType.F32 ? TokenBatch.ofFloats(zeroed, 3, 2, d)
          : TokenBatch.ofHalfs(source, source.narrow(zeroed), 3, 2, d);
      for (int x = 0; x < TO.length; x++) {
        String what = type + " -> " + TO[x];
        CliRun r = CliRun.of("quantize", "--in", p("e.safetensors"), "--to", TO[x], "--out", p("c.safetensors"));
        assertEquals(0, r.status(), what + ": " + r.err());
        NdArray codes = SafeTensors.read(dir.resolve("c.safetensors"), "embeddings");
        NdArray scales = SafeTensors.read(dir.resolve("c.safetensors"), "scales");
        TokenBatch expected = clean.quantize(TYPES[x]);
        assertArrayEquals(expected.scales(), scales.floats(), 0f, what);
        assertArrayEquals(expected.toByteArray(), codes.bytes(), what);
        CliRun s = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--out", p("s.npy"),
            "--docs-bits", String.valueOf(d));
        if (TYPES[x] != DType.BINARY) {
          s = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--out", p("s.npy"));
        }
        assertEquals(0, s.status(), what + ": " + s.err());
        try (MaxSim m = MaxSim.create()) {
          float[][] want = m.scores(TokenBatch.ofFloats(q, 2, 3, d), expected.withMask(mask));
          float[] got = Npy.read(dir.resolve("s.npy")).floats();
          for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 3; j++) {
              assertTrue(Float.isFinite(got[i * 3 + j]), what);
              assertEquals(want[i][j], got[i * 3 + j], 0f, what);
            }
          }
        }
      }
    }
    // packed, the mask [T] of one flag per token; a valid token that is not finite is still refused by name
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {6, d}, e));
    t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {3},
        MemorySegment.ofArray(new long[] {0, 2, 6})));
    t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {6}, null, null, mask));
    SafeTensors.write(dir.resolve("p.safetensors"), t);
    CliRun r = CliRun.of("quantize", "--in", p("p.safetensors"), "--to", "int8", "--out", p("pc.safetensors"));
    assertEquals(0, r.status(), r.err());
    assertArrayEquals(TokenBatch.packedFloats(zeroed, new int[] {0, 2, 6}, d).quantize(DType.INT8).toByteArray(),
        SafeTensors.read(dir.resolve("pc.safetensors"), "embeddings").bytes());
    t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {6}, null, null,
        new boolean[] {true, true, false, true, true, false}));
    SafeTensors.write(dir.resolve("p.safetensors"), t);
    assertOneLineError(CliRun.of("quantize", "--in", p("p.safetensors"), "--to", "int8", "--out",
        p("pv.safetensors")), 1, "token [1] holds NaN at dimension 0; expected finite values to quantize");
  }

  /**
   * The mask and offsets beside a tensor of any name are copied (a packed file keeps its documents), and checked
   * as score reads them first: a mask of the wrong shape or type, offsets beside padded tokens or decreasing.
   */
  @Test
  void theMaskAndOffsetsBesideAnyTensorAreCheckedAndCopied() throws IOException {
    int d = 8;
    float[] e = gaussians(rnd, 10 * d);
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("tokens", NdArray.ofFloats("e", new long[] {10, d}, e));
    t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {3},
        MemorySegment.ofArray(new long[] {0, 4, 10})));
    SafeTensors.write(dir.resolve("p.safetensors"), t);
    CliRun r = CliRun.of("quantize", "--in", p("p.safetensors"), "--tensor", "tokens", "--to", "int8", "--out",
        p("pc.safetensors"));
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("offsets copied") && !r.out().contains("left out"), r.out());
    assertArrayEquals(new long[] {0, 4, 10}, SafeTensors.read(dir.resolve("pc.safetensors"), "offsets").integers());

    // a tensor quantize knows nothing of is not copied, and the summary names it
    t.put("ids", NdArray.ofSegment("i", NdArray.ElementType.I64, new long[] {2},
        MemorySegment.ofArray(new long[] {7, 9})));
    SafeTensors.write(dir.resolve("ids.safetensors"), t);
    r = CliRun.of("quantize", "--in", p("ids.safetensors"), "--tensor", "tokens", "--to", "int8", "--out",
        p("idsc.safetensors"));
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("offsets copied, left out: [\"ids\"])"), r.out());
    assertEquals(List.of("offsets", "scales", "embeddings"), SafeTensors.names(dir.resolve("idsc.safetensors")));
    SafeTensorsLayout.assertAligned(dir.resolve("idsc.safetensors"));

    Map<String, Map<String, NdArray>> bad = new LinkedHashMap<>();
    bad.put("has shape [7, 7]; expected [3, 4]", Map.of("mask",
        new NdArray("m", NdArray.ElementType.BOOL, new long[] {7, 7}, null, null, new boolean[49])));
    bad.put("holds float32; expected bool, uint8, int32 or int64 flags", Map.of("mask", NdArray.ofFloats("m",
        new long[] {3, 4}, new float[12])));
    bad.put("expected packed [T, d] embeddings beside offsets", Map.of("offsets", NdArray.ofSegment("o",
        NdArray.ElementType.I64, new long[] {2}, MemorySegment.ofArray(new long[] {0, 3}))));
    bad.put("holds a 'scales' tensor, but its embeddings " + p("bad.safetensors") + ":x hold float32; expected float"
        + " embeddings without scales", Map.of("scales", NdArray.ofFloats("s", new long[] {3, 4}, new float[12])));
    for (Map.Entry<String, Map<String, NdArray>> c : bad.entrySet()) {
      Map<String, NdArray> file = new LinkedHashMap<>();
      file.put("x", NdArray.ofFloats("e", new long[] {3, 4, d}, gaussians(rnd, 3 * 4 * d)));
      file.putAll(c.getValue());
      SafeTensors.write(dir.resolve("bad.safetensors"), file);
      assertOneLineError(CliRun.of("quantize", "--in", p("bad.safetensors"), "--tensor", "x", "--to", "fp8",
          "--out", p("b.safetensors")), 1, c.getKey());
      assertFalse(Files.exists(dir.resolve("b.safetensors")), c.getKey());
    }
    t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I64, new long[] {3},
        MemorySegment.ofArray(new long[] {0, 5, 3})));
    SafeTensors.write(dir.resolve("p.safetensors"), t);
    assertOneLineError(CliRun.of("quantize", "--in", p("p.safetensors"), "--tensor", "tokens", "--to", "binary",
        "--out", p("b.safetensors")), 1, "decrease at 2 (5 -> 3); expected non-decreasing offsets");
  }

  /**
   * An input whose header is just within the format's limit: quantize's own entries (scales, d) would push it past,
   * into a file score refuses; the input's __metadata__ is left out instead, with a warning, and the writer itself
   * refuses a header over the limit. Found by a hostile test.
   */
  @Test
  void aHeaderNearTheLimitLeavesTheInputsMetadataOut() throws IOException {
    int d = 8;
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofFloats("e", new long[] {5, 6, d}, gaussians(rnd, 5 * 6 * d)));
    // the input's header with an empty value, then the value that brings it within 8 bytes of the limit
    SafeTensors.write(dir.resolve("big.safetensors"), t, Map.of("x", ""));
    long empty = java.nio.ByteBuffer.wrap(Files.readAllBytes(dir.resolve("big.safetensors")), 0, 8)
        .order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
    String big = "a".repeat((int) (100_000_000 - empty - 8));
    SafeTensors.write(dir.resolve("big.safetensors"), t, Map.of("x", big));
    Npy.writeFloats(dir.resolve("q.npy"), gaussians(rnd, 2 * 4 * d), 2, 4, d);
    for (String to : TO) {
      CliRun r = CliRun.of("quantize", "--in", p("big.safetensors"), "--to", to, "--out", p("c.safetensors"));
      assertEquals(0, r.status(), to + ": " + r.err());
      assertTrue(r.err().contains("its __metadata__ (1 entry) would pass the safetensors header's limit of"
          + " 100000000 bytes"), r.err());
      assertEquals(Map.of("maxsim4j.dim.embeddings", "8"),
          dev.maxsim4j.cli.io.SafeTensorsFile.open(dir.resolve("c.safetensors")).metadata(), to);
      CliRun scored = CliRun.of("score", "--queries", p("q.npy"), "--docs", p("c.safetensors"), "--out",
          p("s.npy"));
      assertEquals(0, scored.status(), to + ": " + scored.err());
    }
    // a small input keeps its metadata
    SafeTensors.write(dir.resolve("small.safetensors"), t, Map.of("x", "y"));
    assertEquals(0, CliRun.of("quantize", "--in", p("small.safetensors"), "--to", "int8", "--out",
        p("c.safetensors")).status());
    assertEquals("y", dev.maxsim4j.cli.io.SafeTensorsFile.open(dir.resolve("c.safetensors")).metadata().get("x"));
    Path over = dir.resolve("over.safetensors");
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> SafeTensors.write(over, t, Map.of("x", big + "a".repeat(300))));
    assertTrue(e.getMessage().contains("its safetensors header would take 100000") && e.getMessage()
        .contains("expected at most 100000000"), e.getMessage());
    assertFalse(Files.exists(over));
  }
}
