package dev.maxsim4j.cli.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The .safetensors reader validates the header against the format and names file, tensor and fault. */
class SafeTensorsTest {
  @TempDir Path dir;

  static byte[] safetensors(String json, int dataBytes) {
    byte[] head = json.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(8 + head.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN)
        .putLong(head.length).put(head).array();
  }

  private String refusal(String json, int dataBytes) throws IOException {
    Path p = Files.write(dir.resolve("x.safetensors"), safetensors(json, dataBytes));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SafeTensors.read(p, "t"));
    assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
    return e.getMessage();
  }

  private void refused(String json, int dataBytes, String fragment) throws IOException {
    String m = refusal(json, dataBytes);
    assertTrue(m.contains(fragment), m);
  }

  @Test
  void malformedHeadersNameTheTensorAndTheFault() throws IOException {
    refused("{\"t\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "tensor \"t\" has no \"shape\"");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":\"1\",\"data_offsets\":[0,4]}}", 4, "non-negative integers");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, "non-negative integers");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "non-negative integers");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "array of 2");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8, "array of 2");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4, "non-negative");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "begin <= end");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 2, "begin <= end <= 2");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "expected 8");
    refused("{\"t\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "dtype that is a number");
    refused("{\"t\":[1,2]}", 0, "tensor \"t\" is an array");
    refused("[1,2]", 0, "not a JSON object");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"t\":{}}", 4, "given twice");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        + "\"u\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}", 8, "overlap");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[2147483647,2147483647,2147483647],\"data_offsets\":[0,4]}}", 4,
        "2^63");
    refused("{\"t\":" + "[".repeat(100_000) + "]".repeat(100_000) + "}", 0, "nesting deeper");
    refused("{\"t\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, "dtype \"F64\"");
    refused("{\"t\":{\"dtype\":\"U16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2, "dtype \"U16\"");
    refused("{\"t\":\"\\u12", 0, "bad");
    // what is not JSON is not read as something else: "t\\q" was the tensor "tq", a raw tab part of a name
    refused("{\"t\\q\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "bad escape \"\\\\q\"");
    refused("{\"t\t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "a control character");
    // JSON's numbers and whitespace, not Java's, which took "02", "+1", "1." and U+2028 or \x1c as spaces
    for (String number : new String[] {"01", "+1", "1.", ".5", "1e", "--1", "1e+"}) {
      refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[" + number + "],\"data_offsets\":[0,4]}}", 4,
          "bad number '" + number + "'");
    }
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}\u2028}", 4, "bad JSON");
    // a string in a shape is shown quoted, not as the valid shape it would read as; -0 is a float to other readers
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1,\"4\"],\"data_offsets\":[0,16]}}", 16,
        "shape [1, \"4\"]; expected");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-0,4]}}", 4, "data_offsets [-0.0, 4]");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[-0],\"data_offsets\":[0,0]}}", 0, "non-negative integers");
    // a byte-order mark before the header is named, not printed as '?'
    refused("\ufeff{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "U+FEFF (a byte-order mark");
    // the format puts '{' at the header's first byte; space before it is refused as other readers refuse it
    refused(" {\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
        "starts with ' '; expected '{' at its first byte");
    // a lone half of a surrogate pair is no text; a whole pair is read
    refused("{\"__metadata__\":{\"a\\ud800\":\"x\"},\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        4, "a lone surrogate \\ud800");
    refused("{\"t\\udc00\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "a lone surrogate \\udc00");
    refused("{\"t\\ud800\\u0041\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
        "a lone surrogate \\ud800 (followed by \\u0041)");
    Path pair = Files.write(dir.resolve("pair.safetensors"), safetensors("{\"t\\ud83d\\ude00\":{\"dtype\":\"F32\","
        + "\"shape\":[1],\"data_offsets\":[0,4]}}", 4));
    assertEquals(1, SafeTensors.read(pair, "t\ud83d\ude00").elements());
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,\u00a04]}}", 4,
        "unexpected character U+00A0");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}\u001c", 4, "trailing characters");
    Path spaced = Files.write(dir.resolve("spaced.safetensors"), safetensors("{\t\"t\" :\r\n{\"dtype\":\"F32\","
        + "\"shape\":[ 1 ],\"data_offsets\":[0, 4]}} ", 4));
    assertEquals(1, SafeTensors.read(spaced, "t").elements());
    // the format's layout: the data section tiled by the tensors, no hole, nothing after the last
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "bytes 0 to 4 of the data belong"
        + " to no tensor");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 12, "expected no bytes after the last");
    // this project's own metadata records are strings; another writer's non-string values are left unread
    refused("{\"__metadata__\":{\"maxsim4j.dim.t\":13},\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        4, "entry \"maxsim4j.dim.t\" is a number; expected a string");
    Path other = Files.write(dir.resolve("other.safetensors"), safetensors("{\"__metadata__\":{\"x\":5,\"y\":null},"
        + "\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4));
    assertEquals(1, SafeTensors.read(other, "t").elements());
    // null is no metadata, as the format's reference reader takes it; another kind is named
    Path none = Files.write(dir.resolve("none.safetensors"), safetensors("{\"__metadata__\":null,"
        + "\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4));
    assertEquals(1, SafeTensors.read(none, "t").elements());
    refused("{\"__metadata__\":[],\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
        "__metadata__ is an array; expected a JSON object");
    // an array there is left unread whatever its length: one of 65 entries was refused as a shape of too many axes.
    // Found by a hostile test
    for (int entries : new int[] {64, 65, 10_000}) {
      String ids = "[" + "0,".repeat(entries - 1) + "0]";
      Path array = Files.write(dir.resolve("array" + entries + ".safetensors"), safetensors("{\"__metadata__\":{"
          + "\"format\":\"pt\",\"ids\":" + ids + "},\"t\":{\"dtype\":\"F32\",\"shape\":[1],"
          + "\"data_offsets\":[0,4]}}", 4));
      assertEquals(1, SafeTensors.read(array, "t").elements(), entries + " entries");
    }
  }

  /**
   * A length field too large takes in the data's first bytes, which read as a header that is not UTF-8 or as JSON
   * with more after it; the refusal names the likely cause. Found by a hostile tester, to whom "not UTF-8" alone said
   * nothing of the length.
   */
  @Test
  void aLengthFieldTooLargeIsNamedAsTheLikelyCause() throws IOException {
    String json = "{\"t\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}";
    for (byte[] data : new byte[][] {{(byte) 0xff, 1}, {'7', ' '}}) {
      byte[] file = safetensors(json, 2);
      file[8 + json.length()] = data[0];
      file[9 + json.length()] = data[1];
      ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).putLong(0, json.length() + 1);
      Path p = Files.write(dir.resolve("long.safetensors"), file);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SafeTensors.read(p, "t"));
      assertTrue(e.getMessage().startsWith(p + " has a"), e.getMessage());
      assertTrue(e.getMessage().endsWith("; its JSON object ends at byte " + (8 + json.length()) + ", so its length"
          + " field (" + (json.length() + 1) + ") may be too large"), e.getMessage());
    }
    // a header that is broken in itself gets no such hint
    assertTrue(refusal("{\"t\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}", 2)
        .indexOf("length field") < 0);
  }

  /** A header over the format's limit is named as such, not as a file of another kind. Found by a hostile test. */
  @Test
  void aHeaderOverTheLimitIsNamed() throws IOException {
    Path p = dir.resolve("long.safetensors");
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(p.toFile(), "rw")) {
      f.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(100_000_008L).array());
      f.setLength(8 + 100_000_016L); // sparse: the header's bytes are never read
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SafeTensors.read(p, "t"));
    assertEquals(p + " has a safetensors header of 100000008 bytes; expected at most 100000000 (the format's limit,"
        + " which other readers keep too)", e.getMessage());
  }

  /**
   * A header's arrays and values are bounded while it is parsed: a shape of a million axes or a header of a million
   * tensors took gigabytes of heap (and a shape of a million axes printed a line of megabytes) before the error.
   * Found by a hostile test.
   */
  @Test
  void hugeShapesAndHeadersAreRefusedWhileParsing() throws IOException {
    String huge = "{\"t\":{\"dtype\":\"F32\",\"shape\":[" + "1,".repeat(1_000_000) + "1],\"data_offsets\":[0,4]}}";
    String m = refusal(huge, 4);
    assertTrue(m.contains("more than 1000000 values"), m);
    assertTrue(m.length() < 500, "a short line: " + m.length());
    m = refusal("{\"t\":{\"dtype\":\"F32\",\"shape\":[" + "1,".repeat(100_000) + "1],\"data_offsets\":[0,4]}}", 4);
    assertTrue(m.contains("tensor \"t\" has a shape of 100001 axes; expected at most 64"), m);
    assertTrue(m.length() < 500, "a short line: " + m.length());
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[" + "1,".repeat(64) + "1],\"data_offsets\":[0,4]}}", 4,
        "a shape of 65 axes; expected at most 64");
    Path ok = Files.write(dir.resolve("rank64.safetensors"), safetensors("{\"t\":{\"dtype\":\"F32\",\"shape\":["
        + "1,".repeat(63) + "1],\"data_offsets\":[0,4]}}", 4));
    assertEquals(64, SafeTensors.read(ok, "t").rank());
    StringBuilder many = new StringBuilder("{");
    for (int i = 0; i <= SafeTensorsHeader.MAX_VALUES / 5; i++) {
      many.append(i == 0 ? "" : ",").append("\"t").append(i).append("\":{\"dtype\":\"F32\",\"shape\":[0],"
          + "\"data_offsets\":[0,0]}");
    }
    refused(many.append("}").toString(), 0, "expected a header of at most 1000000 JSON values");
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[1048576,1048576],\"data_offsets\":[0,4]}}", 4,
        "span 4 bytes; expected");
  }

  /**
   * Header text quoted in an error is cut short: a dtype, key, field or number of a megabyte printed a line of a
   * megabyte. Found by a hostile test.
   */
  @Test
  void headerTextInErrorsIsCutShort() throws IOException {
    String big = "x".repeat(1_000_000);
    String t = "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
    List<String> headers = List.of(
        "{\"t\":{\"dtype\":\"" + big + "\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        "{\"t\":{\"dtype\":\"F32\",\"shape\":[" + "9".repeat(1_000_000) + "],\"data_offsets\":[0,4]}}",
        "{\"t\":{\"dtype\":\"F32\",\"shape\":[" + "-".repeat(1_000_000) + "],\"data_offsets\":[0,4]}}",
        "{\"" + big + "\":1,\"" + big + "\":2}",
        "{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"" + big + "\":1}}",
        "{\"" + big + "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}",
        "{\"" + big + "a\":" + t + ",\"" + big + "b\":" + t + "}",
        "{\"" + big + "a\":" + t + ",\"" + big + "b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}");
    for (String header : headers) {
      Path p = Files.write(dir.resolve("x.safetensors"), safetensors(header, 12));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SafeTensors.read(p, "t"));
      assertTrue(e.getMessage().length() < 1000, () -> e.getMessage().substring(0, 300));
    }
    Path many = Files.write(dir.resolve("x.safetensors"), safetensors("{\"" + big + "a\":" + t + ",\"" + big
        + "b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SafeTensors.read(many, null));
    assertTrue(e.getMessage().length() < 1000, () -> e.getMessage().substring(0, 300));
  }

  /**
   * A hostile tester's finding: metadata with a lone surrogate was read, and written back by quantize as '?', so two
   * keys became one and the output could not be read. The reader refuses it (above); the writer never writes text
   * UTF-8 cannot spell, and writes no file then.
   */
  @Test
  void theWriterRefusesTextUtf8CannotWrite() {
    Path f = dir.resolve("lone.safetensors");
    NdArray one = NdArray.ofFloats("x", new long[] {1}, new float[] {1});
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SafeTensors.write(f, Map.of("t", one), Map.of("a\ud800", "x")));
    assertTrue(e.getMessage().contains("lone surrogate"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> SafeTensors.write(f, Map.of("t\udc00", one)));
    assertTrue(Files.notExists(f));
  }

  /**
   * An axis longer than 2^31-1 is refused as its tensor is read (where the option that gave the file is named), and
   * only then: another tensor of the same file is read as before.
   */
  @Test
  void anAxisPastTheIntsIsRefusedAsItsTensorIsRead() throws IOException {
    refused("{\"t\":{\"dtype\":\"F32\",\"shape\":[0,4611686018427387904,8],\"data_offsets\":[0,0]}}", 0,
        "dimension 1 is over 2^31-1");
    Path both = Files.write(dir.resolve("both.safetensors"), safetensors("{\"blob\":{\"dtype\":\"U8\",\"shape\":"
        + "[0,3000000000],\"data_offsets\":[0,0]},\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        4));
    assertEquals(1, SafeTensors.read(both, "t").elements());
  }

  @Test
  void anOpenedFileReadsEveryTensorFromTheBytesItParsedEvenOnceTheFileIsReplaced() throws IOException {
    Path f = dir.resolve("t.safetensors");
    Map<String, NdArray> before = new LinkedHashMap<>();
    before.put("a", NdArray.ofFloats("a", new long[] {2}, new float[] {1, 2}));
    before.put("b", NdArray.ofFloats("b", new long[] {1}, new float[] {3}));
    SafeTensors.write(f, before);
    SafeTensorsFile opened = SafeTensorsFile.open(f);
    Path next = dir.resolve("next.safetensors");
    SafeTensors.write(next, Map.of("c", NdArray.ofFloats("c", new long[] {3}, new float[] {4, 5, 6})));
    Files.move(next, f, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertEquals(java.util.List.of("a", "b"), opened.names());
    assertArrayEquals(new float[] {1, 2}, opened.read("a").floats());
    assertArrayEquals(new float[] {3}, opened.read("b").floats());
    assertEquals(java.util.List.of("c"), SafeTensors.names(f), "a new open sees the new file");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> opened.read("c"));
    assertEquals(f + " has no tensor 'c'; it holds [\"a\", \"b\"]", e.getMessage());
  }

  @Test
  void roundTripsEveryReadableType() throws IOException {
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("e", new NdArray("e", NdArray.ElementType.BF16, new long[] {2, 2}, null, new short[] {1, 2, 3, 4}, null));
    t.put("o", NdArray.ofSegment("o", NdArray.ElementType.I32, new long[] {3},
        java.lang.foreign.MemorySegment.ofArray(new int[] {0, 1, 2})));
    t.put("m", new NdArray("m", NdArray.ElementType.BOOL, new long[] {3}, null, null, new boolean[] {true, false,
        true}));
    t.put("i8", NdArray.ofSegment("i8", NdArray.ElementType.I8, new long[] {3},
        java.lang.foreign.MemorySegment.ofArray(new byte[] {-128, 0, 127})));
    t.put("f8", NdArray.ofSegment("f8", NdArray.ElementType.F8_E4M3, new long[] {1, 2},
        java.lang.foreign.MemorySegment.ofArray(new byte[] {0x38, (byte) 0xc0})));
    Path f = dir.resolve("t.safetensors");
    SafeTensors.write(f, t);
    assertArrayEquals(new short[] {1, 2, 3, 4}, SafeTensors.read(f, "e").halfs());
    assertArrayEquals(new long[] {0, 1, 2}, SafeTensors.read(f, "o").integers());
    assertArrayEquals(new boolean[] {true, false, true}, SafeTensors.read(f, "m").flags());
    assertArrayEquals(new byte[] {-128, 0, 127}, SafeTensors.read(f, "i8").bytes());
    NdArray f8 = SafeTensors.read(f, "f8");
    assertEquals(NdArray.ElementType.F8_E4M3, f8.type());
    assertArrayEquals(new byte[] {0x38, (byte) 0xc0}, f8.bytes());
    assertTrue(Files.readString(f, java.nio.charset.StandardCharsets.ISO_8859_1).contains("\"dtype\":\"F8_E4M3\""));
  }

  @Test
  void everyTensorStartsAtAMultipleOfItsElementWidth() throws IOException {
    // 13 x 9 int8 bytes written first would leave the float32 scales and int64 offsets after them misaligned
    Map<String, NdArray> t = new LinkedHashMap<>();
    t.put("embeddings", NdArray.ofSegment("embeddings", NdArray.ElementType.I8, new long[] {13, 9},
        MemorySegment.ofArray(new byte[13 * 9])));
    t.put("mask", new NdArray("mask", NdArray.ElementType.BOOL, new long[] {3}, null, null, new boolean[3]));
    t.put("scales", NdArray.ofFloats("scales", new long[] {13}, new float[13]));
    t.put("offsets", NdArray.ofSegment("offsets", NdArray.ElementType.I64, new long[] {2},
        MemorySegment.ofArray(new long[] {0, 13})));
    Path f = dir.resolve("aligned.safetensors");
    SafeTensors.write(f, t);
    SafeTensorsLayout.assertAligned(f);
    // widest first, ties in the caller's order, as the format's reference writer lays them out
    assertEquals(List.of("offsets", "scales", "embeddings", "mask"), SafeTensors.names(f));
    assertArrayEquals(new long[] {0, 13}, SafeTensors.read(f, "offsets").integers());
    assertEquals(13 * 9, SafeTensors.read(f, "embeddings").bytes().length);
  }
}
