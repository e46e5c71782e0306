package dev.maxsim4j.internal.cuda.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The kernels' geometry that KernelGeometry copies to size launches (threads, tile tokens, ring bytes): each copy
 * equals the kernel's {@code constexpr}, so that a kernel changed alone fails here, on the CPU, and not as a launch
 * that overruns its shared memory.
 */
public class KernelConstantsTest {

  /**
   * The {@code constexpr int NAME = expression;} lines of {@code files} (under src/main/cuda; headers first, as the
   * kernel includes them) that open a line, evaluated in order; those of a template's parameters are left out.
   */
  public static Map<String, Integer> constants(String... files) throws IOException {
    Map<String, Integer> values = new HashMap<>();
    for (String file : files) {
      String source = Files.readString(Path.of("src/main/cuda", file));
      Matcher m = Pattern.compile("(?m)^constexpr int (\\w+) = ([^;]+);").matcher(source);
      while (m.find()) {
        Integer v = new Expression(m.group(2), values).value();
        if (v != null) {
          values.put(m.group(1), v);
        }
      }
    }
    return values;
  }

  /**
   * +, -, * and / over integers, parentheses and names defined before: what these constants are made of; null for
   * anything else.
   */
  private static final class Expression {
    private final String text;
    private final Map<String, Integer> names;
    private int at;

    Expression(String text, Map<String, Integer> names) {
      this.text = text.replaceAll("\\s+", "");
      this.names = names;
    }

    Integer value() {
      try {
        int v = sum();
        return at == text.length() ? v : null; // other syntax (a ternary, a shift): not one these tests read
      } catch (UnknownName | StringIndexOutOfBoundsException e) {
        return null;
      }
    }

    private static final class UnknownName extends RuntimeException {
      UnknownName() {
        super(null, null, false, false);
      }
    }

    private int sum() {
      int v = product();
      while (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) {
        v = text.charAt(at++) == '+' ? v + product() : v - product();
      }
      return v;
    }

    private int product() {
      int v = term();
      while (at < text.length() && (text.charAt(at) == '*' || text.charAt(at) == '/')) {
        v = text.charAt(at++) == '*' ? v * term() : v / term();
      }
      return v;
    }

    private int term() {
      if (text.charAt(at) == '(') {
        at++;
        int v = sum();
        if (text.charAt(at++) != ')') {
          throw new UnknownName();
        }
        return v;
      }
      Matcher m = Pattern.compile("\\d+|\\w+").matcher(text).region(at, text.length());
      if (!m.lookingAt()) {
        throw new UnknownName();
      }
      at = m.end();
      String t = m.group();
      if (Character.isDigit(t.charAt(0))) {
        return Integer.parseInt(t);
      }
      if (!names.containsKey(t)) {
        throw new UnknownName();
      }
      return names.get(t);
    }
  }

  @Test
  void theWarpSpecializedKernelsGeometryIsTheKernels() throws IOException {
    Map<String, Integer> kernel = constants("forward/maxsim_forward_wgmma_ws.cu");
    assertTrue(kernel.keySet().containsAll(List.of("WS_THREADS", "WS_TOKENS", "WS_RING_BYTES")), "" + kernel);
    assertEquals(kernel.get("WS_THREADS"), KernelGeometry.WS_THREADS);
    assertEquals(kernel.get("WS_TOKENS"), KernelGeometry.WS_TOKENS);
    assertEquals(kernel.get("WS_GROUP_ROWS"), KernelGeometry.WS_GROUP_ROWS);
    // the "_scaled" entries' scales: a slot of WS_SCALE_SLOT floats for each stage of 64-half tiles the ring holds
    int stages = kernel.get("WS_RING_BYTES") / (kernel.get("WS_TOKENS") * 64 * 2);
    assertEquals(stages * kernel.get("WS_SCALE_SLOT") * 4, KernelGeometry.WS_SCALE_SHARED);
    // the dynamic shared memory: the ring, and 1024 bytes to align it
    assertEquals(kernel.get("WS_RING_BYTES") + 1024, KernelGeometry.WS_SHARED_BYTES);
  }

  @Test
  void theCompressedKernelsGeometryIsTheKernels() throws IOException {
    Map<String, Integer> tma = constants("forward/maxsim_quant_tma.cuh");
    assertTrue(tma.keySet().containsAll(List.of("QT_THREADS", "QT_TOKENS", "QT_ROWS", "QT_RING_BYTES",
        "QT_MAX_STAGES", "QT_TILE_BYTES")), "" + tma);
    assertEquals(tma.get("QT_THREADS"), KernelGeometry.QT_THREADS);
    assertEquals(tma.get("QT_TOKENS"), KernelGeometry.QT_TOKENS);
    assertEquals(tma.get("QT_ROWS"), KernelGeometry.QT_ROWS);
    assertEquals(tma.get("QT_RING_BYTES"), KernelGeometry.QT_RING_BYTES);
    // quantTmaSharedBytes' slots: a tile and two barriers for each of the ring's most stages
    assertEquals(tma.get("QT_MAX_STAGES") * (tma.get("QT_TILE_BYTES") + 2 * 8), KernelGeometry.QT_SLOT_BYTES);
    Map<String, Integer> wgmma = constants("forward/maxsim_forward_quant_wgmma.cu");
    assertTrue(wgmma.keySet().containsAll(List.of("QW_RING_BYTES", "QW_MAX_STAGES")), "" + wgmma);
    assertEquals(wgmma.get("QW_RING_BYTES"), KernelGeometry.QW_RING_BYTES);
    assertEquals(wgmma.get("QW_MAX_STAGES"), KernelGeometry.QW_MAX_STAGES);
  }

  @Test
  void theOtherForwardKernelsGeometryIsTheKernels() throws IOException {
    assertEquals(constants("forward/maxsim_forward.cu").get("THREADS"), KernelGeometry.THREADS);
    assertEquals(constants("forward/maxsim_forward_scaled.cu").get("THREADS"), KernelGeometry.THREADS);
    Map<String, Integer> mma = constants("forward/maxsim_forward_mma.cu");
    assertEquals(mma.get("MMA_THREADS"), KernelGeometry.MMA_THREADS);
    assertEquals(mma.get("GROUP_QUERIES"), KernelGeometry.GROUP_QUERIES);
    assertEquals(mma.get("GROUP_ROWS"), KernelGeometry.GROUP_ROWS);
    // the streaming and compressed mma.sync kernels launch as many threads as the block kernels, and take their pair
    // queues (and the streaming kernel its tile barriers) as 8-byte entries per warp in dynamic shared memory
    Map<String, Integer> stream = constants("forward/maxsim_forward_stream.cu");
    assertEquals(stream.get("STREAM_THREADS"), KernelGeometry.MMA_THREADS);
    assertEquals(stream.get("STREAM_WARPS") * stream.get("STREAM_QUEUE_ENTRIES") * 8,
        KernelGeometry.STREAM_QUEUE_BYTES);
    assertEquals(stream.get("STREAM_WARPS") * stream.get("STREAM_BARRIERS") * 8, KernelGeometry.STREAM_BARRIER_BYTES);
    Map<String, Integer> quant = constants("forward/maxsim_forward_quant.cu");
    assertEquals(quant.get("QUANT_THREADS"), KernelGeometry.MMA_THREADS);
    assertEquals(quant.get("QUANT_WARPS") * quant.get("QUANT_QUEUE_ENTRIES") * 8, KernelGeometry.QUANT_QUEUE_BYTES);
    Map<String, Integer> wgmma = constants("common/maxsim_wgmma.cuh", "forward/maxsim_forward_wgmma.cu");
    assertEquals(wgmma.get("WGMMA_SCALE_BYTES"), KernelGeometry.WGMMA_SCALE_BYTES);
    assertEquals(wgmma.get("WGMMA_STAGE_BYTES"), KernelGeometry.WGMMA_STAGE_BYTES);
  }
}
