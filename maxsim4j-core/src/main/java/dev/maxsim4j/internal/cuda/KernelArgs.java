package dev.maxsim4j.internal.cuda;

/**
 * A kernel launch's parameters: one record per kernel family whose components mirror the family's
 * {@code extern "C"} signature in name, order and width, written in that order by {@link #writeTo}. An
 * argument out of place would be silent memory corruption, so KernelSignatureTest compares every record with
 * the signatures parsed from the .cu sources. Widths: {@code long} a device pointer or a 64-bit integer,
 * {@code int} and {@code float} 4 bytes, {@link Scratch} a device pointer to a scratch buffer the launching
 * lane hands out (null: a null pointer), {@link DeviceTokens} the 128-byte tensor map over those tokens,
 * passed by value.
 */
sealed interface KernelArgs {

  /** Writes the arguments to {@code sink} in the order of the kernel's parameters. */
  void writeTo(Sink sink);

  /** Receives a launch's arguments in order. */
  interface Sink extends LaunchArguments {
    @Override
    Sink i64(long value);

    @Override
    Sink i32(int value);

    @Override
    Sink f32(float value);

    /** A pointer to {@code buffer} on the launching lane; null: a null pointer. */
    Sink scratch(Scratch buffer);

    /** The tensor map over {@code documents}, by value. */
    Sink tensorMap(DeviceTokens documents);
  }

  /** A scratch buffer of at least {@code bytes}; {@code zeroed}: zero when first handed out. */
  record Scratch(ScratchSlot slot, long bytes, boolean zeroed) {}

  /** The fp32 FFMA kernel (maxsim_forward.cu): a block per pair. */
  record Ffma(long q, long qStart, long qLength, long qMask, long d, long dStart, long dLength, long dMask,
      long dValid, int dim, int mode, int perQuery, int docOffset, long scores, long argmax,
      int argmaxStride) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(d).i64(dStart).i64(dLength).i64(dMask).i64(dValid).i32(dim)
          .i32(mode).i32(perQuery).i32(docOffset).i64(scores).i64(argmax).i32(argmaxStride);
    }
  }

  /**
   * The FFMA kernel for compressed tokens on either side (maxsim_forward_scaled.cu): a block per pair, each
   * side's per-token scales (0: all 1).
   */
  record FfmaScaled(long q, long qStart, long qLength, long qMask, long qScale, long d, long dStart, long dLength,
      long dMask, long dScale, long dValid, int dim, int mode, int perQuery, int docOffset,
      long scores, long argmax, int argmaxStride) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(qScale).i64(d).i64(dStart).i64(dLength).i64(dMask)
          .i64(dScale).i64(dValid).i32(dim).i32(mode).i32(perQuery).i32(docOffset).i64(scores)
          .i64(argmax).i32(argmaxStride);
    }
  }

  /**
   * The tensor-core kernel for compressed documents, a warp per pair (maxsim_forward_quant.cu); {@code work}:
   * the run-time pair counters of the "_dyn" entries.
   */
  record Quant(long q, long qStart, long qLength, long qMask, long qScale, long d, long dStart, long dLength,
      long dMask, long dScale, long dValid, int dim, int mode, int perQuery, int docOffset, long pairs, long scores,
      Scratch work) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(qScale).i64(d).i64(dStart).i64(dLength).i64(dMask)
          .i64(dScale).i64(dValid).i32(dim).i32(mode).i32(perQuery).i32(docOffset).i64(pairs).i64(scores)
          .scratch(work);
    }
  }

  /**
   * The bulk-copy kernel's tensor-map entries (maxsim_forward_quant_tma_wide.cu): {@link Quant}'s parameters and
   * the tensor map over the 8-bit documents, passed by value.
   */
  record QuantTiled(long q, long qStart, long qLength, long qMask, long qScale, long d, long dStart, long dLength,
      long dMask, long dScale, long dValid, int dim, int mode, int perQuery, int docOffset, long pairs, long scores,
      Scratch work, DeviceTokens documents) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(qScale).i64(d).i64(dStart).i64(dLength).i64(dMask)
          .i64(dScale).i64(dValid).i32(dim).i32(mode).i32(perQuery).i32(docOffset).i64(pairs).i64(scores)
          .scratch(work).tensorMap(documents);
    }
  }

  /** The block (mma.sync) kernels, a pair per block (maxsim_forward_mma.cu). */
  record Block(long q, long qStart, long qLength, long qMask, long d, long dStart, long dLength, long dMask,
      long dValid, int dim, int mode, int perQuery, int docOffset, long scores, long argmax,
      int argmaxStride, int rowsPerPass, int sliceTokens, Scratch partialMax, Scratch partialArgmax,
      int partialStride) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(d).i64(dStart).i64(dLength).i64(dMask).i64(dValid).i32(dim)
          .i32(mode).i32(perQuery).i32(docOffset).i64(scores).i64(argmax).i32(argmaxStride)
          .i32(rowsPerPass).i32(sliceTokens).scratch(partialMax).scratch(partialArgmax).i32(partialStride);
    }
  }

  /** The block kernels' query groups, 4 queries per block (maxsim_forward_mma.cu). */
  record BlockGroups(long q, long qStart, long qLength, long qMask, long d, long dStart, long dLength, long dMask,
      long dValid, int dim, int queries, int documents, long scores, long argmax, int argmaxStride)
      implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(d).i64(dStart).i64(dLength).i64(dMask).i64(dValid).i32(dim)
          .i32(queries).i32(documents).i64(scores).i64(argmax).i32(argmaxStride);
    }
  }

  /**
   * The streaming kernel, a warp per pair (maxsim_forward_stream.cu); {@code work}: the run-time pair counters
   * of the "_dyn" entries.
   */
  record Stream(long q, long qStart, long qLength, long qMask, long d, long dStart, long dLength, long dMask,
      long dValid, int dim, int mode, int perQuery, int docOffset, long pairs, long scores, long argmax,
      int argmaxStride, Scratch work) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(d).i64(dStart).i64(dLength).i64(dMask).i64(dValid).i32(dim)
          .i32(mode).i32(perQuery).i32(docOffset).i64(pairs).i64(scores).i64(argmax).i32(argmaxStride).scratch(work);
    }
  }

  /**
   * The wgmma kernel and its query groups (maxsim_forward_wgmma.cu); each side's scales are read where that
   * side is compressed (0 for the half types).
   */
  record Wgmma(long q, long qStart, long qLength, long qMask, long qScale, long d, long dStart, long dLength,
      long dMask, long dScale, long dValid, int dim, int mode, int perQuery, int docOffset, long pairs, long scores,
      long argmax, int argmaxStride, int sliceTokens, Scratch partialMax, Scratch partialArgmax, int partialStride,
      int passSplit) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(qScale).i64(d).i64(dStart).i64(dLength).i64(dMask)
          .i64(dScale).i64(dValid).i32(dim)
          .i32(mode).i32(perQuery).i32(docOffset).i64(pairs).i64(scores).i64(argmax).i32(argmaxStride)
          .i32(sliceTokens).scratch(partialMax).scratch(partialArgmax).i32(partialStride).i32(passSplit);
    }
  }

  /**
   * The warp-specialized kernel (maxsim_forward_wgmma_ws.cu); {@code documents}: the tensor map over them,
   * passed by value.
   */
  record WgmmaWs(long q, long qStart, long qLength, long qMask, long dStart, long dLength, long dMask, long dValid,
      long dScale, int dim, int mode, int perQuery, int docOffset, long pairs, int passes, int slices, int sliceTokens,
      Scratch partialMax, Scratch partialArgmax, int partialStride, long scores, long argmax, int argmaxStride,
      Scratch passSums, Scratch arrivals, DeviceTokens documents) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(qMask).i64(dStart).i64(dLength).i64(dMask).i64(dValid).i64(dScale)
          .i32(dim).i32(mode).i32(perQuery).i32(docOffset).i64(pairs).i32(passes).i32(slices).i32(sliceTokens)
          .scratch(partialMax).scratch(partialArgmax).i32(partialStride).i64(scores).i64(argmax).i32(argmaxStride)
          .scratch(passSums).scratch(arrivals).tensorMap(documents);
    }
  }

  /**
   * Compressed documents written out as bf16 or fp16 operands (maxsim_expand.cu): the tokens of documents
   * {@code firstDoc .. firstDoc + docs - 1}.
   */
  record Expand(long in, long out, long dStart, long dLength, int firstDoc, int docs, int dim) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(in).i64(out).i64(dStart).i64(dLength).i32(firstDoc).i32(docs).i32(dim);
    }
  }

  /** The merge of split launches' per-row partials (maxsim_merge.cu). */
  record Merge(Scratch partialMax, Scratch partialArgmax, int slices, int sliceTokens, int partialStride,
      long qStart, long qLength, long qMask, long dLength, long dValid, int mode, int perQuery, int docOffset,
      long scores, long argmax, int argmaxStride, long pairs) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.scratch(partialMax).scratch(partialArgmax).i32(slices).i32(sliceTokens).i32(partialStride).i64(qStart)
          .i64(qLength).i64(qMask).i64(dLength).i64(dValid).i32(mode).i32(perQuery).i32(docOffset).i64(scores)
          .i64(argmax).i32(argmaxStride).i64(pairs);
    }
  }

  /** Each (query, segment)'s best k of a block of scores (maxsim_topk.cu). */
  record TopKFromScores(long scores, int width, int docOffset, int k, long out, long outStride, long outOffset)
      implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(scores).i32(width).i32(docOffset).i32(k).i64(out).i64(outStride).i64(outOffset);
    }
  }

  /** Each (query, segment)'s best k of candidate keys (maxsim_topk.cu). */
  record TopKFromKeys(long in, long inStride, long count, int k, long out, long outStride) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(in).i64(inStride).i64(count).i32(k).i64(out).i64(outStride);
    }
  }

  /** dQ by gather (maxsim_backward.cu). */
  record BackwardQueries(long d, long dStart, long dLength, long qStart, long qLength, long argmax, int argmaxStride,
      long dScores, int mode, int perQuery, int dim, long dQ, int outType) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(d).i64(dStart).i64(dLength).i64(qStart).i64(qLength).i64(argmax).i32(argmaxStride).i64(dScores).i32(mode)
          .i32(perQuery).i32(dim).i64(dQ).i32(outType);
    }
  }

  /** dD, each document token owned by one block: deterministic (maxsim_backward.cu). */
  record BackwardDocumentsOwned(long q, long qStart, long qLength, long dStart, long dLength, long argmax,
      int argmaxStride, long dScores, int mode, int perQuery, int queries, int dim, long dD, int outType)
      implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(dStart).i64(dLength).i64(argmax).i32(argmaxStride).i64(dScores).i32(mode)
          .i32(perQuery).i32(queries).i32(dim).i64(dD).i32(outType);
    }
  }

  /** dD by fp32 atomics (maxsim_backward.cu). */
  record BackwardDocumentsAtomic(long q, long qStart, long qLength, long dStart, long dLength, long argmax,
      int argmaxStride, long dScores, int mode, int perQuery, int dim, long dD) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(q).i64(qStart).i64(qLength).i64(dStart).i64(dLength).i64(argmax).i32(argmaxStride).i64(dScores).i32(mode)
          .i32(perQuery).i32(dim).i64(dD);
    }
  }

  /** The contrastive loss (maxsim_loss.cu); {@code positives} 0: the diagonal. */
  record CrossEntropy(long scores, int rows, int columns, long positives, float temperature, long rowLoss,
      long dScores) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(scores).i32(rows).i32(columns).i64(positives).f32(temperature).i64(rowLoss).i64(dScores);
    }
  }

  /** The KL distillation loss (maxsim_loss.cu). */
  record KlDivergence(long scores, long teacher, int rows, int columns, float temperature, long rowLoss, long dScores)
      implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(scores).i64(teacher).i32(rows).i32(columns).f32(temperature).i64(rowLoss).i64(dScores);
    }
  }

  /** The margin-MSE loss (maxsim_loss.cu). */
  record MarginMse(long scores, long teacherMargins, int rows, long rowLoss, long dScores) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(scores).i64(teacherMargins).i32(rows).i64(rowLoss).i64(dScores);
    }
  }

  /** {@code y = x w} (maxsim_linear.cu). */
  record LinearForward(long x, long w, long y, int rows, int in, int out) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(x).i64(w).i64(y).i32(rows).i32(in).i32(out);
    }
  }

  /** {@code dw = x^T dy} (maxsim_linear.cu). */
  record LinearWeightGradient(long x, long dy, long dw, int rows, int in, int out) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(x).i64(dy).i64(dw).i32(rows).i32(in).i32(out);
    }
  }

  /** Valid tokens widened exactly to float64, compacted (maxsim_fde.cu). */
  record FdeGather(long data, int storage, long slots, long scales, int dim, long count, long out)
      implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(data).i32(storage).i64(slots).i64(scales).i32(dim).i64(count).i64(out);
    }
  }

  /** Tokens times the encoder's matrix in float64 (maxsim_fde.cu). */
  record FdeProducts(long tokens, long weights, long products, int count, int dim, int columns)
      implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(tokens).i64(weights).i64(products).i32(count).i32(dim).i32(columns);
    }
  }

  /** Sign patterns, partition sums or averages and empty-partition fill, a block per row (maxsim_fde.cu). */
  record FdePartitions(long products, long tokens, long rowFirst, long patterns, long out, long raw, int simHashBits,
      int repetitions, int projectionDim, int projects, int columns, int document, int fill) implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(products).i64(tokens).i64(rowFirst).i64(patterns).i64(out).i64(raw).i32(simHashBits).i32(repetitions)
          .i32(projectionDim).i32(projects).i32(columns).i32(document).i32(fill);
    }
  }

  /** The final count sketch, a block per row (maxsim_fde.cu). */
  record FdeSketch(long raw, long bucketStart, long members, int rawDimension, int finalDim, long out)
      implements KernelArgs {
    @Override
    public void writeTo(Sink a) {
      a.i64(raw).i64(bucketStart).i64(members).i32(rawDimension).i32(finalDim).i64(out);
    }
  }
}
