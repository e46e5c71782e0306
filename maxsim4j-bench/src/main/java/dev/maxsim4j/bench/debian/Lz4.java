package dev.maxsim4j.bench.debian;

import dev.maxsim4j.cli.UsageException;
import dev.maxsim4j.cli.text.TextFiles;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** apt's lists as plain text: {@code .lz4} files (as apt stores them) through the lz4 program. */
public final class Lz4 {
  private Lz4() {}

  /**
   * The text of {@code file}, named by {@code option} in errors as {@code expected} (e.g. "an apt list"); the caller
   * closes the stream.
   */
  public static InputStream open(String option, Path file, String expected) throws IOException {
    TextFiles.requireRegularFile(option, file, expected);
    if (!file.getFileName().toString().endsWith(".lz4")) {
      return Files.newInputStream(file);
    }
    Process lz4;
    try {
      lz4 = new ProcessBuilder("lz4", "-dc", "--", file.toString()) // "--": a name may start with "-"
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
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
            // the file's content, not the command line, is at fault: bad input, as a list lacking packages is
            throw new IllegalArgumentException(option + " " + file + ": lz4 -dc failed; expected an lz4-compressed"
                + " list");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while reading " + file, e);
        }
      }
    };
  }
}
