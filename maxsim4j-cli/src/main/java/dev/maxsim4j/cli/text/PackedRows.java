package dev.maxsim4j.cli.text;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.util.Arrays;
import java.util.List;

/** Packed token rows kept as arrays (bf16, or codes and scales), so that a run of rows can be scored on its own. */
record PackedRows(StoredTokens tokens, int[] offsets) {
  /** The most texts per encoder call: the fp32 states of one call are stored (bf16 or quantized) before the next. */
  private static final int ENCODE_TEXTS = 256;
  /** The most tokens per encoder call: its fp32 states, held twice, take some 50 MB beside the stored tokens. */
  private static final long ENCODE_TOKENS = 16_384;
  /** The most tokens of 384 dims that one Java array of their values holds. */
  static final long MAX_TOKENS = (Integer.MAX_VALUE - 8L) / MiniLmTokenEncoder.DIM;

  /** bf16 rows. */
  PackedRows(short[] bf16, int[] offsets, int dim) {
    this(StoredTokens.ofBf16(bf16, dim), offsets);
  }

  /**
   * Each text's token vectors as one row, encoded a slice at a time so that only the stored form is kept; {@code
   * tokenCounts} are the texts' {@link TextModel#tokenCount}s, whose sum the caller has checked against what it
   * holds. A slice holds at most {@value #ENCODE_TOKENS} tokens and what one encoder call takes on this heap ({@link
   * MiniLmTokenEncoder#maxTokensPerCall}), so that a small heap holds the stored tokens and one call's states.
   */
  static PackedRows encode(TextModel encoder, List<String> texts, int[] tokenCounts, Progress progress, Store store) {
    int dim = MiniLmTokenEncoder.DIM;
    long perCall = Math.min(ENCODE_TOKENS, MiniLmTokenEncoder.maxTokensPerCall());
    long total = Arrays.stream(tokenCounts).asLongStream().sum();
    requireAtMostMax(total, "the texts", "encode fewer or shorter texts"); // a caller's limit is at most this
    // allocated once, each slice stored into it as it is encoded: the texts' tokens are held once, not twice
    StoredTokens all = StoredTokens.allocate(store, (int) total, dim);
    long[] offsets = new long[texts.size() + 1];
    for (int from = 0, to; from < texts.size(); from = to) {
      to = sliceEnd(tokenCounts, from, perCall);
      int base = from;
      List<String> slice = texts.subList(from, to);
      TokenBatch b = encoder.encode(slice, (done, n) -> progress.update(base + done, texts.size()));
      for (int i = 0; i < slice.size(); i++) {
        if (b.length(i) != tokenCounts[from + i]) {
          throw new IllegalStateException("the encoder gave texts[" + (from + i) + "] " + b.length(i) + " tokens where"
              + " it counted " + tokenCounts[from + i]);
        }
        offsets[from + i + 1] = offsets[from + i] + b.length(i);
      }
      StoredTokens part = StoredTokens.of(store, b);
      part.copyTo(0, all, (int) offsets[from], part.tokens());
    }
    int[] rows = new int[offsets.length];
    for (int i = 0; i < rows.length; i++) {
      rows[i] = (int) offsets[i];
    }
    return new PackedRows(all, rows);
  }

  /**
   * Where the slice from {@code from} ends: at most {@value #ENCODE_TEXTS} texts whose counts sum to at most {@code
   * perCall}, and at least one text (one past it is refused by the encoder, naming it).
   */
  static int sliceEnd(int[] tokenCounts, int from, long perCall) {
    int to = from + 1;
    for (long tokens = tokenCounts[from]; to < tokenCounts.length && to - from < ENCODE_TEXTS
        && tokens + tokenCounts[to] <= perCall; to++) {
      tokens += tokenCounts[to];
    }
    return to;
  }

  /** Refuses {@code tokens} past {@link #MAX_TOKENS}, naming {@code what} holds them and {@code instead}. */
  static void requireAtMostMax(long tokens, String what, String instead) {
    if (tokens > MAX_TOKENS) {
      throw new IllegalArgumentException(what + " encode to at least " + tokens + " tokens; at most " + MAX_TOKENS
          + " fit one array of their values; " + instead);
    }
  }

  int dim() {
    return tokens.dim();
  }

  int size() {
    return offsets.length - 1;
  }

  int length(int row) {
    return offsets[row + 1] - offsets[row];
  }

  /** The given rows, in that order, copied into a batch of their own (one fused call scores them all). */
  TokenBatch gather(int[] rows) {
    int[] o = new int[rows.length + 1];
    for (int i = 0; i < rows.length; i++) {
      o[i + 1] = Math.addExact(o[i], length(rows[i]));
    }
    StoredTokens gathered = StoredTokens.allocate(tokens.store(), o[rows.length], dim());
    for (int i = 0; i < rows.length; i++) {
      tokens.copyTo(offsets[rows[i]], gathered, o[i], length(rows[i]));
    }
    return gathered.batch(0, o[rows.length], o);
  }

  /** Rows {@code from} (inclusive) to {@code to} (exclusive) as a batch of their own. */
  TokenBatch slice(int from, int to) {
    int[] o = new int[to - from + 1];
    for (int i = 0; i < o.length; i++) {
      o[i] = offsets[from + i] - offsets[from];
    }
    return tokens.batch(offsets[from], offsets[to], o);
  }
}
