package dev.maxsim4j;

/**
 * One forward, loss and backward ({@link MaxSim#lossAllPairs}, {@link MaxSim#lossCandidates}): the loss
 * (averaged over rows), the scores {@code [rows][columns]} and the gradients of the loss with respect to
 * the query and document embeddings, laid out like the inputs.
 */
public record TrainingStep(double loss, float[][] scores, Gradients gradients) {}
