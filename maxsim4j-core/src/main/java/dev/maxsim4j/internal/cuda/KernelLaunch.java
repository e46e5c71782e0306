package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.cuda.plan.KernelModule;

/**
 * One launch of a kernel of the jar: the entry point of a module, its grid ({@code gridX} x {@code gridY} blocks of
 * {@code threads}) with {@code sharedBytes} of dynamic shared memory ({@code optIn}: more than the default, allowed
 * first), and its arguments. {@code wholeDevice}: a forward grid on every SM, ordered after the last such grid on
 * another lane ({@link ForwardKernels}).
 */
record KernelLaunch(KernelModule module, String entry, int gridX, int gridY, int threads, int sharedBytes,
    boolean optIn, boolean wholeDevice, KernelArgs args) {

  /** A launch without dynamic shared memory. */
  KernelLaunch(KernelModule module, String entry, int gridX, int gridY, int threads, KernelArgs args) {
    this(module, entry, gridX, gridY, threads, 0, false, false, args);
  }
}
