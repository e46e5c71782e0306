package dev.maxsim4j.cli.text;

import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.util.function.Supplier;

/**
 * The MiniLM encoder, loaded on first use: an index run with nothing new to encode, or one refused first (a folder
 * without text), never loads the model.
 */
final class LazyEncoder implements Supplier<MiniLmTokenEncoder>, AutoCloseable {
  private MiniLmTokenEncoder encoder;

  @Override
  public MiniLmTokenEncoder get() {
    if (encoder == null) {
      encoder = MiniLmTokenEncoder.load();
    }
    return encoder;
  }

  @Override
  public void close() {
    if (encoder != null) {
      encoder.close();
    }
  }
}
