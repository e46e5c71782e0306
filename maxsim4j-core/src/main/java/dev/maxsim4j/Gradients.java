package dev.maxsim4j;

/**
 * Gradients of a loss with respect to the query and document embeddings, each laid out exactly like its
 * input (same padding, packing and mask); masked tokens hold exactly zero. Each valid query token's gradient flows
 * to the one document token it matched (the lowest slot among ties), so a pair without a match passes none to
 * either side: a pair with an empty document (its constant -1e9 score), a query with no valid token.
 */
public record Gradients(TokenBatch queries, TokenBatch documents) {}
