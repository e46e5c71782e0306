package dev.maxsim4j.bench;

import dev.maxsim4j.DType;
import dev.maxsim4j.cli.UsageException;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The token type names the bench commands take (--dtype, --query-dtype), in one table: case-insensitive, with
 * their aliases. {@value #SYMMETRIC} (1-bit documents and queries) is a --dtype of the commands that time
 * compressed types, read with {@link #isSymmetric}.
 */
public final class BenchTypes {
  public static final String SYMMETRIC = "binary-sym";
  public static final Set<DType> FLOATS = EnumSet.of(DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16);
  public static final Set<DType> ALL = EnumSet.allOf(DType.class);
  private static final Map<String, DType> NAMES = new LinkedHashMap<>();
  private static final Map<DType, String> CANONICAL = new LinkedHashMap<>();

  static {
    name(DType.FLOAT32, "fp32", "float32", "f32");
    name(DType.FLOAT16, "fp16", "float16", "f16", "half");
    name(DType.BFLOAT16, "bf16", "bfloat16");
    name(DType.INT8, "int8", "i8");
    name(DType.FLOAT8_E4M3, "fp8", "e4m3", "float8_e4m3");
    name(DType.BINARY, "binary", "bit", "1bit");
  }

  private BenchTypes() {}

  private static void name(DType type, String canonical, String... aliases) {
    CANONICAL.put(type, canonical);
    NAMES.put(canonical, type);
    for (String alias : aliases) {
      NAMES.put(alias, type);
    }
  }

  /** Whether {@code name} is {@value #SYMMETRIC}. */
  public static boolean isSymmetric(String name) {
    return SYMMETRIC.equalsIgnoreCase(name);
  }

  /**
   * The type {@code name} gives {@code option} of {@code command}, one of {@code allowed}; else a usage error that
   * names the command, the option, the name and the choices ({@value #SYMMETRIC} among them where
   * {@code symmetric}: the caller reads that name itself).
   */
  public static DType parse(String command, String option, String name, Set<DType> allowed, boolean symmetric) {
    DType type = NAMES.get(name.toLowerCase(Locale.ROOT));
    if (type == null || !allowed.contains(type)) {
      String choices = allowed.stream().map(CANONICAL::get).collect(Collectors.joining(", "));
      int last = choices.lastIndexOf(", ");
      choices = symmetric ? choices + " or " + SYMMETRIC
          : last < 0 ? choices : choices.substring(0, last) + " or " + choices.substring(last + 2);
      throw new UsageException(command + ": " + option + " '" + name + "' is "
          + (type == null ? "unknown" : "not a type " + command + " takes") + "; expected " + choices);
    }
    return type;
  }
}
