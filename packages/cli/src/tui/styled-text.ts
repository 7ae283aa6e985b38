// Styled text laid out in terminal columns: what the markdown renderer produces and the
// components print line by line. Widths count terminal cells (string-width: wide CJK characters
// and emoji take two), so a line never spills over and a live region's height is known exactly.
import { stripVTControlCharacters } from 'node:util';
import stringWidth from 'string-width';

/** Ink's <Text> style props a segment may carry. */
export interface Style {
  color?: string;
  bold?: boolean;
  italic?: boolean;
  underline?: boolean;
  strikethrough?: boolean;
  dimColor?: boolean;
}

export interface Segment {
  text: string;
  style?: Style;
}

/** One terminal row. */
export type Line = Segment[];

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * Escape sequences and control characters from the model would move the cursor or recolour the
 * terminal behind Ink's back, and be counted wrong; tabs and line breaks stay.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return stripVTControlCharacters(text).replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, '');
}

export function textWidth(text: string): number {
  return stringWidth(text);
}

export function lineWidth(line: Line): number {
  let w = 0;
  for (const s of line) w += stringWidth(s.text);
  return w;
}

/** Tabs to spaces at stops of `tab` columns: the terminal would move a tab to its own stops. */
export function expandTabs(text: string, tab = 4): string {
  if (!text.includes('\t')) return text;
  let out = '';
  let col = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (segment === '\t') {
      const n = tab - (col % tab);
      out += ' '.repeat(n);
      col += n;
    } else {
      out += segment;
      col += stringWidth(segment);
    }
  }
  return out;
}

/** Pieces of `line` cut every `width` columns (code lines: no word boundaries to respect). */
export function breakLine(line: Line, width: number): Line[] {
  const w = Math.max(1, width);
  if (lineWidth(line) <= w) return [line];
  const rows: Line[] = [];
  let row: Line = [];
  let used = 0;
  for (const seg of line) {
    let chunk = '';
    for (const { segment } of graphemes.segment(seg.text)) {
      const gw = stringWidth(segment);
      if (used + gw > w && used > 0) {
        if (chunk !== '') row.push(withText(seg, chunk));
        rows.push(row);
        row = [];
        used = 0;
        chunk = '';
      }
      chunk += segment;
      used += gw;
    }
    if (chunk !== '') row.push(withText(seg, chunk));
  }
  rows.push(row);
  return rows;
}

/** A run of text that wraps as one: a word (possibly in several styles, like `**bold**,`), a space or a line break. */
type Unit = { kind: 'word'; parts: Segment[]; width: number } | { kind: 'space'; parts: Segment[]; width: number } | { kind: 'break' };

function unitsOf(segments: readonly Segment[]): Unit[] {
  const units: Unit[] = [];
  for (const seg of segments) {
    for (const piece of seg.text.split(/(\n|[ \t]+)/)) {
      if (piece === '') continue;
      if (piece === '\n') {
        units.push({ kind: 'break' });
        continue;
      }
      const kind = /^[ \t]/.test(piece) ? 'space' : 'word';
      const part = withText(seg, kind === 'space' ? piece.replace(/\t/g, ' ') : piece);
      const last = units.at(-1);
      if (last && last.kind === kind) {
        last.parts.push(part);
        last.width += stringWidth(part.text);
      } else units.push({ kind, parts: [part], width: stringWidth(part.text) });
    }
  }
  return units;
}

/**
 * Word-wraps styled text to `width` columns: line breaks in the text are kept, and so are spaces
 * that begin a line of the text (its own indentation); spaces where a line wraps are dropped, and
 * a word longer than a line is cut.
 */
export function wrapSegments(segments: readonly Segment[], width: number): Line[] {
  const w = Math.max(1, width);
  const lines: Line[] = [];
  let line: Line = [];
  let used = 0;
  let space: Segment[] = [];
  let spaceWidth = 0;
  let wrapped = false;
  const newLine = (soft: boolean) => {
    lines.push(line);
    line = [];
    used = 0;
    space = [];
    spaceWidth = 0;
    wrapped = soft;
  };
  for (const unit of unitsOf(segments)) {
    if (unit.kind === 'break') {
      newLine(false);
      continue;
    }
    if (unit.kind === 'space') {
      if (!(wrapped && used === 0)) [space, spaceWidth] = [unit.parts, unit.width];
      continue;
    }
    if (used + spaceWidth + unit.width <= w) {
      line.push(...space, ...unit.parts);
      used += spaceWidth + unit.width;
      [space, spaceWidth] = [[], 0];
      continue;
    }
    if (used > 0) newLine(true);
    [space, spaceWidth] = [[], 0];
    const pieces = unit.width <= w ? [unit.parts] : breakLine(unit.parts, w);
    for (const piece of pieces.slice(0, -1)) {
      line = piece;
      newLine(true);
    }
    line = pieces.at(-1) ?? [];
    used = lineWidth(line);
  }
  lines.push(line);
  return lines;
}

/** `lines` with `first` before the first and `rest` before the others (list markers, quote bars, indents). */
export function prefixLines(lines: readonly Line[], first: Segment[], rest: Segment[] = first): Line[] {
  return lines.map((l, i) => [...(i === 0 ? first : rest), ...l]);
}

/** `line` padded to `width` columns: left, right or centred. */
export function pad(line: Line, width: number, align: 'left' | 'right' | 'center' | null = 'left'): Line {
  const room = Math.max(0, width - lineWidth(line));
  if (room === 0) return line;
  const before = align === 'right' ? room : align === 'center' ? Math.floor(room / 2) : 0;
  const after = room - before;
  return [...(before > 0 ? [{ text: ' '.repeat(before) }] : []), ...line, ...(after > 0 ? [{ text: ' '.repeat(after) }] : [])];
}

function withText(seg: Segment, text: string): Segment {
  return seg.style ? { text, style: seg.style } : { text };
}
