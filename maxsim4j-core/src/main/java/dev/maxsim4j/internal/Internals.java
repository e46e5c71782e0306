package dev.maxsim4j.internal;

import dev.maxsim4j.MaxSim;
import dev.maxsim4j.ResidentBatch;
import dev.maxsim4j.TokenBatch;

/**
 * The one door from tools inside the project (the bench module) to what the public classes keep
 * package-private: the backend behind a {@link MaxSim} and the tokens behind a batch. The public package
 * installs the implementation from its static initialiser (the JDK's SharedSecrets pattern), so nothing
 * here is public API: the module exports this package only to {@code dev.maxsim4j.bench}.
 */
public final class Internals {
  /** What {@code dev.maxsim4j} grants; implemented there, where the package-private members are visible. */
  public interface Access {
    Backend backend(MaxSim maxSim);

    Tokens tokens(TokenBatch batch);

    /** The batch behind {@code resident}, checked to be open and owned by {@code user}. */
    TokenBatch batchFor(ResidentBatch resident, MaxSim user);
  }

  private static volatile Access access;

  private Internals() {}

  /** Called once, by {@code MaxSim}'s static initialiser; any other call fails. */
  public static synchronized void install(Access implementation) {
    if (implementation == null) {
      throw new IllegalArgumentException("implementation is null; expected the public package's Access");
    }
    // from MaxSim's initialiser this returns at once; any other caller finds MaxSim's Access installed here
    initialiseMaxSim();
    if (access != null) {
      throw new IllegalStateException("Internals.install was called twice; expected once, from MaxSim");
    }
    access = implementation;
  }

  /** The backend {@code maxSim} scores with; throws {@link IllegalStateException} when it is closed. */
  public static Backend backend(MaxSim maxSim) {
    return access().backend(maxSim);
  }

  public static Tokens tokens(TokenBatch batch) {
    return access().tokens(batch);
  }

  public static TokenBatch batchFor(ResidentBatch resident, MaxSim user) {
    return access().batchFor(resident, user);
  }

  private static Access access() {
    Access a = access;
    if (a == null) {
      // a caller can hold a TokenBatch before MaxSim was ever touched
      initialiseMaxSim();
      a = access;
    }
    return a;
  }

  /** Runs MaxSim's static initialiser (which installs its Access) unless it has run or is running. */
  private static void initialiseMaxSim() {
    try {
      Class.forName(MaxSim.class.getName(), true, MaxSim.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }
}
