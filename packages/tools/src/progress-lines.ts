import { cleanLine, looksBinary, visibleText } from './ansi.js';

/** A live tail only needs the end of a burst; the rest is in the tool's real output. */
const MAX_LINES_PER_CHUNK = 20;
const MAX_LINE_CHARS = 300;

/**
 * Turns raw chunks of a command's output into finished, printable lines for a UI's live tail:
 * escapes and control characters removed, long lines cut, binary noise summarised. Lines are
 * given out once they end; an unfinished last line when the stream ends (`flush`).
 */
export class ProgressLines {
  private partial = '';

  /** Complete lines in `chunk` (with what was left over from earlier chunks). */
  push(chunk: string): string[] {
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop()!.slice(-MAX_LINE_CHARS * 4);
    return shape(parts);
  }

  /** The unfinished line, if any, as it stands now. */
  flush(): string[] {
    const rest = this.partial;
    this.partial = '';
    return rest === '' ? [] : shape([rest]);
  }
}

function shape(lines: string[]): string[] {
  return lines.slice(-MAX_LINES_PER_CHUNK).map((raw) => {
    if (looksBinary(raw)) return '(binary output)';
    const line = visibleText(cleanLine(raw));
    return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS - 1)}…` : line;
  });
}
