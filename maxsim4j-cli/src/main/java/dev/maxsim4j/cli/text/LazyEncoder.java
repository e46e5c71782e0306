package dev.maxsim4j.cli.text;

import java.util.function.Supplier;

/**
 * The MiniLM encoder, loaded on first use: an index run with nothing new to encode, or one refused first (a folder
 * without text), never loads the model. Once closed it loads nothing more, since no one would close that model.
 */
final class LazyEncoder implements Supplier<TextModel>, AutoCloseable {
  private TextModel encoder;
  private boolean closed;

  @Override
  public TextModel get() {
    if (closed) {
      throw new IllegalStateException("the encoder is closed");
    }
    if (encoder == null) {
      encoder = TextModel.load();
    }
    return encoder;
  }

  @Override
  public void close() {
    closed = true;
    if (encoder != null) {
      TextModel loaded = encoder;
      encoder = null;
      loaded.close();
    }
  }
}
