/** A file's text as lines: `\n` separated, a final newline does not start another line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Cuts a line to `max` characters, saying how many were cut so the model knows it is partial.
 * `alreadyCut` counts characters of the line dropped before it got here.
 */
export function clipLine(line: string, max: number, alreadyCut = 0): string {
  if (line.length <= max && alreadyCut === 0) return line;
  const kept = line.slice(0, max);
  return `${kept}… [${line.length - kept.length + alreadyCut} more characters]`;
}

/** `    42\ttext`: the line number right-aligned (6 wide) and a tab, as `cat -n` and read_file show lines. */
export function numbered(n: number, line: string): string {
  return `${String(n).padStart(6)}\t${line}`;
}

/** The last `n` non-empty lines of `text` (the end of a command's output, for UIs). */
export function lastLines(text: string, n: number): string[] {
  return text.split('\n').filter((l) => l.trim() !== '').slice(-n);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Byte-wise order (what `ls` does in the C locale): stable across machines and locales. */
export function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
