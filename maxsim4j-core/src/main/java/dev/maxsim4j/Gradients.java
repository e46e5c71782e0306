package dev.maxsim4j;

/**
 * Gradients of a loss with respect to the query and document embeddings, each laid out exactly like its
 * input (same padding, packing and mask); masked tokens hold exactly zero.
 */
public record Gradients(TokenBatch queries, TokenBatch documents) {}
