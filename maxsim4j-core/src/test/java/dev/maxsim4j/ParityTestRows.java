package dev.maxsim4j;

/** Row surgery shared by the parity tests. */
final class ParityTestRows {
  private ParityTestRows() {}

  /** Masks out every token of row 0 (padded) so the batch has an empty row. */
  static TokenBatch allMaskedRow(TokenBatch b) {
    boolean[] m = new boolean[b.size() * b.maxLength()];
    for (int i = 0; i < b.size(); i++) {
      for (int t = 0; t < b.maxLength(); t++) {
        m[i * b.maxLength() + t] = i != 0 && b.isValid(i, t);
      }
    }
    return b.withMask(m);
  }
}
