package dev.maxsim4j.cli.io;

import dev.maxsim4j.DType;
import java.util.Arrays;

/**
 * A dense array read from a file: its element type, shape and data. Exactly one of {@code floats},
 * {@code halfs} (fp16/bf16 bits) or {@code flags} (bool/uint8, nonzero = true) is set.
 */
public record NdArray(String source, ElementType type, long[] shape, float[] floats, short[] halfs, boolean[] flags) {

  public enum ElementType { F32, F16, BF16, BOOL }

  public static NdArray ofFloats(String source, long[] shape, float[] data) {
    return new NdArray(source, ElementType.F32, shape, data, null, null);
  }

  public int rank() {
    return shape.length;
  }

  public int dim(int axis) {
    return Math.toIntExact(shape[axis]);
  }

  public long elements() {
    long n = 1;
    for (long s : shape) {
      n = Math.multiplyExact(n, s);
    }
    return n;
  }

  public boolean isFloating() {
    return type != ElementType.BOOL;
  }

  public DType dtype() {
    return switch (type) {
      case F32 -> DType.FLOAT32;
      case F16 -> DType.FLOAT16;
      case BF16 -> DType.BFLOAT16;
      case BOOL -> throw new IllegalArgumentException(source + " holds booleans; expected floating-point embeddings");
    };
  }

  public String shapeString() {
    return Arrays.toString(shape);
  }
}
