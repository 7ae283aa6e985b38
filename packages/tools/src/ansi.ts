// CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) ended by BEL or ST,
// and the remaining two-character escapes. Colour codes are noise to a model and cost tokens.
// eslint-disable-next-line no-control-regex -- terminal escape sequences are control characters: matching them is the point
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

// C0 controls other than tab and newline, and DEL: what remains of them once escapes are gone.
// eslint-disable-next-line no-control-regex -- terminal escape sequences are control characters: matching them is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;
// eslint-disable-next-line no-control-regex -- terminal escape sequences are control characters: matching them is the point
const ODD = /[\x00-\x08\x0b-\x1f\x7f\ufffd]/g;

/**
 * A line with its control characters (NUL, bell, backspace, stray ESC...) shown as U+FFFD, the
 * mark the UTF-8 decoder already uses for bytes that are not text: the model and a terminal
 * printing the line get nothing that acts on them.
 */
export function visibleText(line: string): string {
  return line.replace(CONTROL, '\ufffd');
}

/** A line of binary data rather than text: a NUL, or mostly control characters and bad bytes. */
export function looksBinary(line: string): boolean {
  if (line.includes('\0')) return true;
  const odd = line.match(ODD)?.length ?? 0;
  return odd >= 4 && odd > line.length * 0.3;
}
