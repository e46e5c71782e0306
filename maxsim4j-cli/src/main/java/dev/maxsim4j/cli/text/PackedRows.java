package dev.maxsim4j.cli.text;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.util.ArrayList;
import java.util.List;

/** Packed token rows kept as arrays (bf16, or codes and scales), so that a run of rows can be scored on its own. */
record PackedRows(StoredTokens tokens, int[] offsets) {
  /** Texts per encoder call: the fp32 states of one call are stored (bf16 or quantized) before the next. */
  private static final int ENCODE_TEXTS = 256;

  /** bf16 rows. */
  PackedRows(short[] bf16, int[] offsets, int dim) {
    this(StoredTokens.ofBf16(bf16, dim), offsets);
  }

  /** Each text's token vectors as one bf16 row. */
  static PackedRows encode(TextModel encoder, List<String> texts, Progress progress) {
    return encode(encoder, texts, progress, Store.BF16);
  }

  /** Each text's token vectors as one row, encoded a slice at a time so that only the stored form is kept. */
  static PackedRows encode(TextModel encoder, List<String> texts, Progress progress, Store store) {
    int dim = MiniLmTokenEncoder.DIM;
    int[] offsets = new int[texts.size() + 1];
    List<StoredTokens> parts = new ArrayList<>();
    for (int from = 0; from < texts.size(); from += ENCODE_TEXTS) {
      int base = from;
      List<String> slice = texts.subList(from, Math.min(texts.size(), from + ENCODE_TEXTS));
      TokenBatch b = encoder.encode(slice, (done, n) -> progress.update(base + done, texts.size()));
      parts.add(StoredTokens.of(store, b));
      for (int i = 0; i < slice.size(); i++) {
        offsets[from + i + 1] = Math.addExact(offsets[from + i], b.length(i));
      }
    }
    StoredTokens all = StoredTokens.allocate(store, offsets[texts.size()], dim);
    int at = 0;
    for (StoredTokens p : parts) {
      p.copyTo(0, all, at, p.tokens());
      at += p.tokens();
    }
    return new PackedRows(all, offsets);
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
