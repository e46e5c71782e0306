package dev.maxsim4j.cli.text;

import dev.maxsim4j.DType;
import dev.maxsim4j.cli.UsageException;

/** How a text index stores its token vectors: bf16, or int8 / 1-bit codes with one fp32 scale per token. */
public enum Store {
  BF16("bf16", DType.BFLOAT16),
  INT8("int8", DType.INT8),
  BINARY("binary", DType.BINARY);

  private final String label;
  private final DType dtype;

  Store(String label, DType dtype) {
    this.label = label;
    this.dtype = dtype;
  }

  public DType dtype() {
    return dtype;
  }

  /** The {@code --store} value of {@code command}; null when the option is absent. */
  public static Store parse(String command, String value) {
    if (value == null) {
      return null;
    }
    for (Store s : values()) {
      if (s.label.equals(value)) {
        return s;
      }
    }
    throw new UsageException(command + ": --store = " + value + "; expected bf16, int8 or binary");
  }

  @Override
  public String toString() {
    return label;
  }
}
