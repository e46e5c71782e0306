package dev.maxsim4j.cli.text;

import dev.maxsim4j.DType;
import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.SafeTensors;
import dev.maxsim4j.langchain4j.MiniLmTokenEncoder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The token embeddings of a folder of text files, kept on disk in {@code FOLDER/.maxsim4j/} and reused: a
 * file whose size and modification time are unchanged is not encoded again.
 *
 * <p>Layout: {@code manifest.tsv} (one line per file: tokens, bytes, modification time in ms, path relative
 * to the folder) and {@code tokens.safetensors} (tensor {@code tokens}, BF16 {@code [T, 384]}, the files'
 * tokens in manifest order).
 */
public final class TextIndex {
  public static final String FOLDER = ".maxsim4j";
  private static final String HEADER = "# maxsim4j text index v1: all-MiniLM-L6-v2 token states, 384-d, bf16";

  /** One indexed file. */
  public record Entry(String path, long bytes, long modified, int tokens) {}

  private final List<Entry> entries;
  private final TokenBatch documents;
  private final int encoded;

  private TextIndex(List<Entry> entries, TokenBatch documents, int encoded) {
    this.entries = entries;
    this.documents = documents;
    this.encoded = encoded;
  }

  public List<Entry> entries() {
    return entries;
  }

  /** One packed bf16 row per entry. */
  public TokenBatch documents() {
    return documents;
  }

  /** How many files the last {@link #update} had to encode (the rest came from disk). */
  public int encoded() {
    return encoded;
  }

  /** Brings the index of {@code folder} up to date (encoding new and changed files) and loads it. */
  public static TextIndex update(Path folder, MiniLmTokenEncoder encoder, MiniLmTokenEncoder.Progress progress)
      throws IOException {
    Path dir = folder.resolve(FOLDER);
    Map<String, Entry> old = new HashMap<>();
    Map<String, Integer> oldStart = new HashMap<>();
    short[] oldTokens = new short[0];
    if (Files.isRegularFile(dir.resolve("manifest.tsv")) && Files.isRegularFile(dir.resolve("tokens.safetensors"))) {
      int start = 0;
      for (Entry e : readManifest(dir.resolve("manifest.tsv"))) {
        old.put(e.path(), e);
        oldStart.put(e.path(), start);
        start += e.tokens();
      }
      NdArray stored = SafeTensors.read(dir.resolve("tokens.safetensors"), "tokens");
      if (stored.halfs() == null || stored.rank() != 2 || stored.dim(1) != MiniLmTokenEncoder.DIM
          || stored.dim(0) != start) {
        throw new IllegalStateException(dir + " is damaged (tokens " + stored.shapeString() + ", manifest " + start
            + " tokens); delete the folder to rebuild the index");
      }
      oldTokens = stored.halfs();
    }

    List<Path> files = TextFiles.under(folder);
    List<String> toEncode = new ArrayList<>();
    List<Integer> encodeSlots = new ArrayList<>();
    Entry[] entries = new Entry[files.size()];
    for (int i = 0; i < files.size(); i++) {
      Path f = files.get(i);
      String rel = folder.relativize(f).toString();
      long bytes = Files.size(f);
      long modified = Files.getLastModifiedTime(f).toMillis();
      Entry previous = old.get(rel);
      if (previous != null && previous.bytes() == bytes && previous.modified() == modified) {
        entries[i] = previous;
      } else {
        entries[i] = new Entry(rel, bytes, modified, -1);
        toEncode.add(TextFiles.read(f));
        encodeSlots.add(i);
      }
    }
    TokenBatch fresh = toEncode.isEmpty() ? null : encoder.encode(toEncode, progress);
    // assemble: reused rows from the old tensor, encoded rows from `fresh`, in file order
    int[] offsets = new int[files.size() + 1];
    for (int i = 0, e = 0; i < files.size(); i++) {
      int tokens = entries[i].tokens() >= 0 ? entries[i].tokens() : fresh.length(e++);
      entries[i] = new Entry(entries[i].path(), entries[i].bytes(), entries[i].modified(), tokens);
      offsets[i + 1] = offsets[i] + tokens;
    }
    int dim = MiniLmTokenEncoder.DIM;
    short[] bits = new short[Math.multiplyExact(offsets[files.size()], dim)];
    float[] freshData = fresh == null ? null : fresh.toFloatArray();
    int[] freshOffsets = fresh == null ? null : fresh.offsets();
    for (int i = 0, e = 0; i < files.size(); i++) {
      if (e < encodeSlots.size() && encodeSlots.get(e) == i) {
        for (int x = freshOffsets[e] * dim, y = offsets[i] * dim; x < freshOffsets[e + 1] * dim; x++, y++) {
          bits[y] = DType.BFLOAT16.narrow(freshData[x]);
        }
        e++;
      } else {
        System.arraycopy(oldTokens, oldStart.get(entries[i].path()) * dim, bits, offsets[i] * dim,
            entries[i].tokens() * dim);
      }
    }
    List<Entry> list = List.of(entries);
    if (!toEncode.isEmpty() || old.size() != list.size()) {
      write(dir, list, bits);
    }
    return new TextIndex(list, TokenBatch.packedHalfs(DType.BFLOAT16, bits, offsets, dim), toEncode.size());
  }

  private static List<Entry> readManifest(Path manifest) throws IOException {
    List<Entry> out = new ArrayList<>();
    for (String line : Files.readAllLines(manifest, StandardCharsets.UTF_8)) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\t", 4);
      if (f.length != 4) {
        throw new IllegalStateException(manifest + " is damaged at '" + line + "'; delete its folder to rebuild");
      }
      out.add(new Entry(f[3], Long.parseLong(f[1]), Long.parseLong(f[2]), Integer.parseInt(f[0])));
    }
    return out;
  }

  /** Writes both files next to their final names, then moves them in place. */
  private static void write(Path dir, List<Entry> entries, short[] bits) throws IOException {
    Files.createDirectories(dir);
    StringBuilder manifest = new StringBuilder(HEADER).append('\n');
    for (Entry e : entries) {
      manifest.append(e.tokens()).append('\t').append(e.bytes()).append('\t').append(e.modified()).append('\t')
          .append(e.path()).append('\n');
    }
    Path tokens = dir.resolve("tokens.safetensors.tmp");
    Map<String, NdArray> tensors = new LinkedHashMap<>();
    tensors.put("tokens", new NdArray("tokens", NdArray.ElementType.BF16,
        new long[] {bits.length / MiniLmTokenEncoder.DIM, MiniLmTokenEncoder.DIM}, null, bits, null));
    SafeTensors.write(tokens, tensors);
    Path list = dir.resolve("manifest.tsv.tmp");
    Files.writeString(list, manifest, StandardCharsets.UTF_8);
    Files.move(tokens, dir.resolve("tokens.safetensors"), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
    Files.move(list, dir.resolve("manifest.tsv"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
