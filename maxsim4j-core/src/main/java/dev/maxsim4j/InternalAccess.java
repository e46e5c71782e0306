package dev.maxsim4j;

import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Internals;
import dev.maxsim4j.internal.Tokens;

/** This package's side of {@link Internals}: forwards to the package-private members it names. */
final class InternalAccess implements Internals.Access {
  @Override
  public Backend backend(MaxSim maxSim) {
    return Arguments.nonNull(maxSim, "maxSim").backend();
  }

  @Override
  public Tokens tokens(TokenBatch batch) {
    return Arguments.nonNull(batch, "batch").tokens();
  }

  @Override
  public TokenBatch batchFor(ResidentBatch resident, MaxSim user) {
    return Arguments.nonNull(resident, "resident").batchFor(user);
  }
}
