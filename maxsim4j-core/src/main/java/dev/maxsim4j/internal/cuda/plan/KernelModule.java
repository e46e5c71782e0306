package dev.maxsim4j.internal.cuda.plan;

import java.util.List;

/**
 * A module of kernels: the fatbin {@code name}.fatbin that build.sh compiles from {@code name}.cu into the jar's
 * /dev/maxsim4j/cuda/ folder. The jar's modules are the constants below (KernelModuleTest matches them with the .cu
 * files under src/main/cuda); the test-only kernels of src/test/cuda are modules of the same folder in the test
 * classes. A type of its own so that a module and an entry point, both names, cannot trade places.
 */
public record KernelModule(String name) {
  /** The FFMA kernel, fp32 accuracy, a block per pair. */
  public static final KernelModule FORWARD = new KernelModule("maxsim_forward");
  /** The block (mma.sync) kernels and their query groups. */
  public static final KernelModule FORWARD_MMA = new KernelModule("maxsim_forward_mma");
  /** The streaming kernel, a warp per pair. */
  public static final KernelModule FORWARD_STREAM = new KernelModule("maxsim_forward_stream");
  /** The wgmma kernel and its query groups (sm_90). */
  public static final KernelModule FORWARD_WGMMA = new KernelModule("maxsim_forward_wgmma");
  /** The warp-specialized wgmma kernel (sm_90). */
  public static final KernelModule FORWARD_WGMMA_WS = new KernelModule("maxsim_forward_wgmma_ws");
  /** The FFMA kernel with each side's scales. */
  public static final KernelModule FORWARD_SCALED = new KernelModule("maxsim_forward_scaled");
  /** Compressed documents expanded in registers, a warp per pair (mma.sync). */
  public static final KernelModule FORWARD_QUANT = new KernelModule("maxsim_forward_quant");
  /** Compressed documents expanded in registers, a warpgroup per block (wgmma). */
  public static final KernelModule FORWARD_QUANT_WGMMA = new KernelModule("maxsim_forward_quant_wgmma");
  /** Compressed documents copied by bulk copies (sm_90). */
  public static final KernelModule FORWARD_QUANT_TMA = new KernelModule("maxsim_forward_quant_tma");
  /** The bulk-copy kernel's entries for 8-bit documents of d over 128, read through a tensor map. */
  public static final KernelModule FORWARD_QUANT_TMA_WIDE = new KernelModule("maxsim_forward_quant_tma_wide");
  /** Compressed documents written out as bf16 or fp16 operands (rule 21's first launch). */
  public static final KernelModule EXPAND = new KernelModule("maxsim_expand");
  /** The merge of split launches' per-row partials. */
  public static final KernelModule MERGE = new KernelModule("maxsim_merge");
  /** The top-k selection over scores and candidate keys. */
  public static final KernelModule TOPK = new KernelModule("maxsim_topk");
  /** The backward: dQ by gather, dD owned or by atomics. */
  public static final KernelModule BACKWARD = new KernelModule("maxsim_backward");
  /** The losses over a score matrix. */
  public static final KernelModule LOSS = new KernelModule("maxsim_loss");
  /** The linear projection and its weight gradient. */
  public static final KernelModule LINEAR = new KernelModule("maxsim_linear");
  /** Fixed dimensional encodings. */
  public static final KernelModule FDE = new KernelModule("maxsim_fde");

  /** Every module the jar carries. */
  public static final List<KernelModule> SHIPPED = List.of(FORWARD, FORWARD_MMA, FORWARD_STREAM, FORWARD_WGMMA,
      FORWARD_WGMMA_WS, FORWARD_SCALED, FORWARD_QUANT, FORWARD_QUANT_WGMMA, FORWARD_QUANT_TMA, FORWARD_QUANT_TMA_WIDE,
      EXPAND, MERGE, TOPK, BACKWARD, LOSS, LINEAR, FDE);

  public KernelModule {
    if (!name.matches("[a-z0-9_]+")) {
      throw new IllegalArgumentException("module name \"" + name + "\"; expected a .cu file's name: lower-case "
          + "letters, digits and underscores");
    }
  }

  /** The fatbin's path among the class path's resources. */
  public String resource() {
    return "/dev/maxsim4j/cuda/" + name + ".fatbin";
  }

  @Override
  public String toString() {
    return name;
  }
}
