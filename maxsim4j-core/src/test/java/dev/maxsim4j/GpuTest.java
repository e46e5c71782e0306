package dev.maxsim4j;

import dev.maxsim4j.internal.BackendSelector;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test that needs a usable GPU: tagged {@code gpu} (select with {@code --include-tag gpu}) and skipped,
 * with the reason, where the CUDA backend cannot run (no driver, no device, no kernels in the build).
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu")
@ExtendWith(GpuTest.RequiresCuda.class)
public @interface GpuTest {

  /** Enables the test only where the CUDA backend is usable. */
  final class RequiresCuda implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
      Optional<String> reason = BackendSelector.cudaUnavailableReason();
      return reason.isEmpty()
          ? ConditionEvaluationResult.enabled("a CUDA device is present")
          : ConditionEvaluationResult.disabled("GPU test skipped: " + reason.get());
    }
  }
}
