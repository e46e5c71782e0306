package dev.maxsim4j;

/** Element type of returned gradients: always accumulated in fp32, optionally rounded to the input type. */
public enum GradientPrecision {
  /** fp32 gradients (default). */
  FLOAT32,
  /**
   * The dtype of the corresponding input: fp16/bf16 gradients are the fp32 ones rounded to nearest even, so an
   * fp16 gradient that rounds past fp16's largest finite value (65504) is infinite, as a framework's cast to half
   * gives it; keep {@link #FLOAT32} (or scale the loss) where gradients can grow that large.
   */
  INPUT
}
