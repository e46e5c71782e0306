package dev.maxsim4j.internal.cuda.plan;

import dev.maxsim4j.DType;

/**
 * How the kernels name and code each storage type, in one table: the suffix of their entry points, the code of
 * maxsim_fde.cu's {@code Storage} and of maxsim_backward.cu's {@code GradientType} (KernelCodesTest compares both
 * with the kernels' enums).
 */
public enum KernelType {
  F32(DType.FLOAT32, "f32", 0, 0),
  F16(DType.FLOAT16, "f16", 1, 1),
  BF16(DType.BFLOAT16, "bf16", 2, 2),
  S8(DType.INT8, "s8", 3, KernelType.NO_GRADIENTS),
  E4M3(DType.FLOAT8_E4M3, "e4m3", 4, KernelType.NO_GRADIENTS),
  B1(DType.BINARY, "b1", 5, KernelType.NO_GRADIENTS);

  /** The gradient code of a type gradients are never written in (training inputs are fp32, fp16 or bf16). */
  private static final int NO_GRADIENTS = -1;

  private final DType dtype;
  private final String suffix;
  private final int storageCode;
  private final int gradientCode;

  KernelType(DType dtype, String suffix, int storageCode, int gradientCode) {
    this.dtype = dtype;
    this.suffix = suffix;
    this.storageCode = storageCode;
    this.gradientCode = gradientCode;
  }

  /** The kernels' view of {@code type}. */
  public static KernelType of(DType type) {
    return switch (type) {
      case FLOAT32 -> F32;
      case FLOAT16 -> F16;
      case BFLOAT16 -> BF16;
      case INT8 -> S8;
      case FLOAT8_E4M3 -> E4M3;
      case BINARY -> B1;
    };
  }

  /** The storage type this names. */
  public DType dtype() {
    return dtype;
  }

  /** The type's part of an entry point's name, e.g. {@code bf16} in {@code maxsim_forward_bf16_bf16}. */
  public String suffix() {
    return suffix;
  }

  /** The code of maxsim_fde.cu's {@code Storage} for tokens of this type. */
  public int storageCode() {
    return storageCode;
  }

  /** The code of maxsim_backward.cu's {@code GradientType} for gradients stored in this type. */
  public int gradientCode() {
    if (gradientCode == NO_GRADIENTS) {
      throw new IllegalStateException("gradients are not written in " + dtype);
    }
    return gradientCode;
  }
}
