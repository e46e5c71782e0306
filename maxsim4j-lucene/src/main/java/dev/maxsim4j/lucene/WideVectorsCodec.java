package dev.maxsim4j.lucene;

import java.io.IOException;
import org.apache.lucene.codecs.Codec;
import org.apache.lucene.codecs.FilterCodec;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.KnnVectorsReader;
import org.apache.lucene.codecs.KnnVectorsWriter;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.codecs.perfield.PerFieldKnnVectorsFormat;
import org.apache.lucene.index.SegmentReadState;
import org.apache.lucene.index.SegmentWriteState;

/**
 * Lucene's default codec with its HNSW vectors format accepting more than Lucene's default 1,024 dimensions,
 * for fixed dimensional encodings that are wider. It writes exactly what the default codec writes under the
 * same names, so a plain {@code DirectoryReader} (and any Lucene of this codec version) reads the index; only
 * writing needs this codec ({@code IndexWriterConfig.setCodec}).
 */
public final class WideVectorsCodec extends FilterCodec {
  /**
   * The widest encoding this codec takes: the FDE encoder's own bound on an encoding
   * ({@code FixedDimensionalEncoder.Builder.MAX_DIMENSION}), far past Lucene's default 1,024.
   */
  public static final int MAX_DIMENSIONS = 1 << 16;
  private final KnnVectorsFormat perField;

  /**
   * The codec for vectors of {@code dimensions}: Lucene's default where they fit its {@value
   * KnnVectorsFormat#DEFAULT_MAX_DIMENSIONS}, else this one. The one place that choice is made.
   *
   * @throws IllegalArgumentException where {@code dimensions} is not 1 to {@value #MAX_DIMENSIONS}
   */
  public static Codec forDimensions(int dimensions) {
    requireDimensions(dimensions, "dimensions");
    return dimensions <= KnnVectorsFormat.DEFAULT_MAX_DIMENSIONS ? Codec.getDefault()
        : new WideVectorsCodec(dimensions);
  }

  /** The default codec, its vectors format accepting up to {@code maxDimensions} dimensions per vector. */
  public WideVectorsCodec(int maxDimensions) {
    super(Codec.getDefault().getName(), Codec.getDefault());
    requireDimensions(maxDimensions, "maxDimensions");
    KnnVectorsFormat wide = new Wide(new Lucene99HnswVectorsFormat(), maxDimensions);
    this.perField = new PerFieldKnnVectorsFormat() {
      @Override
      public KnnVectorsFormat getKnnVectorsFormatForField(String field) {
        return wide;
      }
    };
  }

  @Override
  public KnnVectorsFormat knnVectorsFormat() {
    return perField;
  }

  /** The HNSW format under its own name, with a higher dimension limit. */
  private static final class Wide extends KnnVectorsFormat {
    private final KnnVectorsFormat delegate;
    private final int maxDimensions;

    Wide(KnnVectorsFormat delegate, int maxDimensions) {
      super(delegate.getName());
      this.delegate = delegate;
      this.maxDimensions = maxDimensions;
    }

    @Override
    public KnnVectorsWriter fieldsWriter(SegmentWriteState state) throws IOException {
      return delegate.fieldsWriter(state);
    }

    @Override
    public KnnVectorsReader fieldsReader(SegmentReadState state) throws IOException {
      return delegate.fieldsReader(state);
    }

    @Override
    public int getMaxDimensions(String fieldName) {
      return maxDimensions;
    }
  }

  private static void requireDimensions(int dimensions, String name) {
    if (dimensions < 1 || dimensions > MAX_DIMENSIONS) {
      throw new IllegalArgumentException(name + " = " + dimensions + "; expected 1 to " + MAX_DIMENSIONS);
    }
  }
}
