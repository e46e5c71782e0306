package dev.maxsim4j.cli.text;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.NativeWork;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.util.List;

/**
 * The MiniLM token encoder as the commands (and the bench's) use it: loading it, encoding and closing it are native
 * work that INT and TERM wait out ({@link NativeWork}), an encoding's batches one at a time.
 */
public final class TextModel implements AutoCloseable {
  private final MiniLmTokenEncoder encoder;

  private TextModel(MiniLmTokenEncoder encoder) {
    this.encoder = encoder;
  }

  public static TextModel load() {
    return new TextModel(NativeWork.during(MiniLmTokenEncoder::load));
  }

  public TokenBatch encode(String text) {
    return NativeWork.during(() -> encoder.encode(text));
  }

  public TokenBatch encode(List<String> texts) {
    return encode(texts, (done, all) -> {});
  }

  /** As {@link MiniLmTokenEncoder#encode(List, MiniLmTokenEncoder.Progress)}. */
  public TokenBatch encode(List<String> texts, MiniLmTokenEncoder.Progress progress) {
    return NativeWork.during(() -> encoder.encode(texts, (done, all) -> {
      progress.update(done, all);
      NativeWork.between();
    }));
  }

  /** As {@link MiniLmTokenEncoder#tokenCount}. */
  public int tokenCount(String text) {
    return NativeWork.during(() -> encoder.tokenCount(text));
  }

  public boolean hasWordPiece(String text) {
    return NativeWork.during(() -> encoder.hasWordPiece(text));
  }

  @Override
  public void close() {
    NativeWork.during(() -> {
      encoder.close();
      return null;
    });
  }
}
