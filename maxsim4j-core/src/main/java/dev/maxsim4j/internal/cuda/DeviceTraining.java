package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.maxsim4j.DType;
import dev.maxsim4j.Loss;
import dev.maxsim4j.internal.Backend;
import dev.maxsim4j.internal.Backend.Gradients;
import dev.maxsim4j.internal.Backend.LossStep;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.DeviceInputs.Staged;
import dev.maxsim4j.internal.cuda.plan.KernelGeometry;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import dev.maxsim4j.internal.cuda.plan.KernelType;
import dev.maxsim4j.internal.cuda.plan.PairLayout;
import java.lang.foreign.MemorySegment;

/**
 * Training on the GPU: the backward (maxsim_backward.cu) and the losses (maxsim_loss.cu), after a forward
 * that saves its argmax. A loss step keeps scores, argmax and dScores on the device. Used under the
 * backend's lock.
 */
final class DeviceTraining {
  private static final int LOSS_THREADS = 256;

  private final CudaDevice device;
  private final Launcher launcher;
  private final ForwardKernels forward;
  private final DeviceInputs inputs;

  DeviceTraining(CudaDevice device, Launcher launcher, ForwardKernels forward, DeviceInputs inputs) {
    this.device = device;
    this.launcher = launcher;
    this.forward = forward;
    this.inputs = inputs;
  }

  /** The backward's launch shapes for the problem, checked before any work of a call that launches them. */
  private void requireLaunchable(Problem problem, boolean deterministic) {
    Tokens d = problem.documents();
    if (problem.queries().rows == 0 || problem.argmaxStride() == 0) {
      return;
    }
    BackwardLaunch.slotGridRows(problem.argmaxStride());
    if (deterministic && d.rows > 0 && d.maxRowLength > 0) {
      BackwardLaunch.sharedBytes(d.dim, device.sharedMemoryPerBlockOptin);
      BackwardLaunch.ownedGridRows(d.maxRowLength, d.dim);
    }
  }

  /**
   * The backward on the GPU: the argmax and dScores go up, dQ and dD (fp32) come back. Inputs that are
   * resident are not copied again.
   */
  Gradients backward(Problem problem, int[] argmax, float[] dScores, boolean deterministic) {
    requireLaunchable(problem, deterministic);
    Tokens q = problem.queries();
    Tokens d = problem.documents();
    long dq = 4L * q.storedTokens * q.dim;
    long dd = 4L * d.storedTokens * d.dim;
    long argmaxBytes = DeviceTokens.align(4L * argmax.length);
    long dScoresBytes = DeviceTokens.align(4L * dScores.length);
    Staged in = inputs.stage(q, d, argmaxBytes + dScoresBytes + DeviceTokens.align(dq) + dd);
    MemorySegment pinned = in.download();
    long argmaxDevice = device.scratch(ScratchSlot.ARGMAX, argmaxBytes);
    long dScoresDevice = device.scratch(ScratchSlot.DSCORES, dScoresBytes);
    MemorySegment.copy(argmax, 0, pinned, JAVA_INT, 0, argmax.length);
    MemorySegment.copy(dScores, 0, pinned, JAVA_FLOAT, argmaxBytes, dScores.length);
    Driver.copyToDevice(argmaxDevice, pinned, argmaxBytes, device.stream);
    Driver.copyToDevice(dScoresDevice, pinned.asSlice(argmaxBytes), dScoresBytes, device.stream);
    GradientBuffers grads = launchBackward(problem, in, argmaxDevice, false, dScoresDevice, deterministic,
        DType.FLOAT32, DType.FLOAT32);
    MemorySegment out = pinned.asSlice(argmaxBytes + dScoresBytes);
    Driver.copyToHost(out, grads.queries(), dq, device.stream);
    Driver.copyToHost(out.asSlice(DeviceTokens.align(dq)), grads.documents(), dd, device.stream);
    Driver.synchronize(device.stream);
    float[] gq = new float[Math.multiplyExact(q.storedTokens, q.dim)];
    float[] gd = new float[Math.multiplyExact(d.storedTokens, d.dim)];
    MemorySegment.copy(out, JAVA_FLOAT, 0, gq, 0, gq.length);
    MemorySegment.copy(out, JAVA_FLOAT, DeviceTokens.align(dq), gd, 0, gd.length);
    return new Gradients(gq, gd);
  }

  /**
   * Forward with argmax, loss and backward on the device: scores, argmax and dScores never leave it; the
   * row losses, the scores and fp32 gradients come back. {@code problem} has at least one pair.
   */
  LossStep lossStep(Problem problem, Loss loss, boolean deterministic) {
    requireLaunchable(problem, deterministic);
    Tokens q = problem.queries();
    Tokens d = problem.documents();
    int rows = q.rows;
    int pairs = problem.pairs();
    float[] lossInput = lossInput(loss);
    long dq = 4L * q.storedTokens * q.dim;
    long dd = 4L * d.storedTokens * d.dim;
    long inputBytes = DeviceTokens.align(4L * lossInput.length);
    long scoreBytes = DeviceTokens.align(4L * pairs);
    long rowBytes = DeviceTokens.align(4L * rows);
    Staged in = inputs.stage(q, d, inputBytes + scoreBytes + rowBytes + DeviceTokens.align(dq) + dd);
    MemorySegment pinned = in.download();
    long lossInputDevice = device.scratch(ScratchSlot.LOSS_INPUT, inputBytes);
    if (lossInput.length > 0) {
      MemorySegment.copy(lossInput, 0, pinned, JAVA_FLOAT, 0, lossInput.length);
      Driver.copyToDevice(lossInputDevice, pinned, inputBytes, device.stream);
    }
    DeviceStep step = launchLossStep(problem, in, loss, lossInputDevice, deterministic);
    MemorySegment out = pinned.asSlice(inputBytes);
    Driver.copyToHost(out, step.scores(), 4L * pairs, device.stream);
    Driver.copyToHost(out.asSlice(scoreBytes), step.rowLoss(), 4L * rows, device.stream);
    Driver.copyToHost(out.asSlice(scoreBytes + rowBytes), step.dQ(), dq, device.stream);
    Driver.copyToHost(out.asSlice(scoreBytes + rowBytes + DeviceTokens.align(dq)), step.dD(), dd, device.stream);
    Driver.synchronize(device.stream);
    float[] scores = new float[pairs];
    MemorySegment.copy(out, JAVA_FLOAT, 0, scores, 0, pairs);
    Backend.canonicalScores(scores, pairs);
    double total = 0;
    for (int i = 0; i < rows; i++) { // fixed order, float64
      total += out.getAtIndex(JAVA_FLOAT, scoreBytes / 4 + i);
    }
    float[] gq = new float[Math.multiplyExact(q.storedTokens, q.dim)];
    float[] gd = new float[Math.multiplyExact(d.storedTokens, d.dim)];
    MemorySegment.copy(out, JAVA_FLOAT, scoreBytes + rowBytes, gq, 0, gq.length);
    MemorySegment.copy(out, JAVA_FLOAT, scoreBytes + rowBytes + DeviceTokens.align(dq), gd, 0, gd.length);
    return new LossStep(total / rows, scores, new Gradients(gq, gd));
  }

  /**
   * Forward with argmax, dScores = 1 (the gradient of {@code scores.sum()}), backward into gradients of
   * the given types: one training step of all pairs, queued on the stream; nothing is copied back.
   */
  void launchSumStep(Problem problem, Staged in, boolean deterministic, DType qType, DType dType) {
    int pairs = problem.pairs();
    int stride = problem.argmaxStride();
    long scores = device.scratch(ScratchSlot.SCORES, 4L * pairs);
    ForwardKernels.Pairs all = ForwardKernels.Pairs.all(problem.queries().rows, problem.queries().maxRowLength,
        problem.documentsPerQuery(), 0);
    boolean argmax16 = forward.narrowArgmax(in.queries(), in.documents(), all);
    long argmax = device.scratch(ScratchSlot.ARGMAX, Math.max(4, (argmax16 ? 2L : 4L) * pairs * stride));
    long dScores = device.scratch(ScratchSlot.DSCORES, 4L * pairs);
    forward.launchWithArgmax(in.queries(), in.documents(), all, scores, argmax, stride, argmax16);
    Driver.fill32(dScores, Float.floatToRawIntBits(1f), pairs, device.stream);
    launchBackward(problem, in, argmax, argmax16, dScores, deterministic, qType, dType);
  }

  /** Device pointers of one training step's results. */
  private record DeviceStep(long scores, long rowLoss, long dQ, long dD) {}

  /** The loss's own inputs as one float array (positives as int bits, teacher scores or margins). */
  private static float[] lossInput(Loss loss) {
    return switch (loss) {
      case Loss.Contrastive c -> {
        int[] p = c.positives();
        float[] f = new float[p == null ? 0 : p.length];
        for (int i = 0; i < f.length; i++) {
          f[i] = Float.intBitsToFloat(p[i]);
        }
        yield f;
      }
      case Loss.KlDistillation k -> k.teacherFlat();
      case Loss.MarginMse m -> m.teacherMargins();
    };
  }

  /** Forward (with argmax), loss and backward into fp32 gradients, queued on the stream. */
  private DeviceStep launchLossStep(Problem problem, Staged in, Loss loss, long lossInput, boolean deterministic) {
    Tokens q = problem.queries();
    int rows = q.rows;
    int columns = problem.documentsPerQuery();
    int pairs = problem.pairs();
    int stride = problem.argmaxStride();
    long scores = device.scratch(ScratchSlot.SCORES, 4L * pairs);
    ForwardKernels.Pairs scored = ForwardKernels.Pairs.of(problem);
    boolean argmax16 = forward.narrowArgmax(in.queries(), in.documents(), scored);
    long argmaxBytes = (argmax16 ? 2L : 4L) * pairs * stride;
    long argmax = device.scratch(ScratchSlot.ARGMAX, Math.max(4, argmaxBytes));
    long rowLoss = device.scratch(ScratchSlot.LOSS_ROWS, 4L * rows);
    long dScores = device.scratch(ScratchSlot.DSCORES, 4L * pairs);
    Driver.fill32(scores, CudaBackend.POISON_SCORE, pairs, device.stream);
    Driver.fill32(argmax, CudaBackend.POISON_ARGMAX, (argmaxBytes + 3) / 4, device.stream);
    forward.launchWithArgmax(in.queries(), in.documents(), scored, scores, argmax, stride, argmax16);
    // the softmax losses take a block per row, margin-MSE a thread per row
    int rowBlocks = (rows + LOSS_THREADS - 1) / LOSS_THREADS;
    KernelLaunch lossLaunch = switch (loss) {
      case Loss.Contrastive c -> new KernelLaunch(KernelModule.LOSS, "maxsim_loss_cross_entropy", rows, 1,
          LOSS_THREADS, new KernelArgs.CrossEntropy(scores, rows, columns, c.positives() == null ? 0L : lossInput,
              c.temperature(), rowLoss, dScores));
      case Loss.KlDistillation k -> new KernelLaunch(KernelModule.LOSS, "maxsim_loss_kl", rows, 1, LOSS_THREADS,
          new KernelArgs.KlDivergence(scores, lossInput, rows, columns, k.temperature(), rowLoss, dScores));
      case Loss.MarginMse m -> new KernelLaunch(KernelModule.LOSS, "maxsim_loss_margin_mse", rowBlocks, 1,
          LOSS_THREADS, new KernelArgs.MarginMse(scores, lossInput, rows, rowLoss, dScores));
    };
    launcher.launch(lossLaunch, device.stream);
    GradientBuffers grads = launchBackward(problem, in, argmax, argmax16, dScores, deterministic, DType.FLOAT32,
        DType.FLOAT32);
    return new DeviceStep(scores, rowLoss, grads.queries(), grads.documents());
  }

  /** Device pointers of the query and document gradients a backward wrote. */
  private record GradientBuffers(long queries, long documents) {}

  /**
   * dQ and dD into zeroed scratch, in the given storage types. dQ by gather; dD owned (deterministic) or atomic
   * (fp32 only).
   */
  private GradientBuffers launchBackward(Problem problem, Staged in, long argmax, boolean argmax16, long dScores,
      boolean deterministic, DType queryGradType, DType documentGradType) {
    Tokens qt = problem.queries();
    Tokens dt = problem.documents();
    DeviceTokens q = in.queries();
    DeviceTokens d = in.documents();
    int dim = q.dim();
    int mode = PairLayout.of(problem.kind()).mode();
    int perQuery = problem.documentsPerQuery();
    int stride = problem.argmaxStride();
    boolean atomic = !deterministic;
    if (atomic && documentGradType != DType.FLOAT32) {
      throw new UnsupportedOperationException("the atomic backward accumulates in fp32; narrowed gradients need "
          + "the deterministic backward");
    }
    long dqBytes = (long) qt.storedTokens * dim * queryGradType.byteSize();
    long ddBytes = (long) dt.storedTokens * dim * documentGradType.byteSize();
    long dQ = device.scratch(ScratchSlot.GRAD_QUERIES, dqBytes);
    long dD = device.scratch(ScratchSlot.GRAD_DOCUMENTS, ddBytes);
    // the gather writes every token of every query row, and the owned dD kernel every token of every
    // document row: zeros are needed only for storage slots outside the rows (padding) and for atomics.
    // (rule 15 of docs/design/kernel-selection.md: a step skips memsets of every dD byte).
    boolean gradsCoverRows = qt.rows > 0 && stride > 0;
    if (!gradsCoverRows || !qt.rowsCoverStorage) {
      Driver.fill32(dQ, 0, (dqBytes + 3) / 4, device.stream);
    }
    if (!gradsCoverRows || atomic || !dt.rowsCoverStorage || dt.rows == 0 || dt.maxRowLength == 0) {
      Driver.fill32(dD, 0, (ddBytes + 3) / 4, device.stream);
    }
    if (qt.rows > 0 && stride > 0) {
      String width = argmax16 ? "a16_" : ""; // int16 argmax: entries for the half types only
      String dqKernel = "maxsim_backward_dq_" + width + KernelType.of(d.dtype()).suffix();
      launcher.launch(new KernelLaunch(KernelModule.BACKWARD, dqKernel, qt.rows, BackwardLaunch.slotGridRows(stride),
          BackwardLaunch.SLOT_WARPS * 32, new KernelArgs.BackwardQueries(d.data(), d.rowStart(), d.rowLength(),
              q.rowStart(), q.rowLength(), argmax, stride, dScores, mode, perQuery, dim, dQ,
              KernelType.of(queryGradType).gradientCode())), device.stream);
      if (atomic) {
        String kernel = "maxsim_backward_dd_atomic_" + width + KernelType.of(q.dtype()).suffix();
        launcher.launch(new KernelLaunch(KernelModule.BACKWARD, kernel, problem.pairs(),
            BackwardLaunch.slotGridRows(stride), BackwardLaunch.SLOT_WARPS * 32,
            new KernelArgs.BackwardDocumentsAtomic(q.data(), q.rowStart(), q.rowLength(), d.rowStart(), d.rowLength(),
                argmax, stride, dScores, mode, perQuery, dim, dD)), device.stream);
      } else if (dt.rows > 0 && dt.maxRowLength > 0) {
        String kernel = "maxsim_backward_dd_owned_" + width + KernelType.of(q.dtype()).suffix();
        int shared = BackwardLaunch.sharedBytes(dim, device.sharedMemoryPerBlockOptin);
        // past the default a launch without the opt-in fails
        launcher.launch(new KernelLaunch(KernelModule.BACKWARD, kernel, dt.rows,
            BackwardLaunch.ownedGridRows(dt.maxRowLength, dim), BackwardLaunch.WARPS * 32, shared,
            shared > KernelGeometry.DEFAULT_SHARED_BYTES, false, new KernelArgs.BackwardDocumentsOwned(q.data(),
                q.rowStart(), q.rowLength(), d.rowStart(), d.rowLength(), argmax, stride, dScores, mode, perQuery,
                qt.rows, dim, dD, KernelType.of(documentGradType).gradientCode())), device.stream);
      }
    }
    return new GradientBuffers(dQ, dD);
  }
}
