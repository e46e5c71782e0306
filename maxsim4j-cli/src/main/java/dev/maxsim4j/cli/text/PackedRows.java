package dev.maxsim4j.cli.text;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.Progress;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Packed bf16 token rows kept as arrays, so that a run of rows can be scored on its own. */
record PackedRows(short[] bf16, int[] offsets, int dim) {
  /** Texts per encoder call: the fp32 states of one call are narrowed to bf16 before the next. */
  private static final int ENCODE_TEXTS = 256;

  /** Each text's token vectors as one row, encoded a slice at a time so that only bf16 is kept. */
  static PackedRows encode(MiniLmTokenEncoder encoder, List<String> texts, Progress progress) {
    int dim = MiniLmTokenEncoder.DIM;
    int[] offsets = new int[texts.size() + 1];
    List<short[]> parts = new ArrayList<>();
    for (int from = 0; from < texts.size(); from += ENCODE_TEXTS) {
      int base = from;
      List<String> slice = texts.subList(from, Math.min(texts.size(), from + ENCODE_TEXTS));
      TokenBatch b = encoder.encode(slice, (done, n) -> progress.update(base + done, texts.size()));
      float[] data = b.toFloatArray();
      short[] bits = new short[data.length];
      for (int x = 0; x < data.length; x++) {
        bits[x] = DType.BFLOAT16.narrow(data[x]);
      }
      parts.add(bits);
      for (int i = 0; i < slice.size(); i++) {
        offsets[from + i + 1] = Math.addExact(offsets[from + i], b.length(i));
      }
    }
    short[] all = new short[Math.multiplyExact(offsets[texts.size()], dim)];
    int at = 0;
    for (short[] p : parts) {
      System.arraycopy(p, 0, all, at, p.length);
      at += p.length;
    }
    return new PackedRows(all, offsets, dim);
  }

  int size() {
    return offsets.length - 1;
  }

  int length(int row) {
    return offsets[row + 1] - offsets[row];
  }

  /** Rows {@code from} (inclusive) to {@code to} (exclusive) as a batch of their own. */
  TokenBatch slice(int from, int to) {
    int[] o = new int[to - from + 1];
    for (int i = 0; i < o.length; i++) {
      o[i] = offsets[from + i] - offsets[from];
    }
    short[] bits = from == 0 && to == size() ? bf16
        : Arrays.copyOfRange(bf16, offsets[from] * dim, offsets[to] * dim);
    return TokenBatch.packedHalfs(DType.BFLOAT16, bits, o, dim);
  }
}
