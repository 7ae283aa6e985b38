import { clipLine, numbered, splitLines } from './text-lines.js';

export const EDIT_REPORT_LIMITS = {
  /** Unchanged lines shown before and after each changed range. */
  context: 3,
  /** A changed range longer than this shows its first and last lines only. */
  longRange: 12,
  /** Lines of the snippet overall. */
  maxLines: 40,
  /** Ranges named in the result line. */
  namedRanges: 10,
  maxLineChars: 300,
} as const;

interface LineRange {
  first: number;
  last: number;
}

/**
 * What edit_file tells the model: where the edit landed (`line 6`, `lines 2-3`, `lines 2, 5-6 and
 * 9` for several replacements) and the changed lines of the new text with a few around them,
 * numbered as read_file numbers them, so the model can check the edit without reading the file
 * again, and without the whole diff in its context.
 */
export function editReport(text: string, spans: ReadonlyArray<{ start: number; end: number }>): { where: string; snippet: string } {
  const lines = splitLines(text);
  const ranges = spans.map((s) => lineRange(text, s.start, s.end, Math.max(lines.length, 1)));
  return { where: describe(ranges), snippet: snippet(lines, ranges) };
}

/** The 1-based lines a replacement occupies; an empty one (a deletion) is the line where it was. */
function lineRange(text: string, start: number, end: number, total: number): LineRange {
  const first = Math.min(lineAt(text, start), total);
  const last = end > start ? Math.min(lineAt(text, end - 1), total) : first;
  return { first, last };
}

function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function describe(ranges: readonly LineRange[]): string {
  const named = ranges.slice(0, EDIT_REPORT_LIMITS.namedRanges).map((r) => (r.first === r.last ? `${r.first}` : `${r.first}-${r.last}`));
  const single = ranges.length === 1 && ranges[0].first === ranges[0].last;
  if (ranges.length > named.length) return `lines ${named.join(', ')} and ${ranges.length - named.length} more`;
  if (named.length === 1) return `${single ? 'line' : 'lines'} ${named[0]}`;
  return `lines ${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}`;
}

function snippet(lines: readonly string[], ranges: readonly LineRange[]): string {
  if (lines.length === 0) return '(the file is now empty)';
  const { context, longRange, maxLines, maxLineChars } = EDIT_REPORT_LIMITS;
  // Windows around each range, merged where they touch.
  const windows: Array<LineRange & { changed: LineRange[] }> = [];
  for (const r of ranges) {
    const w = { first: Math.max(1, r.first - context), last: Math.min(lines.length, r.last + context) };
    const prev = windows[windows.length - 1];
    if (prev && w.first <= prev.last + 1) {
      prev.last = Math.max(prev.last, w.last);
      prev.changed.push(r);
    } else windows.push({ ...w, changed: [r] });
  }
  const out: string[] = [];
  let shown = 0;
  const show = (n: number): void => {
    out.push(numbered(n, clipLine(lines[n - 1].replace(/\r$/, ''), maxLineChars)));
    shown++;
  };
  for (const [i, w] of windows.entries()) {
    if (shown >= maxLines) {
      out.push(`[${windows.length - i} more edited places not shown; read_file shows them.]`);
      break;
    }
    if (i > 0) out.push('...');
    for (let n = w.first; n <= w.last; n++) {
      if (shown >= maxLines) {
        out.push(`[Cut at line ${n - 1}; read_file shows the rest.]`);
        break;
      }
      // The middle of a long changed range is what the model just wrote: its ends are what to check.
      const inside = w.changed.find((r) => r.last - r.first + 1 > longRange && n > r.first + context && n < r.last - context);
      if (inside) {
        out.push(`[... lines ${n}-${inside.last - context - 1} as written ...]`);
        n = inside.last - context - 1;
        continue;
      }
      show(n);
    }
  }
  return out.join('\n');
}
