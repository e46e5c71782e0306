package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/**
 * Stored values a damaged or hostile index holds: cut short, over-long, of another layout, with counts and d that lie,
 * non-finite scales, values of the other field type. Each is read through decode and the rescorers: a result, or an
 * IllegalArgumentException naming the value, never another exception.
 */
class HostileBytesTest {
  private static final int DIM = 9;

  private static List<byte[]> hostile(Random rnd) {
    List<byte[]> out = new ArrayList<>();
    float[][] v = MaxSimRescorerTest.unitVectors(rnd, 3, false, DIM);
    List<byte[]> valid = new ArrayList<>();
    for (DType t : new DType[] {DType.INT8, DType.FLOAT8_E4M3, DType.BINARY}) {
      valid.add(BytesRef.deepCopyOf(QuantizedLateInteractionField.encode(v, t)).bytes);
    }
    valid.add(BytesRef.deepCopyOf(LateInteractionField.encode(v)).bytes);
    for (byte[] good : valid) {
      out.add(good);
      for (int n = 0; n < good.length; n++) {
        out.add(Arrays.copyOf(good, n));
      }
      for (int extra = 1; extra <= 12; extra++) {
        out.add(Arrays.copyOf(good, good.length + extra));
      }
      for (int i = 0; i < 400; i++) {
        byte[] b = good.clone();
        int at = rnd.nextInt(Math.min(b.length, 12));
        b[at] = (byte) rnd.nextInt(256);
        out.add(b);
      }
      for (int at : new int[] {0, 2, 6}) {
        for (int value : new int[] {0, -1, 1, Integer.MIN_VALUE, Integer.MAX_VALUE, DIM + 1, 3, 4, 1 << 28}) {
          if (at + 4 <= good.length) {
            byte[] b = good.clone();
            ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(at, value);
            out.add(b);
          }
        }
      }
      for (float s : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MAX_VALUE}) {
        byte[] b = good.clone();
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putFloat(b.length - 4, s);
        out.add(b);
      }
    }
    out.add(new byte[0]);
    return out;
  }

  /** The decoded row's bytes and scales, or the IllegalArgumentException's message. */
  private static String decoded(BytesRef value) {
    try {
      TokenBatch row = QuantizedLateInteractionField.decode(value);
      assertEquals(1, row.size());
      return Arrays.toString(row.toByteArray()) + Arrays.toString(row.scales()) + row.dim();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage().startsWith("value: "), e.getMessage());
      return e.getMessage();
    } catch (RuntimeException | Error e) {
      throw new AssertionError("decode of " + value + " threw " + e, e);
    }
  }

  @Test
  void everyHostileValueIsAResultOrANamedIllegalArgument() throws IOException {
    Random rnd = new Random(7);
    List<byte[]> values = hostile(rnd);
    for (byte[] b : values) {
      // the same bytes inside a larger array, between bytes that would make another header or more tokens
      byte[] padded = new byte[b.length + 14];
      Arrays.fill(padded, (byte) 1);
      System.arraycopy(b, 0, padded, 7, b.length);
      String alone = decoded(new BytesRef(b));
      assertEquals(alone, decoded(new BytesRef(padded, 7, b.length)), Arrays.toString(b));
    }
    float[][] query = MaxSimRescorerTest.unitVectors(rnd, 2, false, DIM);
    try (Directory d = new ByteBuffersDirectory(); MaxSim maxSim = MaxSim.create()) {
      try (IndexWriter w = new IndexWriter(d, new IndexWriterConfig())) {
        for (byte[] b : values) {
          Document doc = new Document();
          doc.add(new BinaryDocValuesField("v", new BytesRef(b)));
          w.addDocument(doc);
        }
      }
      try (DirectoryReader r = DirectoryReader.open(d)) {
        IndexSearcher s = new IndexSearcher(r);
        for (int doc = 0; doc < values.size(); doc++) {
          TopDocs one = new TopDocs(new TotalHits(1, TotalHits.Relation.EQUAL_TO), new ScoreDoc[] {new ScoreDoc(doc, 1)});
          for (boolean quantized : new boolean[] {true, false}) {
            MaxSimRescorer rescorer = quantized
                ? MaxSimRescorer.createQuantized("v", query, MaxSimRescorer.Scale.RAW, maxSim)
                : MaxSimRescorer.create("v", query, org.apache.lucene.index.VectorSimilarityFunction.DOT_PRODUCT,
                    MaxSimRescorer.Scale.RAW, maxSim);
            try {
              // a score is MaxSim of the stored values as they are: NaN for a NaN float, infinite past fp32's range
              assertEquals(1, rescorer.rescore(s, one, 1).scoreDocs.length);
            } catch (IllegalArgumentException e) {
              assertTrue(e.getMessage().startsWith("field v of doc " + doc + ": "), e.getMessage());
            } catch (RuntimeException | Error e) {
              throw new AssertionError((quantized ? "quantized" : "float") + " rescore of doc " + doc + " "
                  + Arrays.toString(values.get(doc)) + " threw " + e, e);
            }
          }
        }
      }
    }
  }

  /**
   * A stored e4m3 NaN code, which encode refuses, written by something else: it scored NaN and ranked its document
   * first; the quantized rescorer names it, as it names a non-finite scale. Found by a hostile test.
   */
  @Test
  void aStoredE4m3NanCodeIsRefusedByName() throws IOException {
    assertEquals("field q of doc 0: token 0, dimension 1 holds 0xff, an e4m3 NaN code; expected finite values",
        storedNanCodeRefusal());
  }

  /** The quantized rescorer's refusal of a stored e4m3 NaN code (token 0, dimension 1 of doc 0). */
  static String storedNanCodeRefusal() throws IOException {
    byte[] value = BytesRef.deepCopyOf(QuantizedLateInteractionField.encode(new float[][] {{1, 1, 1}},
        DType.FLOAT8_E4M3)).bytes;
    value[QuantizedLateInteractionField.HEADER + 1] = (byte) 0xff;
    try (Directory d = new ByteBuffersDirectory(); MaxSim maxSim = MaxSim.create()) {
      try (IndexWriter w = new IndexWriter(d, new IndexWriterConfig())) {
        Document doc = new Document();
        doc.add(new BinaryDocValuesField("q", new BytesRef(value)));
        w.addDocument(doc);
      }
      try (DirectoryReader r = DirectoryReader.open(d)) {
        TopDocs one = new TopDocs(new TotalHits(1, TotalHits.Relation.EQUAL_TO), new ScoreDoc[] {new ScoreDoc(0, 1)});
        return org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> MaxSimRescorer.createQuantized("q", new float[][] {{1, 1, 1}}, MaxSimRescorer.Scale.RAW, maxSim)
                .rescore(new IndexSearcher(r), one, 1)).getMessage();
      }
    }
  }

  /** The word-at-a-time NaN scan finds the first NaN code wherever it is, and only NaN codes. */
  @Test
  void theNanScanFindsTheFirstNanCode() {
    Random rnd = new Random(3);
    for (int trial = 0; trial < 20_000; trial++) {
      byte[] b = new byte[rnd.nextInt(40)];
      for (int i = 0; i < b.length; i++) {
        int v = rnd.nextInt(256);
        b[i] = (byte) ((v & 0x7f) == 0x7f && rnd.nextInt(8) != 0 ? v - 1 : v);
      }
      int from = b.length == 0 ? 0 : rnd.nextInt(b.length);
      int n = b.length - from;
      int expected = -1;
      for (int i = 0; i < n && expected < 0; i++) {
        expected = (b[from + i] & 0x7f) == 0x7f ? i : -1;
      }
      assertEquals(expected, QuantizedTokenBytes.firstNanCode(b, from, n), Arrays.toString(b) + " from " + from);
    }
  }
}
