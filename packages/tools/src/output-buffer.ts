import { cleanLine, looksBinary, visibleText } from './ansi.js';
import { DEFAULT_OUTPUT_LIMITS, type OutputLimits } from './options.js';
import { clipLine, plural } from './text-lines.js';

/**
 * A command's output as the model gets it, bounded however much the command prints: the first
 * lines (the head, handed out in batches as they arrive), then only a rolling tail of the last
 * lines, with a count of the lines dropped in between. stdout and stderr are interleaved by line
 * in arrival order, as a terminal shows them.
 */
export class OutputBuffer {
  private readonly partial = { stdout: '', stderr: '' };
  /** Characters cut from the unfinished line of each stream. */
  private readonly partialCut = { stdout: 0, stderr: 0 };
  /** Head lines not handed out yet. */
  private pending: string[] = [];
  private pendingSize = 0;
  private headLines = 0;
  private headSize = 0;
  private headFull = false;
  private readonly tail: string[] = [];
  private tailSize = 0;
  private droppedLines = 0;
  private totalLines = 0;
  private limitAnnounced = false;
  /** Consecutive lines of binary data not stored yet: they become one line saying so. */
  private binary = { lines: 0, chars: 0 };

  constructor(private readonly limits: Required<OutputLimits>) {}

  write(stream: 'stdout' | 'stderr', text: string): void {
    const parts = (this.partial[stream] + text).split('\n');
    let rest = parts.pop()!;
    for (const line of parts) {
      this.addLine(line, this.partialCut[stream]);
      this.partialCut[stream] = 0;
    }
    // A line that never ends (a progress bar, minified output) must not grow without bound: a
    // redrawn line keeps its last state, anything else its start and a count of what was cut.
    const cap = this.limits.maxLineChars * 2;
    if (rest.length > cap) {
      const cr = rest.lastIndexOf('\r');
      if (cr > 0) rest = rest.slice(cr + 1);
      if (rest.length > cap) {
        this.partialCut[stream] += rest.length - cap;
        rest = rest.slice(0, cap);
      }
    }
    this.partial[stream] = rest;
  }

  /** Lines not yet ended count as lines from now on (the command exited, or a batch is due). */
  flushPartials(): void {
    this.flushPartial('stdout');
    this.flushPartial('stderr');
  }

  /** Characters waiting to be handed out. */
  get pendingChars(): number {
    return this.pendingSize;
  }

  get lines(): number {
    return this.totalLines;
  }

  /**
   * The head lines that arrived since the last take, or '' when none did. For a streamed batch,
   * `announceLimit` adds (once) a note that the head is full, so the model knows why the stream
   * goes quiet while the command keeps printing.
   */
  take(opts: { announceLimit?: boolean } = {}): string {
    this.endBinaryRun();
    const lines = this.pending;
    this.pending = [];
    this.pendingSize = 0;
    if (opts.announceLimit && this.headFull && !this.limitAnnounced) {
      this.limitAnnounced = true;
      lines.push('[output limit reached: further output is not streamed; the final event will show the last lines]');
    }
    return lines.join('\n');
  }

  /** Everything not handed out yet: pending head lines, the count of dropped lines, the tail. */
  rest(): string {
    const parts = [this.take()].filter((p) => p !== '');
    if (this.droppedLines > 0) parts.push(`[... ${plural(this.droppedLines, 'line')} of output omitted ...]`);
    if (this.tail.length > 0) parts.push(this.tail.join('\n'));
    this.tail.length = 0;
    this.tailSize = 0;
    this.droppedLines = 0;
    return parts.join('\n');
  }

  private flushPartial(stream: 'stdout' | 'stderr'): void {
    if (this.partial[stream] === '' && this.partialCut[stream] === 0) return;
    const line = this.partial[stream];
    const cut = this.partialCut[stream];
    this.partial[stream] = '';
    this.partialCut[stream] = 0;
    this.addLine(line, cut);
  }

  private addLine(raw: string, cut = 0): void {
    this.totalLines++;
    const clean = cleanLine(raw);
    // Binary output (a compressed file catted, a core dump) is noise to the model and may hold
    // bytes that act on a terminal: a run of such lines is kept as one line saying how much.
    if (looksBinary(clean)) {
      this.binary.lines++;
      this.binary.chars += clean.length + cut;
      return;
    }
    this.endBinaryRun();
    this.keep(clipLine(visibleText(clean), this.limits.maxLineChars, cut));
  }

  private endBinaryRun(): void {
    const { lines, chars } = this.binary;
    if (lines === 0) return;
    this.binary = { lines: 0, chars: 0 };
    this.keep(`[binary output: ${plural(chars, 'character')} on ${plural(lines, 'line')}, not shown]`);
  }

  private keep(line: string): void {
    if (!this.headFull) {
      if (this.headLines < this.limits.headLines && this.headSize + line.length <= this.limits.headChars) {
        this.pending.push(line);
        this.pendingSize += line.length + 1;
        this.headLines++;
        this.headSize += line.length + 1;
        return;
      }
      this.headFull = true;
    }
    this.tail.push(line);
    this.tailSize += line.length + 1;
    while (this.tail.length > this.limits.tailLines || (this.tailSize > this.limits.tailChars && this.tail.length > 1)) {
      this.tailSize -= this.tail.shift()!.length + 1;
      this.droppedLines++;
    }
  }
}

/**
 * A whole text (another tool's answer) cut the way command output is: its first lines, then a
 * count of the lines left out, then its last lines; long lines clipped, terminal escapes and
 * binary runs removed. Limits not given are those of command output.
 */
export function clipOutput(text: string, limits: OutputLimits = {}): string {
  const buffer = new OutputBuffer({ ...DEFAULT_OUTPUT_LIMITS, ...limits });
  buffer.write('stdout', text);
  buffer.flushPartials();
  return buffer.rest();
}
