package dev.maxsim4j.cli;

/**
 * {@code --help} or {@code -h} met where an option's name is expected: the command's usage is asked for, not a run.
 * Where an option takes {@code -h} as its value ({@code rerank --query -h}), it is that value; {@code --help} is
 * never one.
 */
public final class HelpRequested extends RuntimeException {
  public HelpRequested() {
    super(null, null, false, false);
  }
}
