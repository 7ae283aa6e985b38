// CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) ended by BEL or ST,
// and the remaining two-character escapes. Colour codes are noise to a model and cost tokens.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * One output line as a terminal would leave it: escapes removed, and for progress bars redrawn
 * with carriage returns only the last state kept.
 */
export function cleanLine(line: string): string {
  const plain = stripAnsi(line).replace(/\r+$/, '');
  const cr = plain.lastIndexOf('\r');
  return cr === -1 ? plain : plain.slice(cr + 1);
}
