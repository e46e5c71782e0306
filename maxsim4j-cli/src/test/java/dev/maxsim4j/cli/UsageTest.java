package dev.maxsim4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** How a usage prints: forms lined up under the first, descriptions as written. */
class UsageTest {
  @Test
  void formsLineUpAndDescriptionsKeepTheirIndent() {
    String usage = """
        run --a A [--b B]
              [--c C]
              --d, --e)
          Runs. (A parenthesis opening a description line
          is description, not options.)
        run --other
          Another form.""";
    assertEquals("""
        usage: tool run --a A [--b B]
                          [--c C]
                          --d, --e)
          Runs. (A parenthesis opening a description line
          is description, not options.)
               tool run --other
          Another form.""", Usage.of("tool", usage));
  }

  /** Every command's description lines keep their 2 spaces; only forms and their continued options move. */
  @Test
  void everyCommandsDescriptionsKeepTheirIndent() {
    for (Main.UserCommand c : Main.UserCommand.values()) {
      String printed = Main.usage(c);
      for (String line : printed.lines().skip(1).toList()) {
        int indent = line.length() - line.stripLeading().length();
        assertTrue(line.isBlank() || indent == 2 || line.startsWith("       maxsim4j ")
            || indent >= "usage: maxsim4j ".length() + 3, c + ": '" + line + "'\n" + printed);
      }
    }
  }
}
