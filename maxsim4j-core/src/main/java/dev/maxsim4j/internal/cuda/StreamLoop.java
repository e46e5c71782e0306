package dev.maxsim4j.internal.cuda;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import dev.maxsim4j.internal.Tokens;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * The persistent streaming loop (maxsim_loop.cuh, the "_loop" entries of maxsim_forward_stream.cu): one grid
 * of the streaming kernel stays on the GPU between calls and scores each query the host posts into pinned
 * memory against the resident documents the post names. A call then costs no kernel launch and no stream
 * synchronisation: the host writes the query and a generation number, and spins until the GPU writes the
 * generation back. The scores are those of a launch of the "_dyn" entry, bit for bit (the same scan).
 *
 * <p>The grid holds every SM while it waits, so the backend ends it ({@link #park}) before anything else
 * runs on the device, and the grid ends itself after {@code idleNanos} without a command; the next call
 * launches it again. Used under the backend's lock only.
 */
final class StreamLoop implements AutoCloseable {
  // LoopCommand, LoopStatus and the payload in the pinned mailbox (maxsim_loop.cuh)
  private static final long GENERATION = 0;
  private static final long OP = 8;
  private static final long TOKENS = 16;
  private static final long TOKEN_BYTES = 24;
  private static final long MASK = 32;
  private static final long LENGTH = 40;
  private static final long DOCUMENTS = 48; // data, rowStart, rowLength, mask, validCount
  private static final long PAIRS = 88;
  private static final long DIM = 96;
  private static final long DONE = 128;
  private static final long EXITED = 136;
  private static final long SEEN_AT = 144; // then PUBLISHED_AT, DONE_AT (device %globaltimer, ns)
  private static final long PAYLOAD = 256;
  /** A staged query row's elements: at most 32 tokens x 128 halves (the streaming kernel's limits). */
  static final int STAGE_TOKEN_BYTES = 8192;
  private static final long PAYLOAD_MASK = PAYLOAD + STAGE_TOKEN_BYTES;
  private static final long MAILBOX_BYTES = PAYLOAD_MASK + 256;
  // the stage in device memory: elements, then {start, length}, then the mask
  private static final long STAGE_ROW = STAGE_TOKEN_BYTES;
  private static final long STAGE_MASK = STAGE_TOKEN_BYTES + 256;
  private static final long STAGE_BYTES = STAGE_TOKEN_BYTES + 512;
  private static final long STATE_BYTES = 128;
  private static final long OP_SCORE = 0;
  private static final long OP_EXIT = 1;
  /** A command unanswered this long means the grid is lost (a call scores at most a few GB: milliseconds). */
  private static final long ANSWER_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);
  private static final VarHandle WORD = JAVA_LONG.varHandle();
  private static final byte POISON_BYTE = (byte) 0xff; // all-ones: a NaN score

  private final CudaDevice device;
  private final long idleNanos;
  private final MemorySegment stream;
  private final MemorySegment mailbox;
  private final long mailboxDevice;
  private final long stage;
  private final long state;
  private final long work;
  private final KernelParams params = new KernelParams();
  private MemorySegment scores = MemorySegment.NULL;
  private long scoresDevice;
  /** The entry of the running grid; null when no grid runs. */
  private String running;
  /** The generation last written to the mailbox. */
  private long posted;
  private long launches;
  private long idleExits;
  private long lastIdleWait;
  private long answered;
  private long hostNanos;
  private long publishNanos;
  private long scanNanos;

  StreamLoop(CudaDevice device, long idleNanos) {
    this.device = device;
    this.idleNanos = idleNanos;
    this.stream = Driver.createStream();
    this.mailbox = Driver.mallocHost(MAILBOX_BYTES);
    this.mailboxDevice = Driver.hostDevicePointer(mailbox);
    mailbox.fill((byte) 0);
    this.stage = device.allocate(STAGE_BYTES);
    this.state = device.allocate(STATE_BYTES);
    this.work = device.allocate(16);
    Driver.fill32(work, 0, 4, stream);
  }

  /** Grids launched so far: one per idle period or interruption (tests read it). */
  long launches() {
    return launches;
  }

  /** e.g. "3 launches, 1 after an idle exit (the last after 100000123 ns)", for test messages. */
  String history() {
    long n = Math.max(1, answered);
    return launches + " launches, " + idleExits + " after an idle exit (the last after " + lastIdleWait + " ns); "
        + answered + " commands, on average " + hostNanos / n / 1000.0 + " µs from post to answer on the host, "
        + publishNanos / n / 1000.0 + " µs from the leader seeing one to the grid's start, " + scanNanos / n / 1000.0
        + " µs from its start to the last warp's end";
  }

  /**
   * Scores {@code query} (one row) against the resident {@code documents} in the loop and returns the
   * scores, in pinned memory valid until the next call. {@code residentQuery}: the query's device copy, or
   * null to stage it from the host.
   */
  MemorySegment score(ForwardKernels.LoopKernel kernel, DeviceTokens documents, int pairs, Tokens query,
      DeviceTokens residentQuery) {
    if (scores.byteSize() < 4L * pairs) {
      park();
      if (scores.byteSize() > 0) {
        Driver.freeHost(scores);
      }
      scores = Driver.mallocHost(Math.max(4L * pairs, scores.byteSize() * 3 / 2));
      scoresDevice = Driver.hostDevicePointer(scores);
    }
    if (!kernel.name().equals(running)) {
      park();
      launch(kernel, posted);
      running = kernel.name();
    }
    MemorySegment out = scores.asSlice(0, 4L * pairs);
    out.fill(POISON_BYTE);
    writeCommand(query, residentQuery, documents, pairs);
    long generation = ++posted;
    long postedAt = System.nanoTime();
    WORD.setVolatile(mailbox, GENERATION, generation); // a full fence: the store leaves the core now
    await(generation, kernel);
    hostNanos += System.nanoTime() - postedAt;
    long seenAt = mailbox.get(JAVA_LONG, SEEN_AT);
    long publishedAt = mailbox.get(JAVA_LONG, SEEN_AT + 8);
    publishNanos += publishedAt - seenAt;
    scanNanos += mailbox.get(JAVA_LONG, SEEN_AT + 16) - publishedAt;
    answered++;
    return out;
  }

  private void writeCommand(Tokens query, DeviceTokens residentQuery, DeviceTokens d, int pairs) {
    int start = query.rowStart[0];
    int length = query.rowLength[0];
    long elementBytes = query.dtype.byteSize();
    long tokenBytes = (long) length * query.dim * elementBytes;
    if (tokenBytes > STAGE_TOKEN_BYTES || length > 256) {
      throw new IllegalStateException("a query of " + length + " x " + query.dim + " does not fit the loop's stage");
    }
    long tokens;
    long mask = 0;
    if (residentQuery != null) {
      tokens = residentQuery.data() + (long) start * query.dim * elementBytes;
      if (residentQuery.mask() != 0) {
        mask = residentQuery.mask() + start;
      }
    } else {
      if (query.s16 != null) {
        MemorySegment.copy(query.s16, start * query.dim, mailbox, JAVA_SHORT_UNALIGNED, PAYLOAD, length * query.dim);
      } else {
        MemorySegment.copy(query.segment, (long) start * query.dim * elementBytes, mailbox, PAYLOAD, tokenBytes);
      }
      tokens = mailboxDevice + PAYLOAD;
      if (query.mask != null) {
        for (int t = 0; t < length; t++) {
          mailbox.set(JAVA_BYTE, PAYLOAD_MASK + t, (byte) (query.mask[start + t] ? 1 : 0));
        }
        mask = mailboxDevice + PAYLOAD_MASK;
      }
    }
    mailbox.set(JAVA_LONG, OP, OP_SCORE);
    mailbox.set(JAVA_LONG, TOKENS, tokens);
    mailbox.set(JAVA_LONG, TOKEN_BYTES, tokenBytes);
    mailbox.set(JAVA_LONG, MASK, mask);
    mailbox.set(JAVA_LONG, LENGTH, length);
    mailbox.set(JAVA_LONG, DOCUMENTS, d.data());
    mailbox.set(JAVA_LONG, DOCUMENTS + 8, d.rowStart());
    mailbox.set(JAVA_LONG, DOCUMENTS + 16, d.rowLength());
    mailbox.set(JAVA_LONG, DOCUMENTS + 24, d.mask());
    mailbox.set(JAVA_LONG, DOCUMENTS + 32, d.validCount());
    mailbox.set(JAVA_LONG, PAIRS, pairs);
    mailbox.set(JAVA_LONG, DIM, d.dim());
  }

  /** Spins until the grid answers {@code generation}; relaunches it if it left on idle before it saw it. */
  private void await(long generation, ForwardKernels.LoopKernel kernel) {
    long since = System.nanoTime();
    for (long spins = 1; (long) WORD.getAcquire(mailbox, DONE) != generation; spins++) {
      if ((long) WORD.getAcquire(mailbox, EXITED) != 0) {
        if ((long) WORD.getAcquire(mailbox, DONE) == generation) {
          return;
        }
        // the grid left before it took this command: a new one starts from the generation before
        idleExits++;
        lastIdleWait = (long) WORD.getAcquire(mailbox, EXITED) - 1;
        Driver.synchronize(stream);
        launch(kernel, generation - 1);
        continue;
      }
      Thread.onSpinWait();
      if ((spins & 0xfff) == 0) {
        checkAlive(generation, since);
      }
    }
  }

  private void checkAlive(long generation, long since) {
    boolean ended = Driver.idle(stream); // throws the kernel's error if it failed
    if ((long) WORD.getAcquire(mailbox, DONE) == generation || (long) WORD.getAcquire(mailbox, EXITED) != 0) {
      return;
    }
    if (ended || System.nanoTime() - since > ANSWER_TIMEOUT_NANOS) {
      running = null;
      throw new IllegalStateException("the persistent streaming loop did not answer command " + generation
          + (ended ? ": its grid ended" : " within " + TimeUnit.NANOSECONDS.toSeconds(ANSWER_TIMEOUT_NANOS) + " s"));
    }
  }

  private void launch(ForwardKernels.LoopKernel kernel, long seen) {
    Driver.fill32(state, 0, STATE_BYTES / 4, stream);
    mailbox.set(JAVA_LONG, EXITED, 0L);
    mailbox.set(JAVA_LONG, DONE, seen);
    params.set(stage, stage + STAGE_ROW, stage + STAGE_ROW + 4, stage + STAGE_MASK, scoresDevice, work, mailboxDevice,
        mailboxDevice + DONE, state, seen, idleNanos);
    Driver.launch(kernel.function(), kernel.name(), kernel.blocks(), 1, kernel.threads(), kernel.sharedBytes(),
        stream, params.pointers());
    launches++;
  }

  /** Ends the grid, if one runs, and waits for it: the device is then free for other work. */
  void park() {
    if (running == null) {
      return;
    }
    running = null;
    if ((long) WORD.getAcquire(mailbox, EXITED) == 0) {
      mailbox.set(JAVA_LONG, OP, OP_EXIT);
      WORD.setVolatile(mailbox, GENERATION, ++posted);
    }
    Driver.synchronize(stream);
  }

  @Override
  public void close() {
    park();
    Driver.synchronize(stream);
    device.release(stage, STAGE_BYTES);
    device.release(state, STATE_BYTES);
    device.release(work, 16);
    if (scores.byteSize() > 0) {
      Driver.freeHost(scores);
    }
    Driver.freeHost(mailbox);
    Driver.destroyStream(stream);
    params.close();
  }
}
