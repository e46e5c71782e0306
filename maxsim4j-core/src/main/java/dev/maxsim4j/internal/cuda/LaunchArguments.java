package dev.maxsim4j.internal.cuda;

/**
 * Receives a kernel launch's arguments in the order of the kernel's parameters: {@code i64} a device pointer or a
 * 64-bit integer, {@code i32} and {@code f32} 4 bytes.
 */
public interface LaunchArguments {
  LaunchArguments i64(long value);

  LaunchArguments i32(int value);

  LaunchArguments f32(float value);
}
