package dev.maxsim4j.bench.retrieval;

import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.text.TextFiles;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** apt's lists as plain text: {@code .lz4} files (as apt stores them) through the lz4 program. */
final class Lz4 {
  private Lz4() {}

  /** The text of {@code file}, named by {@code option} in errors; the caller closes the stream. */
  static InputStream open(String option, Path file) throws IOException {
    TextFiles.requireRegularFile(option, file, "an apt list");
    if (!file.getFileName().toString().endsWith(".lz4")) {
      return Files.newInputStream(file);
    }
    Process lz4;
    try {
      lz4 = new ProcessBuilder("lz4", "-dc", file.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      throw new UsageException(option + " " + file + " is lz4-compressed and the lz4 program is missing;"
          + " expected lz4 on the PATH (apt-get install lz4) or a decompressed list");
    }
    return new FilterInputStream(lz4.getInputStream()) {
      @Override
      public void close() throws IOException {
        super.close();
        try {
          if (lz4.waitFor() != 0) {
            throw new UsageException(option + " " + file + ": lz4 -dc failed; expected an lz4-compressed list");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while reading " + file, e);
        }
      }
    };
  }
}
