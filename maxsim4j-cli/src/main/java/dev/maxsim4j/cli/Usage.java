package dev.maxsim4j.cli;

/**
 * A command's usage as its --help prints it. A usage text holds forms (a line at column 0, its continued options
 * indented by 3 or more) each followed by a description (indented by 2); printed after "usage: PROGRAM ", a later
 * form starts under the first's program name and continued options stay under their form's options, while the
 * descriptions keep their own indent.
 */
public final class Usage {
  private Usage() {}

  public static String of(String program, String usage) {
    String first = "usage: " + program + " ";
    StringBuilder b = new StringBuilder();
    boolean inForm = false;
    for (String line : usage.split("\n", -1)) {
      int indent = line.length() - line.stripLeading().length();
      if (b.isEmpty()) {
        b.append(first).append(line);
        inForm = true;
        continue;
      }
      b.append('\n');
      if (!line.isBlank() && indent == 0) {
        b.append(" ".repeat("usage: ".length())).append(program).append(' ').append(line);
        inForm = true;
      } else if (inForm && indent >= 3) {
        b.append(" ".repeat(first.length())).append(line);
      } else {
        b.append(line);
        inForm = false;
      }
    }
    return b.toString();
  }
}
