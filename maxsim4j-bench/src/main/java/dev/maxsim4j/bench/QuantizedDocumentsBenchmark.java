package dev.maxsim4j.bench;

import dev.maxsim4j.DType;
import dev.maxsim4j.MaxSim;
import dev.maxsim4j.TokenBatch;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * All-pairs MaxSim on the CPU with compressed documents ({@link TokenBatch#quantize} of the same unit vectors)
 * and fp32 queries; {@code binary-sym} quantizes the queries to one bit too (the popcount path). The fp32 row
 * is the yardstick each type is read against.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
    "-Xmx6g"})
@State(Scope.Benchmark)
public class QuantizedDocumentsBenchmark {

  @Param({"1x4000x32x300x128", "32x32x32x300x128"})
  public String shape;

  @Param({"fp32", "int8", "fp8", "binary", "binary-sym"})
  public String docs;

  private TokenBatch q;
  private TokenBatch d;
  private MaxSim allThreads;

  @Setup(Level.Trial)
  public void setUp() {
    BenchData data = new BenchData(shape, 42);
    TokenBatch floats = data.documentBatch(DType.FLOAT32);
    q = data.queryBatch();
    d = switch (docs) {
      case "fp32" -> floats;
      case "int8" -> floats.quantize(DType.INT8);
      case "fp8" -> floats.quantize(DType.FLOAT8_E4M3);
      case "binary", "binary-sym" -> floats.quantize(DType.BINARY);
      default -> throw new IllegalArgumentException(
          "docs '" + docs + "'; expected fp32, int8, fp8, binary or binary-sym");
    };
    if (docs.equals("binary-sym")) {
      q = q.quantize(DType.BINARY);
    }
    allThreads = MaxSim.builder().backend("vector").threads(Runtime.getRuntime().availableProcessors()).build();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    allThreads.close();
  }

  @Benchmark
  public float[][] fusedAllThreads() {
    return allThreads.scores(q, d);
  }
}
