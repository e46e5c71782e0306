package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.cuda.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.ForwardPlan.Plan;
import dev.maxsim4j.internal.cuda.ForwardPlan.Split;
import java.util.ArrayList;
import java.util.List;

/**
 * A plan's kernel launches with their arguments, in the order of each kernel's {@code extern "C"} parameters:
 * the forward and, where its blocks leave per-row partials, the merge. Pure: scratch buffers and the
 * documents' tensor map appear as placeholders that {@link ForwardKernels} resolves on its lane.
 */
final class ForwardLaunches {
  private ForwardLaunches() {}

  static final String MERGE = "maxsim_merge";
  static final String MERGE_ENTRY = "maxsim_merge_slices";
  private static final int MERGE_WARPS = 8;

  /** A scratch buffer of at least {@code bytes}; {@code zeroed}: zero when first handed out. */
  record Scratch(ScratchSlot slot, long bytes, boolean zeroed) {}

  /** The tensor map over the documents (the warp-specialized kernel reads them by TMA). */
  enum DocumentMap { INSTANCE }

  /** Where a forward reads and writes: inputs on the device, scores, and the argmax (0: not saved). */
  record Operands(DeviceTokens q, DeviceTokens d, long scores, long argmax, int argmaxStride) {}

  /** One kernel launch; {@code args}: Integer, Long, {@link Scratch} or {@link DocumentMap}. */
  record KernelLaunch(String module, String entry, int gridX, int gridY, int threads, int sharedBytes,
      boolean optIn, boolean wholeDevice, Object[] args) {}

  static List<KernelLaunch> of(Plan p, ForwardShape s, Operands o) {
    List<KernelLaunch> launches = new ArrayList<>(2);
    DeviceTokens q = o.q();
    DeviceTokens d = o.d();
    int lq = s.maxQueryLength();
    Split split = p.split();
    Object[] args = switch (p.family()) {
      case FFMA -> new Object[] {q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), s.mode(), s.perQuery(), s.docOffset(), 0L, o.scores(),
          o.argmax(), o.argmaxStride()};
      case WGMMA_GROUPS -> new Object[] {q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), 0, s.perQuery(), s.docOffset(), (long) s.pairs(),
          o.scores(), o.argmax(), o.argmaxStride(), 0, 0L, 0L, 0, 0};
      case STREAM -> new Object[] {q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), s.mode(), s.perQuery(), s.docOffset(), (long) s.pairs(),
          o.scores(), o.argmax(), o.argmaxStride(),
          p.sharedBytes() > 0 ? new Scratch(ScratchSlot.WORK_COUNTERS, 16, true) : (Object) 0L}; // "_dyn": run-time pairs
      case WGMMA_WS -> {
        boolean partials = p.partials();
        yield new Object[] {q.data(), q.rowStart(), q.rowLength(), q.mask(), d.rowStart(), d.rowLength(), d.mask(),
            d.validCount(), s.dim(), s.mode(), s.perQuery(), s.docOffset(), (long) s.pairs(), p.passes(),
            split.slices(), split.sliceTokens(),
            partials ? partials(ScratchSlot.PARTIAL_MAX, s, split.slices()) : (Object) 0L,
            partials ? partials(ScratchSlot.PARTIAL_ARGMAX, s, split.slices()) : (Object) 0L, lq,
            partials ? 0L : o.scores(), partials ? 0L : o.argmax(), o.argmaxStride(),
            partials ? (Object) 0L : new Scratch(ScratchSlot.WS_PASS_SUMS, 4L * s.pairs() * p.passes(), false),
            partials ? (Object) 0L : new Scratch(ScratchSlot.WS_ARRIVALS, 4L * s.pairs(), true), DocumentMap.INSTANCE};
      }
      case WGMMA -> new Object[] {q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), s.mode(), s.perQuery(), s.docOffset(), (long) s.pairs(),
          o.scores(), o.argmax(), o.argmaxStride(), split.sliceTokens(), partialMax(s, split),
          partialArgmax(s, split), lq, split.passes() > 1 ? 1 : 0};
      case BLOCK_GROUPS -> new Object[] {q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), s.queries(), s.perQuery(), o.scores(), o.argmax(),
          o.argmaxStride(), split.sliceTokens(), partialMax(s, split), partialArgmax(s, split), lq};
      case BLOCK -> new Object[] {q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), s.mode(), s.perQuery(), s.docOffset(), 0L, o.scores(),
          o.argmax(), o.argmaxStride(), p.rowsPerPass(), split.sliceTokens(), partialMax(s, split),
          partialArgmax(s, split), lq};
    };
    launches.add(new KernelLaunch(p.module(), p.entry(), p.blocks(), p.gridY(), p.threads(), p.sharedBytes(),
        p.optIn(), p.wholeDevice(), args));
    if (p.partials()) {
      // the warp-specialized kernel's slices are its own; split passes leave one slice covering every document
      int sliceTokens = p.family() == Family.WGMMA_WS || split.slices() > 1 ? split.sliceTokens()
          : Math.max(1, s.maxDocumentLength());
      launches.add(merge(s, o, split.slices(), sliceTokens));
    }
    return launches;
  }

  /** Merges {@code slices} slices of {@code sliceTokens} tokens and sums the rows (maxsim_merge.cu). */
  private static KernelLaunch merge(ForwardShape s, Operands o, int slices, int sliceTokens) {
    DeviceTokens q = o.q();
    DeviceTokens d = o.d();
    Object[] args = {partials(ScratchSlot.PARTIAL_MAX, s, slices), partials(ScratchSlot.PARTIAL_ARGMAX, s, slices), slices,
        sliceTokens, s.maxQueryLength(), q.rowStart(), q.rowLength(), q.mask(), d.rowLength(), d.validCount(),
        s.mode(), s.perQuery(), s.docOffset(), o.scores(), o.argmax(), o.argmaxStride(), (long) s.pairs()};
    return new KernelLaunch(MERGE, MERGE_ENTRY, (s.pairs() + MERGE_WARPS - 1) / MERGE_WARPS, 1, MERGE_WARPS * 32, 0,
        false, false, args);
  }

  private static Object partialMax(ForwardShape s, Split split) {
    return split.partials() ? partials(ScratchSlot.PARTIAL_MAX, s, split.slices()) : (Object) 0L;
  }

  private static Object partialArgmax(ForwardShape s, Split split) {
    return split.partials() ? partials(ScratchSlot.PARTIAL_ARGMAX, s, split.slices()) : (Object) 0L;
  }

  /** A 4-byte entry per (pair, slice, query row). */
  private static Scratch partials(ScratchSlot slot, ForwardShape s, int slices) {
    return new Scratch(slot, 4L * s.pairs() * slices * s.maxQueryLength(), false);
  }
}
