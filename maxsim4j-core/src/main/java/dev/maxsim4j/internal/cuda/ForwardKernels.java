package dev.maxsim4j.internal.cuda;

import dev.maxsim4j.CudaException;
import dev.maxsim4j.DType;
import dev.maxsim4j.internal.LibraryLog;
import dev.maxsim4j.internal.Problem;
import dev.maxsim4j.internal.Tokens;
import dev.maxsim4j.internal.cuda.ForwardLaunches.Operands;
import dev.maxsim4j.internal.cuda.KernelArgs.Scratch;
import dev.maxsim4j.internal.cuda.plan.FamilyPlans;
import dev.maxsim4j.internal.cuda.plan.ForwardPlan;
import dev.maxsim4j.internal.cuda.plan.ForwardShape;
import dev.maxsim4j.internal.cuda.plan.GpuCapabilities;
import dev.maxsim4j.internal.cuda.plan.KernelGeometry;
import dev.maxsim4j.internal.cuda.plan.KernelModule;
import dev.maxsim4j.internal.cuda.plan.PairLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs forward launches: asks the {@link Planner} (the rules of {@link ForwardPlan}) for a plan, and launches
 * its kernels on the device's own lane, or on the lane a call kept in flight names. Inference, training and top-k
 * all come here, so they choose the same kernel for a shape. Used under the backend's lock.
 */
final class ForwardKernels {
  /** Chooses the plan of a launch: {@link ForwardPlan#plan} everywhere but in tests that force a kernel. */
  interface Planner {
    ForwardPlan.Plan plan(ForwardShape shape, GpuCapabilities gpu);

    /** Whether a training forward of {@code shape} keeps its argmax in int16 (rule 14). */
    default boolean narrowArgmax(ForwardShape shape, GpuCapabilities gpu) {
      return ForwardPlan.narrowArgmax(shape, gpu);
    }

    /** Whether a call's {@code queries} are staged with their fp16 copy against {@code documents} (rule 20). */
    default boolean halfCopy(Tokens queries, Tokens documents, GpuCapabilities gpu) {
      return HalfOperands.pays(queries, documents, gpu);
    }

    /** Whether queries with an fp16 copy read it in a launch of {@code shape} planned as {@code plan} (rule 20). */
    default boolean halfOperands(ForwardShape shape, ForwardPlan.Plan plan) {
      return ForwardPlan.halfOperandsPay(shape, plan);
    }
  }

  /** The rules. */
  static final Planner RULES = ForwardPlan::plan;

  /**
   * Which pairs a forward scores: {@code count} pairs of {@code layout} over {@code queries} queries of at most
   * {@code maxQueryLength} tokens, each query's {@code perQuery} documents from {@code docOffset}.
   */
  record Pairs(PairLayout layout, int queries, int maxQueryLength, int perQuery, int docOffset, int count) {
    /** The pairs of {@code problem}, from its first document. */
    static Pairs of(Problem problem) {
      return new Pairs(PairLayout.of(problem.kind()), problem.queries().rows, problem.queries().maxRowLength,
          problem.documentsPerQuery(), 0, problem.pairs());
    }

    /** Each of {@code queries} queries against each of the {@code perQuery} documents from {@code docOffset}. */
    static Pairs all(int queries, int maxQueryLength, int perQuery, int docOffset) {
      return new Pairs(PairLayout.ALL_PAIRS, queries, maxQueryLength, perQuery, docOffset,
          Math.multiplyExact(queries, perQuery));
    }
  }

  /**
   * The tensor maps the warp-specialized kernel reads documents through, by the documents they were encoded
   * for, the {@value #DOCUMENT_MAPS} last used: a caller alternating a few corpora encodes each once. A
   * launch copies its map, so reusing an entry's memory for the next launch is safe.
   */
  private static final int DOCUMENT_MAPS = 8;

  /** Threads of a block of the expansion, which takes a document at a time. */
  private static final int EXPAND_THREADS = 256;

  /** Blocks of an expansion at most: documents past them are taken in strides. */
  private static final int EXPAND_MAX_BLOCKS = 1 << 16;

  private final Launcher launcher;
  private final Planner planner;
  private final GpuCapabilities gpu;
  private final Map<DeviceTokens, MemorySegment> documentMaps = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<DeviceTokens, MemorySegment> eldest) {
      return size() > DOCUMENT_MAPS;
    }
  };

  /** The device's own lane, where launches go but those of a call kept in flight ({@link #launchOn}). */
  private final CudaDevice.Lane main;

  ForwardKernels(CudaDevice device, Launcher launcher, Planner planner) {
    this.launcher = launcher;
    this.planner = planner;
    this.main = device.main;
    this.gpu = new GpuCapabilities(device.major, device.minor, device.multiprocessors,
        device.sharedMemoryPerBlockOptin, Driver.hasTensorMaps(), (module, entry, threads, sharedBytes) -> {
          Driver.Entry fn = device.function(module, entry);
          if (sharedBytes > 0) {
            device.allowDynamicSharedMemory(fn, sharedBytes); // the occupancy is asked with it allowed
          }
          return device.residentBlocksPerMultiprocessor(fn, threads, sharedBytes);
        });
  }

  /** What the rules read of this GPU. */
  GpuCapabilities capabilities() {
    return gpu;
  }

  /** The scores of {@code pairs} of {@code q} and {@code d}, written to {@code scores} (one float a pair). */
  void launch(DeviceTokens q, DeviceTokens d, Pairs pairs, long scores) {
    launch(q, d, pairs, scores, true);
  }

  /**
   * As above; {@code mayExpand} false: compressed documents are scored as stored, never expanded first (rule 21), for
   * a call whose memory budget leaves no room for the expansion's buffer.
   */
  void launch(DeviceTokens q, DeviceTokens d, Pairs pairs, long scores, boolean mayExpand) {
    launch(main, q, d, pairs, new Outputs(scores, 0, 0, false), mayExpand);
  }

  /**
   * As {@link #launch(DeviceTokens, DeviceTokens, Pairs, long)}, queued on {@code lane} with its scratch buffers and
   * work counters: a call kept in flight.
   */
  void launchOn(CudaDevice.Lane lane, DeviceTokens q, DeviceTokens d, Pairs pairs, long scores) {
    launch(lane, q, d, pairs, new Outputs(scores, 0, 0, false), true);
  }

  /**
   * The scores and, for each pair's query slots, the index of the document token each took its max from, in rows of
   * {@code argmaxStride} at {@code argmax}: int16 where {@code argmax16} (only where {@link #narrowArgmax} said so),
   * else int32.
   */
  void launchWithArgmax(DeviceTokens q, DeviceTokens d, Pairs pairs, long scores, long argmax, int argmaxStride,
      boolean argmax16) {
    launch(main, q, d, pairs, new Outputs(scores, argmax, argmaxStride, argmax16), true);
  }

  /** Where a forward writes: its scores, and its argmax (0: not saved) in rows of {@code argmaxStride}. */
  private record Outputs(long scores, long argmax, int argmaxStride, boolean argmax16) {}

  private void launch(CudaDevice.Lane lane, DeviceTokens q, DeviceTokens d, Pairs pairs, Outputs out,
      boolean mayExpand) {
    boolean argmax = out.argmax() != 0;
    ForwardShape shape = shape(q, d, pairs, argmax, out.argmax16());
    ForwardPlan.Plan plan = planner.plan(shape, gpu);
    if (q.halfOperands() != null && planner.halfOperands(shape, plan)) {
      ForwardShape half = shape(q.halfOperands(), d, pairs, argmax, out.argmax16());
      ForwardPlan.Plan halfPlan = planner.plan(half, gpu);
      if (halfPlan.family() == ForwardPlan.Family.QUANT_TMA) { // only rule 20's kernel applies the copy's weights
        q = q.halfOperands();
        shape = half;
        plan = halfPlan;
      }
    }
    if (plan.family() == ForwardPlan.Family.WGMMA_WS_EXPANDED) {
      boolean all = pairs.layout() == PairLayout.ALL_PAIRS;
      int firstDoc = all ? pairs.docOffset() : 0;
      int docs = all ? pairs.perQuery() : pairs.count(); // listed pairs: pair i reads document i
      DeviceTokens expanded = mayExpand ? expand(lane, d, q.dtype(), firstDoc, docs) : null;
      if (expanded != null) {
        d = expanded;
      } else {
        plan = ForwardPlan.planUnexpanded(shape, gpu);
      }
    }
    Operands operands = new Operands(q, d, out.scores(), out.argmax(), out.argmaxStride());
    for (KernelLaunch launch : ForwardLaunches.of(plan, shape, operands)) {
      run(launch, lane);
    }
  }

  /**
   * {@code d}'s tokens as operands of {@code type} (bf16 or fp16, exactly) in {@code lane}'s expansion buffer, with
   * {@code d}'s rows, mask and scales (rule 21): the tokens of documents {@code firstDoc .. firstDoc + docs - 1}, those
   * a launch reads, written where they lie in {@code d} (a top-k call's launches each read a block of documents). The
   * expansion is queued on the lane before the launches that read it. Null, and a line in the log, where the device
   * cannot hold the buffer: the launch then takes the kernels that need none.
   */
  private DeviceTokens expand(CudaDevice.Lane lane, DeviceTokens d, DType type, int firstDoc, int docs) {
    if (d.data() % 16 != 0 || d.scales() % 16 != 0) {
      // every document buffer is an allocation or scratch slot of its own, each of its parts 256-byte aligned and
      // padded (the kernel copies a tile's scales in whole 16-byte units)
      throw new IllegalStateException("documents at 0x" + Long.toHexString(d.data()) + ", scales at 0x"
          + Long.toHexString(d.scales()) + "; the expansion expects both 16-byte aligned");
    }
    long bytes = Math.max(16, 2L * d.storedTokens() * d.dim());
    long out;
    try {
      out = lane.scratch(ScratchSlot.EXPANDED_DOCUMENTS, bytes, ForwardPlan.EXPANDED_MAX_BYTES);
    } catch (CudaException e) {
      if (!e.isOutOfMemory()) {
        throw e;
      }
      LibraryLog.log(System.Logger.Level.DEBUG, "no room for " + bytes + " bytes of expanded documents; scoring them"
          + " as stored: " + e.getMessage());
      return null;
    }
    if (docs > 0) {
      KernelArgs args = new KernelArgs.Expand(d.data(), out, d.rowStart(), d.rowLength(), firstDoc, docs, d.dim());
      run(new KernelLaunch(KernelModule.EXPAND, FamilyPlans.expandEntry(d.dtype(), type),
          Math.min(docs, EXPAND_MAX_BLOCKS), 1, EXPAND_THREADS, args), lane);
    }
    return new DeviceTokens(type, d.dim(), d.rows(), d.maxLength(), d.storedTokens(), out, d.rowStart(),
        d.rowLength(), d.validCount(), d.mask(), d.scales());
  }

  /** Whether a device-only training step keeps its argmax in int16 (rule 14). */
  boolean narrowArgmax(DeviceTokens q, DeviceTokens d, Pairs pairs) {
    return planner.narrowArgmax(shape(q, d, pairs, true, false), gpu);
  }

  private static ForwardShape shape(DeviceTokens q, DeviceTokens d, Pairs p, boolean argmax, boolean argmax16) {
    return new ForwardShape(p.layout(), p.queries(), p.perQuery(), p.docOffset(), p.count(), p.maxQueryLength(),
        d.maxLength(), q.dim(), q.dtype(), d.dtype(), argmax, argmax16, d.storedTokens());
  }

  /** {@code l} on {@code lane}, its scratch buffers that lane's, its tensor map this class's. */
  private void run(KernelLaunch l, CudaDevice.Lane lane) {
    launcher.launch(l, lane, new KernelParams.Resolver() {
      @Override
      public long scratch(Scratch s) {
        return s.zeroed() ? lane.zeroedScratch(s.slot(), s.bytes()) : lane.scratch(s.slot(), s.bytes());
      }

      @Override
      public MemorySegment tensorMap(DeviceTokens documents) {
        return documentsMap(documents);
      }
    });
  }

  /**
   * The tensor map over {@code d}'s tokens in ring stages: boxes of 128 tokens x 64 halves (the warp-specialized
   * kernel), or of a slot's tokens x 128 bytes for 8-bit documents (rule 20's "_w" entries).
   */
  private MemorySegment documentsMap(DeviceTokens d) {
    MemorySegment map = documentMaps.get(d);
    if (map == null) {
      map = Arena.ofAuto().allocate(Driver.TENSOR_MAP_BYTES, 64);
      long rows = Math.max(1, d.storedTokens());
      switch (d.dtype()) {
        case BFLOAT16 -> Driver.encodeTiled2d(map, Driver.MapElement.BFLOAT16, d.data(), rows, d.dim(),
            KernelGeometry.WS_TOKENS, 64);
        case FLOAT16 -> Driver.encodeTiled2d(map, Driver.MapElement.FLOAT16, d.data(), rows, d.dim(),
            KernelGeometry.WS_TOKENS, 64);
        case INT8, FLOAT8_E4M3 -> Driver.encodeTiled2d(map, Driver.MapElement.BYTE, d.data(), rows, d.dim(),
            KernelGeometry.QT_BOX_ROWS, 128);
        default -> throw new IllegalStateException("no kernel reads " + d.dtype() + " documents through a tensor map");
      }
      documentMaps.put(d, map);
    }
    return map;
  }
}
