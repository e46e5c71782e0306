package dev.maxsim4j;

import java.util.Arrays;
import java.util.Objects;

/**
 * One forward, loss and backward ({@link MaxSim#lossAllPairs}, {@link MaxSim#lossCandidates}): the loss
 * (averaged over rows), the scores {@code [rows][columns]} and the gradients of the loss with respect to
 * the query and document embeddings, laid out like the inputs. Two steps are equal when their loss (as
 * {@link Double#equals}) and scores (as {@link Float#equals}) are and they hold the same gradient batches
 * ({@link TokenBatch} compares by identity). The scores array is the step's own, not a copy: changing it changes
 * the step, its equality and its hash.
 */
public record TrainingStep(double loss, float[][] scores, Gradients gradients) {
  // a record compares and prints its arrays by identity
  @Override
  public boolean equals(Object o) {
    return o instanceof TrainingStep t && Double.compare(loss, t.loss) == 0 && Arrays.deepEquals(scores, t.scores)
        && Objects.equals(gradients, t.gradients);
  }

  @Override
  public int hashCode() {
    return Objects.hash(loss, Arrays.deepHashCode(scores), gradients);
  }

  @Override
  public String toString() {
    return "TrainingStep[loss=" + loss + ", scores=" + ArrayText.of(scores) + ", gradients=" + gradients
        + "]";
  }
}
