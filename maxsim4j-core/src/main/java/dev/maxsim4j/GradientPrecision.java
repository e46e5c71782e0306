package dev.maxsim4j;

/** Element type of returned gradients: always accumulated in fp32, optionally rounded to the input type. */
public enum GradientPrecision {
  /** fp32 gradients (default). */
  FLOAT32,
  /** The dtype of the corresponding input (fp16/bf16 gradients are rounded to nearest even). */
  INPUT
}
