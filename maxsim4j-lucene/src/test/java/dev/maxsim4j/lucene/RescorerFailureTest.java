package dev.maxsim4j.lucene;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.maxsim4j.MaxSim;
import java.io.IOException;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.LateInteractionField;
import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.FilterBinaryDocValues;
import org.apache.lucene.index.FilterDirectoryReader;
import org.apache.lucene.index.FilterLeafReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.junit.jupiter.api.Test;

/**
 * A rescore that fails (a doc value that cannot be read, an interrupted caller) returns only once none of its
 * strands reads the index or scores any more: the caller closes both right after, and gets the failure as it was.
 */
class RescorerFailureTest {
  private static final int DIM = 16;
  private static final int DOCS = 1200;

  @Test
  void aFailedRescoreLeavesNothingRunning() throws Exception {
    SplittableRandom rnd = new SplittableRandom(3);
    Directory dir = new ByteBuffersDirectory();
    try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig().setMaxBufferedDocs(300))) {
      for (int i = 0; i < DOCS; i++) {
        Document d = new Document();
        d.add(new LateInteractionField("colbert", random(rnd, 4)));
        w.addDocument(d);
      }
    }
    ScoreDoc[] hits = new ScoreDoc[DOCS];
    for (int i = 0; i < DOCS; i++) {
      hits[i] = new ScoreDoc(i, 1f);
    }
    TopDocs first = new TopDocs(new TotalHits(DOCS, TotalHits.Relation.EQUAL_TO), hits);
    IOException injected = new IOException("doc 10 cannot be read");
    for (boolean interrupt : new boolean[] {false, true}) {
      AtomicInteger reads = new AtomicInteger();
      try (DirectoryReader reader = new Reads(DirectoryReader.open(dir), reads, interrupt ? null : injected);
          MaxSim maxSim = MaxSim.builder().backend("vector").threads(4).build()) {
        assertTrue(reader.leaves().size() > 1, "several segments");
        MaxSimRescorer rescorer = MaxSimRescorer.create("colbert", random(rnd, 3),
            VectorSimilarityFunction.DOT_PRODUCT, MaxSimRescorer.Scale.RAW, maxSim);
        IndexSearcher searcher = new IndexSearcher(reader);
        if (interrupt) {
          Thread.currentThread().interrupt();
          IllegalStateException e = assertThrows(IllegalStateException.class,
              () -> rescorer.rescore(searcher, first, 10));
          assertTrue(Thread.interrupted(), "the interrupt is kept");
          assertTrue(e.getMessage().contains("interrupted"), e.getMessage());
        } else {
          assertSame(injected, assertThrows(IOException.class, () -> rescorer.rescore(searcher, first, 10)));
        }
        int atReturn = reads.get();
        assertTrue(atReturn < DOCS, "the blocks not begun are skipped: " + atReturn + " reads");
        Thread.sleep(100);
        assertEquals(atReturn, reads.get(),
            "doc values read after rescore " + (interrupt ? "was interrupted" : "threw"));
      }
    }
  }

  private static float[][] random(SplittableRandom rnd, int tokens) {
    float[][] t = new float[tokens][DIM];
    for (float[] token : t) {
      for (int k = 0; k < DIM; k++) {
        token[k] = (float) rnd.nextGaussian();
      }
    }
    return t;
  }

  /** Counts the doc values read, each taking a millisecond; doc 10 of the first segment fails with {@code failure}. */
  private static final class Reads extends FilterDirectoryReader {
    Reads(DirectoryReader in, AtomicInteger reads, IOException failure) throws IOException {
      super(in, new SubReaderWrapper() {
        private int wrapped;

        @Override
        public LeafReader wrap(LeafReader leaf) {
          boolean firstLeaf = wrapped++ == 0;
          return new FilterLeafReader(leaf) {
            @Override
            public BinaryDocValues getBinaryDocValues(String field) throws IOException {
              return new FilterBinaryDocValues(super.getBinaryDocValues(field)) {
                @Override
                public boolean advanceExact(int target) throws IOException {
                  reads.incrementAndGet();
                  if (failure != null && firstLeaf && target == 10) {
                    throw failure;
                  }
                  try {
                    Thread.sleep(1);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  return super.advanceExact(target);
                }
              };
            }

            @Override
            public CacheHelper getCoreCacheHelper() {
              return null;
            }

            @Override
            public CacheHelper getReaderCacheHelper() {
              return null;
            }
          };
        }
      });
    }

    @Override
    protected DirectoryReader doWrapDirectoryReader(DirectoryReader in) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CacheHelper getReaderCacheHelper() {
      return null;
    }
  }
}
