package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.internal.cuda.KernelArgs.Scratch;
import dev.maxsim4j.internal.cuda.plan.FamilyPlans;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Family;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Plan;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan.Split;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import java.util.ArrayList;
import java.util.List;

/**
 * A plan's kernel launches with their arguments ({@link KernelArgs}, one record per kernel family): the
 * forward and, where its blocks leave per-row partials, the merge. Pure: scratch buffers and the documents'
 * tensor map are placeholders that {@link ForwardKernels} resolves on the lane it launches on.
 */
final class ForwardLaunches {
  private ForwardLaunches() {}

  static final String MERGE_ENTRY = "maxsim_merge_slices";
  private static final int MERGE_WARPS = 8;

  /** Where a forward reads and writes: inputs on the device, scores, and the argmax (0: not saved). */
  record Operands(DeviceTokens q, DeviceTokens d, long scores, long argmax, int argmaxStride) {}

  static List<KernelLaunch> of(Plan p, ForwardShape s, Operands o) {
    List<KernelLaunch> launches = new ArrayList<>(2);
    DeviceTokens q = o.q();
    DeviceTokens d = o.d();
    int lq = s.maxQueryLength();
    Split split = p.split();
    int mode = s.layout().mode();
    KernelArgs args = switch (p.family()) {
      case FFMA -> new KernelArgs.Ffma(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), mode, s.perQuery(), s.docOffset(), o.scores(),
          o.argmax(), o.argmaxStride());
      case WGMMA_GROUPS -> new KernelArgs.Wgmma(q.data(), q.rowStart(), q.rowLength(), q.mask(), q.scales(),
          d.data(), d.rowStart(), d.rowLength(), d.mask(), d.scales(), d.validCount(), s.dim(), mode, s.perQuery(),
          s.docOffset(), s.pairs(), o.scores(), o.argmax(), o.argmaxStride(), 0, null, null, 0, 0);
      case STREAM -> new KernelArgs.Stream(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), mode, s.perQuery(), s.docOffset(), s.pairs(),
          o.scores(), o.argmax(), o.argmaxStride(),
          p.runTimePairs() ? new Scratch(ScratchSlot.WORK_COUNTERS, 16, true) : null); // "_dyn"
      case WGMMA_WS, WGMMA_WS_EXPANDED -> { // expanded: d is the expansion, with the compressed tokens' scales
        boolean partials = p.leavesPartials();
        boolean passSums = !partials && p.queryPasses() > 1; // one pass writes its scores directly
        yield new KernelArgs.WgmmaWs(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.rowStart(), d.rowLength(),
            d.mask(), d.validCount(), d.scales(), s.dim(), mode, s.perQuery(), s.docOffset(), s.pairs(),
            p.queryPasses(), split.slices(), split.sliceTokens(),
            partials ? partials(ScratchSlot.PARTIAL_MAX, s, split.slices()) : null,
            partials ? partials(ScratchSlot.PARTIAL_ARGMAX, s, split.slices()) : null, lq,
            partials ? 0L : o.scores(), partials ? 0L : o.argmax(), o.argmaxStride(),
            passSums ? new Scratch(ScratchSlot.WS_PASS_SUMS, 4L * s.pairs() * p.queryPasses(), false) : null,
            passSums ? new Scratch(ScratchSlot.WS_ARRIVALS, 4L * s.pairs(), true) : null, d);
      }
      case WGMMA -> new KernelArgs.Wgmma(q.data(), q.rowStart(), q.rowLength(), q.mask(), q.scales(), d.data(),
          d.rowStart(), d.rowLength(), d.mask(), d.scales(), d.validCount(), s.dim(), mode, s.perQuery(),
          s.docOffset(), s.pairs(), o.scores(), o.argmax(), o.argmaxStride(), split.sliceTokens(),
          partialMax(s, split), partialArgmax(s, split), lq, split.passes() > 1 ? 1 : 0);
      case BLOCK_GROUPS -> new KernelArgs.BlockGroups(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(),
          d.rowStart(), d.rowLength(), d.mask(), d.validCount(), s.dim(), s.queries(), s.perQuery(), o.scores(),
          o.argmax(), o.argmaxStride());
      case FFMA_SCALED -> new KernelArgs.FfmaScaled(q.data(), q.rowStart(), q.rowLength(), q.mask(), q.scales(),
          d.data(), d.rowStart(), d.rowLength(), d.mask(), d.scales(), d.validCount(), s.dim(), mode,
          s.perQuery(), s.docOffset(), o.scores(), o.argmax(), o.argmaxStride());
      case QUANT -> new KernelArgs.Quant(q.data(), q.rowStart(), q.rowLength(), q.mask(), q.scales(), d.data(),
          d.rowStart(), d.rowLength(), d.mask(), d.scales(), d.validCount(), s.dim(), mode, s.perQuery(),
          s.docOffset(), s.pairs(), o.scores(),
          p.runTimePairs() ? new Scratch(ScratchSlot.WORK_COUNTERS, 16, true) : null); // "_dyn"
      case QUANT_WGMMA -> new KernelArgs.Quant(q.data(), q.rowStart(), q.rowLength(), q.mask(), q.scales(),
          d.data(), d.rowStart(), d.rowLength(), d.mask(), d.scales(), d.validCount(), s.dim(), mode,
          s.perQuery(), s.docOffset(), s.pairs(), o.scores(), null);
      case QUANT_TMA -> {
        if (d.data() % 16 != 0) {
          // every document buffer is an allocation or scratch slot of its own, 256-byte aligned
          throw new IllegalStateException("documents at 0x" + Long.toHexString(d.data())
              + "; the bulk-copy kernel expects 16-byte aligned documents");
        }
        Scratch work = new Scratch(ScratchSlot.WORK_COUNTERS, 16, true);
        yield FamilyPlans.readsTensorMap(p)
            ? new KernelArgs.QuantTiled(q.data(), q.rowStart(), q.rowLength(), q.mask(), q.scales(), d.data(),
                d.rowStart(), d.rowLength(), d.mask(), d.scales(), d.validCount(), s.dim(), mode, s.perQuery(),
                s.docOffset(), s.pairs(), o.scores(), work, d)
            : new KernelArgs.Quant(q.data(), q.rowStart(), q.rowLength(), q.mask(), q.scales(), d.data(),
                d.rowStart(), d.rowLength(), d.mask(), d.scales(), d.validCount(), s.dim(), mode, s.perQuery(),
                s.docOffset(), s.pairs(), o.scores(), work);
      }
      case BLOCK -> new KernelArgs.Block(q.data(), q.rowStart(), q.rowLength(), q.mask(), d.data(), d.rowStart(),
          d.rowLength(), d.mask(), d.validCount(), s.dim(), mode, s.perQuery(), s.docOffset(), o.scores(),
          o.argmax(), o.argmaxStride(), p.rowsPerPass(), split.sliceTokens(), partialMax(s, split),
          partialArgmax(s, split), lq);
    };
    launches.add(new KernelLaunch(p.module(), p.entry(), p.blocks(), p.gridY(), p.threads(), p.sharedBytes(),
        p.optIn(), p.wholeDevice(), args));
    if (p.leavesPartials()) {
      // the warp-specialized kernel's slices are its own; split passes leave one slice covering every document
      boolean ws = p.family() == Family.WGMMA_WS || p.family() == Family.WGMMA_WS_EXPANDED;
      int sliceTokens = ws || split.slices() > 1 ? split.sliceTokens()
          : Math.max(1, s.maxDocumentLength());
      launches.add(merge(s, o, split.slices(), sliceTokens));
    }
    return launches;
  }

  /** Merges {@code slices} slices of {@code sliceTokens} tokens and sums the rows (maxsim_merge.cu). */
  private static KernelLaunch merge(ForwardShape s, Operands o, int slices, int sliceTokens) {
    DeviceTokens q = o.q();
    DeviceTokens d = o.d();
    KernelArgs args = new KernelArgs.Merge(partials(ScratchSlot.PARTIAL_MAX, s, slices),
        partials(ScratchSlot.PARTIAL_ARGMAX, s, slices), slices, sliceTokens, s.maxQueryLength(), q.rowStart(),
        q.rowLength(), q.mask(), d.rowLength(), d.validCount(), s.layout().mode(), s.perQuery(), s.docOffset(),
        o.scores(), o.argmax(), o.argmaxStride(), s.pairs());
    return new KernelLaunch(KernelModule.MERGE, MERGE_ENTRY, Math.ceilDiv(s.pairs(), MERGE_WARPS), 1, MERGE_WARPS * 32,
        args);
  }

  /** The partial maxima of a split launch; null where it writes scores. */
  private static Scratch partialMax(ForwardShape s, Split split) {
    return split.leavesPartials() ? partials(ScratchSlot.PARTIAL_MAX, s, split.slices()) : null;
  }

  private static Scratch partialArgmax(ForwardShape s, Split split) {
    return split.leavesPartials() ? partials(ScratchSlot.PARTIAL_ARGMAX, s, split.slices()) : null;
  }

  /** A 4-byte entry per (pair, slice, query row). */
  private static Scratch partials(ScratchSlot slot, ForwardShape s, int slices) {
    return new Scratch(slot, 4L * s.pairs() * slices * s.maxQueryLength(), false);
  }
}
