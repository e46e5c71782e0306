package dev.maxsim4j.internal.cuda;

/**
 * The device's scratch buffers, one grow-only buffer per slot and lane ({@link CudaDevice.Lane#scratch}):
 * naming them by type keeps two jobs from sharing a buffer by a typo.
 */
enum ScratchSlot {
  /** Queries staged for a call (resident ones are not copied). */
  QUERIES,
  /** Documents staged for a call. */
  DOCUMENTS,
  /** Compressed documents expanded to bf16 or fp16 operands for a launch (rule 21). */
  EXPANDED_DOCUMENTS,
  /** Scores a forward writes where they do not go straight to pinned host memory. */
  SCORES,
  /** The forward's argmax (int32, or int16 where a training step narrows it). */
  ARGMAX,
  /** Per (pair, slice, query row) maxima a split launch leaves for the merge. */
  PARTIAL_MAX,
  /** Their argmax. */
  PARTIAL_ARGMAX,
  /** The warp-specialized kernel's per-pass row sums. */
  WS_PASS_SUMS,
  /** The warp-specialized kernel's pass arrivals per pair (zero between launches). */
  WS_ARRIVALS,
  /** The streaming kernel's run-time pair counters (zero between launches). */
  WORK_COUNTERS,
  /** The gradient of the loss with respect to the scores. */
  DSCORES,
  /** dQ of the backward. */
  GRAD_QUERIES,
  /** dD of the backward. */
  GRAD_DOCUMENTS,
  /** A loss's own input: positives, teacher scores or margins. */
  LOSS_INPUT,
  /** A loss's value per query row. */
  LOSS_ROWS,
  /** Top-k keys kept per (query, segment). */
  TOPK_CANDIDATES,
  /** Top-k keys after a reduction pass (swapped with the candidates). */
  TOPK_REDUCED,
  /** The final k keys per query. */
  TOPK_BEST,
  /** The projection's left operand. */
  LINEAR_A,
  /** The projection's right operand. */
  LINEAR_B,
  /** The projection's result. */
  LINEAR_OUT
}
