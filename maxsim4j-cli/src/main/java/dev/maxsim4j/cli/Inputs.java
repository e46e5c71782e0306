package dev.maxsim4j.cli;

import dev.maxsim4j.TokenBatch;
import dev.maxsim4j.cli.io.NdArray;
import dev.maxsim4j.cli.io.Npy;
import dev.maxsim4j.cli.io.SafeTensors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Turns embedding and mask files into token batches. */
final class Inputs {
  private Inputs() {}

  /** Reads a .npy or .safetensors tensor ({@code tensor} names one inside a .safetensors file). */
  static NdArray read(String path, String tensor) throws IOException {
    Path p = Path.of(path);
    if (!Files.isRegularFile(p)) {
      throw new NoSuchFileException(path);
    }
    String lower = path.toLowerCase(java.util.Locale.ROOT);
    if (lower.endsWith(".safetensors")) {
      return SafeTensors.read(p, tensor);
    }
    if (tensor != null) {
      throw new UsageException("a tensor name was given for " + path + ", which is not a .safetensors file");
    }
    return Npy.read(p);
  }

  /**
   * Embeddings {@code [N, L, d]} (or {@code [L, d]}, one row) as a padded batch; a 4-D {@code [B, K, L, d]}
   * becomes {@code B*K} rows. The mask, if any, has the leading shape {@code [N, L]} (or {@code [B, K, L]}).
   */
  static TokenBatch batch(String what, NdArray emb, NdArray mask) {
    if (!emb.isFloating()) {
      throw new IllegalArgumentException(what + " " + emb.source() + " holds booleans; expected float embeddings");
    }
    int rank = emb.rank();
    if (rank < 2 || rank > 4) {
      throw new IllegalArgumentException(what + " " + emb.source() + " has shape " + emb.shapeString()
          + "; expected [N, L, d]" + (rank == 4 ? "" : " (or [L, d], or [B, K, L, d] for candidates)"));
    }
    int d = emb.dim(rank - 1);
    int l = emb.dim(rank - 2);
    int n = 1;
    for (int a = 0; a < rank - 2; a++) {
      n = Math.multiplyExact(n, emb.dim(a));
    }
    TokenBatch b = emb.floats() != null
        ? TokenBatch.ofFloats(emb.floats(), n, l, d)
        : TokenBatch.ofHalfs(emb.dtype(), emb.halfs(), n, l, d);
    if (mask != null) {
      boolean shapeOk = mask.rank() == rank - 1;
      for (int a = 0; shapeOk && a < rank - 1; a++) {
        shapeOk = mask.shape()[a] == emb.shape()[a];
      }
      if (!shapeOk) {
        long[] expected = java.util.Arrays.copyOf(emb.shape(), rank - 1);
        throw new IllegalArgumentException(what + " mask " + mask.source() + " has shape " + mask.shapeString()
            + "; expected " + java.util.Arrays.toString(expected) + " to match embeddings " + emb.shapeString());
      }
      if (mask.flags() == null) {
        throw new IllegalArgumentException(what + " mask " + mask.source() + " holds floats; expected bool or uint8");
      }
      b = b.withMask(mask.flags());
    }
    return b;
  }
}
