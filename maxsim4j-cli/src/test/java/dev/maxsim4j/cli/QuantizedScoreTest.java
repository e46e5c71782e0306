package dev.maxsim4j.cli;

import static dev.maxsim4j.cli.QuantizedFiles.assertClose;
import static dev.maxsim4j.cli.QuantizedFiles.bytes;
import static dev.maxsim4j.cli.QuantizedFiles.codes;
import static dev.maxsim4j.cli.QuantizedFiles.elementType;
import static dev.maxsim4j.cli.QuantizedFiles.floats;
import static dev.maxsim4j.cli.QuantizedFiles.gaussians;
import static dev.maxsim4j.cli.QuantizedFiles.scales;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.TopK;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** score on int8, fp8 and packed-bit files: the same scores as the library on the same bytes and scales. */
class QuantizedScoreTest {
  private static final DType[] TYPES = {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY};
  private static final int[] DIMS = {1, 3, 33, 127, 513};

  @TempDir Path dir;
  private final SplittableRandom rnd = new SplittableRandom();

  private String p(String name) {
    return dir.resolve(name).toString();
  }

  private List<String> bits(String option, DType dtype, int d) {
    return dtype == DType.BINARY ? List.of(option, String.valueOf(d)) : List.of();
  }

  private static CliRun run(List<String> args) {
    return CliRun.of(args.toArray(String[]::new));
  }

  private static List<String> args(String... a) {
    return new ArrayList<>(List.of(a));
  }

  private float[][] scoresOf(String file, int rows, int cols) throws IOException {
    float[] flat = Npy.read(dir.resolve(file)).floats();
    assertEquals((long) rows * cols, flat.length);
    float[][] s = new float[rows][cols];
    for (int i = 0; i < rows; i++) {
      System.arraycopy(flat, i * cols, s[i], 0, cols);
    }
    return s;
  }

  /** Also with the codes under another name than "embeddings": the scales and mask beside them are read all the same. */
  @Test
  void paddedDocumentsWithScalesAndAMaskScoreLikeTheLibrary() throws IOException {
    int n = 3;
    for (String name : new String[] {"embeddings", "codes"}) {
    for (DType dtype : TYPES) {
      for (int d : DIMS) {
        int l = d == 3 ? 1 : 4;
        byte[] c = codes(rnd, dtype, n * l, d);
        float[] s = scales(rnd, n * l);
        boolean[] mask = new boolean[n * l];
        for (int i = 0; i < mask.length; i++) {
          mask[i] = i / l == 2 ? false : rnd.nextInt(3) != 0 || i % l == l - 1; // row 2: all masked
        }
        Map<String, NdArray> t = new LinkedHashMap<>();
        t.put(name, bytes("e", elementType(dtype), new long[] {n, l, dtype.bytesPerToken(d)}, c));
        t.put("scales", floats("s", new long[] {n, l}, s));
        t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {n, l}, null, null, mask));
        SafeTensors.write(dir.resolve("d.safetensors"), t);
        float[] q = gaussians(rnd, 2 * 5 * d);
        Npy.writeFloats(dir.resolve("q.npy"), q, 2, 5, d);
        List<String> a = args("score", "--queries", p("q.npy"), "--docs", p("d.safetensors"), "--out", p("s.npy"));
        a.addAll(bits("--docs-bits", dtype, d));
        if (!name.equals("embeddings")) {
          a.addAll(List.of("--docs-tensor", name));
        }
        CliRun r = run(a);
        assertEquals(0, r.status(), dtype + " d=" + d + ": " + r.err());
        TokenBatch qb = TokenBatch.ofFloats(q, 2, 5, d);
        TokenBatch db = TokenBatch.ofBytes(dtype, c, s, n, l, d).withMask(mask);
        float[][] got = scoresOf("s.npy", 2, n);
        try (MaxSim m = MaxSim.create()) {
          float[][] expected = m.scores(qb, db);
          double[][] exact = QuantizedFiles.reference(qb, db);
          for (int i = 0; i < 2; i++) {
            assertArrayEquals(expected[i], got[i], 0f, dtype + " d=" + d);
            for (int j = 0; j < n; j++) {
              assertClose(exact[i][j], got[i][j], qb, i, db, j, dtype + " d=" + d + " [" + i + ", " + j + "]");
            }
          }
          assertEquals(-1e9f, got[0][2], 0f, "an all-masked document");
        }
      }
    }
    }
  }

  @Test
  void packedDocumentsRankLikeTheLibraryAndMappedEqualsHeap() throws IOException {
    int[] offsets = {0, 1, 1, 6, 13, 14};
    int tokens = 13 + 1;
    for (DType dtype : TYPES) {
      for (int d : new int[] {3, 33, 127}) {
        byte[] c = codes(rnd, dtype, tokens, d);
        float[] s = scales(rnd, tokens);
        boolean[] mask = new boolean[tokens];
        for (int i = 0; i < tokens; i++) {
          mask[i] = rnd.nextInt(4) != 0;
        }
        Map<String, NdArray> t = new LinkedHashMap<>();
        t.put("embeddings", bytes("e", elementType(dtype), new long[] {tokens, dtype.bytesPerToken(d)}, c));
        t.put("scales", floats("s", new long[] {tokens}, s));
        t.put("mask", new NdArray("m", NdArray.ElementType.BOOL, new long[] {tokens}, null, null, mask));
        t.put("offsets", NdArray.ofSegment("o", NdArray.ElementType.I32, new long[] {offsets.length},
            MemorySegment.ofArray(offsets)));
        SafeTensors.write(dir.resolve("p.safetensors"), t);
        float[] q = gaussians(rnd, 3 * 4 * d);
        Npy.writeFloats(dir.resolve("q.npy"), q, 3, 4, d);
        List<String> a = args("score", "--queries", p("q.npy"), "--docs", p("p.safetensors"), "--top-k", "3",
            "--out-run", p("run.tsv"));
        a.addAll(bits("--docs-bits", dtype, d));
        CliRun r = run(a);
        assertEquals(0, r.status(), dtype + " d=" + d + ": " + r.err());
        TokenBatch qb = TokenBatch.ofFloats(q, 3, 4, d);
        TokenBatch db = TokenBatch.packedBytes(dtype, c, s, offsets, d).withMask(mask);
        try (MaxSim m = MaxSim.create()) {
          TopK top = m.topK(qb, db, 3);
          List<String> lines = Files.readAllLines(dir.resolve("run.tsv"));
          assertEquals(9, lines.size());
          for (String line : lines) {
            String[] f = line.split("\t");
            int i = Integer.parseInt(f[0]);
            int rank = Integer.parseInt(f[2]) - 1;
            assertEquals(top.indices()[i][rank], Integer.parseInt(f[1]), line);
            assertEquals(top.scores()[i][rank], Float.parseFloat(f[3]), 0f, line);
          }
          // the file, read straight from the mapping (no heap copy), scores as its tokens on the heap do
          Args parsed = new Args("score", a.toArray(String[]::new), 1, java.util.Set.of("--queries", "--docs",
              "--top-k", "--out-run", "--docs-bits"), java.util.Set.of());
          TokenBatch mapped = Inputs.load(parsed, Inputs.DOCS).batch();
          assertEquals(dtype, mapped.dtype());
          assertEquals(d, mapped.dim());
          float[][] expected = m.scores(qb, db);
          float[][] fromMap = m.scores(qb, mapped);
          for (int i = 0; i < 3; i++) {
            assertArrayEquals(expected[i], fromMap[i], 0f);
          }
        }
      }
    }
  }

  @Test
  void candidatesAndPairwiseTakeQuantizedDocumentsAndQueries() throws IOException {
    int b = 2;
    int k = 3;
    int l = 5;
    int d = 33;
    for (DType docType : TYPES) {
      for (DType queryType : TYPES) {
        byte[] dc = codes(rnd, docType, b * k * l, d);
        float[] ds = scales(rnd, b * k * l);
        Map<String, NdArray> t = new LinkedHashMap<>();
        t.put("embeddings", bytes("e", elementType(docType), new long[] {b, k, l, docType.bytesPerToken(d)}, dc));
        t.put("scales", floats("s", new long[] {b, k, l}, ds));
        SafeTensors.write(dir.resolve("d4.safetensors"), t);
        byte[] qc = codes(rnd, queryType, b * 4, d);
        float[] qs = scales(rnd, b * 4);
        Map<String, NdArray> qt = new LinkedHashMap<>();
        qt.put("tokens", bytes("q", elementType(queryType), new long[] {b, 4, queryType.bytesPerToken(d)}, qc));
        qt.put("weights", floats("w", new long[] {b, 4}, qs));
        SafeTensors.write(dir.resolve("q.safetensors"), qt);
        List<String> a = args("score", "--queries", p("q.safetensors"), "--queries-tensor", "tokens",
            "--queries-scale-tensor", "weights", "--docs", p("d4.safetensors"), "--out", p("c.npy"));
        a.addAll(bits("--docs-bits", docType, d));
        a.addAll(bits("--queries-bits", queryType, d));
        CliRun r = run(a);
        String what = queryType + " x " + docType;
        assertEquals(0, r.status(), what + ": " + r.err());
        TokenBatch qb = TokenBatch.ofBytes(queryType, qc, qs, b, 4, d);
        TokenBatch db = TokenBatch.ofBytes(docType, dc, ds, b * k, l, d);
        try (MaxSim m = MaxSim.create()) {
          float[][] expected = m.candidates(qb, db, k);
          float[][] got = scoresOf("c.npy", b, k);
          for (int i = 0; i < b; i++) {
            assertArrayEquals(expected[i], got[i], 0f, what);
          }
          // pairwise: query i against document i of a padded [B, L, d] file
          Map<String, NdArray> pt = new LinkedHashMap<>();
          byte[] pc = java.util.Arrays.copyOf(dc, (int) (b * l * docType.bytesPerToken(d)));
          float[] ps = java.util.Arrays.copyOf(ds, b * l);
          pt.put("embeddings", bytes("e", elementType(docType), new long[] {b, l, docType.bytesPerToken(d)}, pc));
          pt.put("scales", floats("s", new long[] {b, l}, ps));
          SafeTensors.write(dir.resolve("pd.safetensors"), pt);
          List<String> pa = args("score", "--queries", p("q.safetensors"), "--queries-tensor", "tokens",
              "--queries-scale-tensor", "weights", "--docs", p("pd.safetensors"), "--pairwise", "--out", p("pw.npy"));
          pa.addAll(bits("--docs-bits", docType, d));
          pa.addAll(bits("--queries-bits", queryType, d));
          CliRun pr = run(pa);
          assertEquals(0, pr.status(), what + ": " + pr.err());
          assertArrayEquals(m.pairwise(qb, TokenBatch.ofBytes(docType, pc, ps, b, l, d)),
              Npy.read(dir.resolve("pw.npy")).floats(), 0f, what);
        }
      }
    }
  }

  /** .npy has int8 and uint8 (no fp8): int8 tokens with --doc-scales S.npy, packed bits with --docs-bits. */
  @Test
  void npyInt8AndPackedBitsWithScalesFromAnotherFile() throws IOException {
    int n = 4;
    int l = 3;
    int d = 20;
    float[] q = gaussians(rnd, 2 * 3 * d);
    Npy.writeFloats(dir.resolve("q.npy"), q, 2, 3, d);
    TokenBatch qb = TokenBatch.ofFloats(q, 2, 3, d);
    for (DType dtype : new DType[] {DType.INT8, DType.BINARY}) {
      byte[] c = codes(rnd, dtype, n * l, d);
      float[] s = scales(rnd, n * l);
      Npy.write(dir.resolve("d.npy"), bytes("d", elementType(dtype), new long[] {n, l, dtype.bytesPerToken(d)}, c));
      Npy.writeFloats(dir.resolve("s.npy"), s, n, l);
      List<String> a = args("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--doc-scales", p("s.npy"),
          "--out", p("out.npy"));
      a.addAll(bits("--docs-bits", dtype, d));
      CliRun r = run(a);
      assertEquals(0, r.status(), dtype + ": " + r.err());
      try (MaxSim m = MaxSim.create()) {
        float[][] expected = m.scores(qb, TokenBatch.ofBytes(dtype, c, s, n, l, d));
        float[][] got = scoresOf("out.npy", 2, n);
        for (int i = 0; i < 2; i++) {
          assertArrayEquals(expected[i], got[i], 0f, dtype.toString());
        }
        // without scales every token's scale is 1
        List<String> unscaled = args("score", "--queries", p("q.npy"), "--docs", p("d.npy"), "--out", p("u.npy"));
        unscaled.addAll(bits("--docs-bits", dtype, d));
        assertEquals(0, run(unscaled).status());
        float[][] ones = m.scores(qb, TokenBatch.ofBytes(dtype, c, null, n, l, d));
        float[][] gotOnes = scoresOf("u.npy", 2, n);
        for (int i = 0; i < 2; i++) {
          assertArrayEquals(ones[i], gotOnes[i], 0f, dtype.toString());
        }
      }
    }
  }
}
