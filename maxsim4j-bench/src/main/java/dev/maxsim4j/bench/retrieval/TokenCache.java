package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.bench.retrieval.KnownItems.Item;
import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.io.AtomicOutput;
import dev.maxsim4j.cli.io.Counts;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.cli.text.TextModel;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * MiniLM token embeddings of an evaluation set, encoded once and kept as packed bf16 {@code .safetensors}
 * chunks of {@value #CHUNK} packages under a folder named by the set's hash: each chunk is written whole
 * (to a temporary name, then moved), so an encode that is cut off resumes at its first missing chunk.
 */
final class TokenCache {
  static final int CHUNK = 500;
  private final Path dir;
  private final int chunk;

  TokenCache(Path root, String setHash) {
    this(root, setHash, CHUNK);
  }

  /** A cache of chunks of {@code chunk} packages (tests use small ones). */
  TokenCache(Path root, String setHash, int chunk) {
    // named by the encoder's version, so that another version's encodings are never reused
    this.dir = root.resolve("minilm-v2-bf16-" + setHash + (chunk == CHUNK ? "" : "-" + chunk));
    this.chunk = chunk;
  }

  Path dir() {
    return dir;
  }

  private Path file(int c) {
    return dir.resolve(String.format(Locale.ROOT, "chunk-%05d.safetensors", c));
  }

  int chunkSize() {
    return chunk;
  }

  int chunks(int items) {
    return (items + chunk - 1) / chunk;
  }

  /** Chunks of the first {@code n} items already encoded, from the first. */
  int encodedChunks(int n) {
    int c = 0;
    while (c < chunks(n) && Files.isRegularFile(file(c))) {
      c++;
    }
    return c;
  }

  /** Encodes every missing chunk of the first {@code n} items (whole chunks), logging progress to {@code log}. */
  void encode(List<Item> items, int n, PrintStream log) throws IOException {
    int total = chunks(n);
    int missing = 0;
    for (int c = 0; c < total; c++) {
      missing += Files.isRegularFile(file(c)) ? 0 : 1;
    }
    if (missing == 0) {
      return;
    }
    try (TextModel encoder = TextModel.load()) {
      long start = System.nanoTime();
      int done = 0;
      for (int c = 0; c < total; c++) {
        if (Files.isRegularFile(file(c))) {
          continue;
        }
        List<Item> part = items.subList(c * chunk, Math.min(items.size(), (c + 1) * chunk));
        TokenBatch docs = encoder.encode(part.stream().map(Item::text).toList());
        TokenBatch queries = encoder.encode(part.stream().map(Item::summary).toList());
        Map<String, NdArray> tensors = new LinkedHashMap<>();
        put(tensors, "doc", docs);
        put(tensors, "query", queries);
        Path temp = dir.resolve(file(c).getFileName() + ".part");
        // made with the first chunk to write: a run that failed before (no model, a bad list) leaves no folder
        Files.createDirectories(dir);
        try {
          SafeTensors.write(temp, tensors);
          AtomicOutput.moveIntoPlace(temp, file(c));
        } catch (IOException | RuntimeException e) {
          Files.deleteIfExists(temp);
          throw e;
        }
        done++;
        double s = (System.nanoTime() - start) / 1e9;
        log.printf(Locale.ROOT, "encoded chunk %d (%d of %d missing): %.0f s, %.1f ms per package%n", c, done,
            missing, s, 1000 * s / (done * (double) chunk));
      }
    }
  }

  private static void put(Map<String, NdArray> tensors, String name, TokenBatch b) {
    float[] f = b.toFloatArray();
    short[] bits = new short[f.length];
    for (int i = 0; i < f.length; i++) {
      bits[i] = Encoded.toBf16(f[i]);
    }
    int[] offsets = b.offsets();
    tensors.put(name + "_tokens", new NdArray(name, NdArray.ElementType.BF16,
        new long[] {offsets[offsets.length - 1], b.dim()}, null, bits, null));
    tensors.put(name + "_offsets", NdArray.ofSegment(name, NdArray.ElementType.I32, new long[] {offsets.length},
        MemorySegment.ofArray(offsets)));
  }

  /**
   * A chunk's offsets run from 0, never down, to at most its tokens, over at least {@code rows} rows; its tokens are
   * [T, d] of the encoder's d. A damaged chunk is named with the way out, rather than read out of bounds.
   */
  private void checkChunk(int c, String kind, int rows, int[] o, NdArray t) {
    long stored = t.rank() == 2 ? t.shape()[0] : -1;
    boolean ok = t.rank() == 2 && t.shape()[1] == MiniLmTokenEncoder.DIM && o.length > rows && o[0] == 0;
    for (int r = 0; ok && r < rows; r++) {
      ok = o[r] <= o[r + 1];
    }
    if (!ok || o[rows] > stored) {
      throw new UsageException(file(c) + " is damaged (" + kind + "_offsets do not run from 0 up to its "
          + Counts.of(Math.max(stored, 0), "token") + " over " + Counts.of(rows, "row") + ", or " + kind + "_tokens is"
          + " not [T, " + MiniLmTokenEncoder.DIM + "]); expected a chunk this command wrote: delete it and encode"
          + " again (--encode)");
    }
  }

  /** The documents ({@code "doc"}) or queries ({@code "query"}) of the first {@code n} items, off the heap. */
  Encoded load(String kind, int n, Arena arena) throws IOException {
    if (encodedChunks(n) < chunks(n)) {
      throw new UsageException(dir + " holds " + encodedChunks(n) + " of the " + Counts.of(chunks(n), "chunk")
          + " for the first " + Counts.of(n, "package") + "; encode them first (--encode " + n + ")");
    }
    List<NdArray> tokens = new ArrayList<>();
    List<int[]> offsets = new ArrayList<>();
    long total = 0;
    for (int c = 0; c < chunks(n); c++) {
      int rows = Math.min(chunk, n - c * chunk);
      int[] o = SafeTensors.read(file(c), kind + "_offsets").segment().toArray(ValueLayout.JAVA_INT_UNALIGNED);
      NdArray t = SafeTensors.read(file(c), kind + "_tokens");
      checkChunk(c, kind, rows, o, t);
      tokens.add(t);
      offsets.add(o);
      total += o[rows];
    }
    int dim = MiniLmTokenEncoder.DIM;
    MemorySegment all = arena.allocate(total * dim * 2, 64);
    int[] merged = new int[n + 1];
    long at = 0;
    for (int c = 0; c < offsets.size(); c++) {
      int rows = Math.min(chunk, n - c * chunk);
      int[] o = offsets.get(c);
      for (int r = 0; r < rows; r++) {
        merged[c * chunk + r + 1] = (int) (at + o[r + 1]);
      }
      long bytes = (long) o[rows] * dim * 2;
      MemorySegment.copy(tokens.get(c).segment(), 0, all, at * dim * 2, bytes);
      at += o[rows];
    }
    return new Encoded(all, merged, dim);
  }
}
