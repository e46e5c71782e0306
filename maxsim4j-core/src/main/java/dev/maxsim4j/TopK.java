package dev.maxsim4j;

/**
 * The best {@code k} documents of each query: {@code scores[i][r]} and {@code indices[i][r]} at rank
 * {@code r} (0 is best). Higher scores first; equal scores by the lower document index; a NaN score ranks
 * above every number so that a corrupt document is seen, not hidden. A query has {@code min(k, Nd)} entries.
 */
public record TopK(float[][] scores, int[][] indices) {}
