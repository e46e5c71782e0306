package dev.maxsim4j.cli.io;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One {@code .safetensors} file, mapped and its header parsed and checked once, from which any of its tensors is
 * read: several tensors of one file (embeddings, mask, scales, offsets) cost one parse of a header of up to
 * 100 MB, and all come from the same bytes even if the file is replaced meanwhile.
 */
public final class SafeTensorsFile {
  private final Path file;
  private final MemorySegment all;
  private final SafeTensorsHeader header;

  private SafeTensorsFile(Path file, MemorySegment all, SafeTensorsHeader header) {
    this.file = file;
    this.all = all;
    this.header = header;
  }

  /** Maps {@code file} and checks its header; an IllegalArgumentException naming the file if it is not one. */
  public static SafeTensorsFile open(Path file) throws IOException {
    MemorySegment all = MappedFiles.map(file);
    return new SafeTensorsFile(file, all, SafeTensorsHeader.read(file, all));
  }

  /** The header's {@code __metadata__} entries whose values are strings (none when it has none). */
  public Map<String, String> metadata() {
    return header.metadata();
  }

  /** The keys of the header's other {@code __metadata__} entries (numbers, objects...), which mean nothing here. */
  public List<String> otherMetadata() {
    return header.otherMetadata();
  }

  /** Names of the tensors, in header order. */
  public List<String> names() {
    return new ArrayList<>(header.tensors().keySet());
  }

  /** Reads one tensor, as a view of the file's bytes; {@code name} null means the file's only tensor. */
  public NdArray read(String name) {
    Map<String, SafeTensorsHeader.Tensor> tensors = header.tensors();
    if (name == null) {
      if (tensors.size() != 1) {
        throw new IllegalArgumentException(file + " holds " + tensors.size() + " tensors " + shown(tensors.keySet())
            + "; name one with the matching --...-tensor option");
      }
      name = tensors.keySet().iterator().next();
    }
    SafeTensorsHeader.Tensor t = tensors.get(name);
    if (t == null) {
      throw new IllegalArgumentException(file + " has no tensor '" + Printable.of(name) + "'; it holds "
          + shown(tensors.keySet()));
    }
    String source = file + ":" + Printable.of(name);
    NdArray.ElementType type = switch (t.dtype()) {
      case "F32" -> NdArray.ElementType.F32;
      case "F16" -> NdArray.ElementType.F16;
      case "BF16" -> NdArray.ElementType.BF16;
      case "BOOL" -> NdArray.ElementType.BOOL;
      case "U8" -> NdArray.ElementType.U8;
      case "I8" -> NdArray.ElementType.I8;
      case "F8_E4M3" -> NdArray.ElementType.F8_E4M3;
      case "I32" -> NdArray.ElementType.I32;
      case "I64" -> NdArray.ElementType.I64;
      default -> throw new UnsupportedDtypeException(source, MiniJson.shown(t.dtype()),
          "F32, F16, BF16, BOOL, U8, I8, F8_E4M3, I32 or I64");
    };
    return NdArray.ofSegment(source, type, t.shape(),
        all.asSlice(header.dataStart() + t.begin(), t.end() - t.begin()));
  }

  /** Tensor names for a message: quoted, one-line safe, the first 10 and a count of the rest. */
  public static String shown(java.util.Collection<String> names) {
    List<String> quoted = names.stream().limit(10).map(MiniJson::shown).toList();
    return "[" + String.join(", ", quoted) + (names.size() > 10 ? ", ... " + (names.size() - 10) + " more" : "")
        + "]";
  }
}
