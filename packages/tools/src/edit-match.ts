import { ToolError } from './errors.js';

export interface EditOutcome {
  text: string;
  how: 'exact' | 'whitespace';
  /** Where the replacements are in the new text: character offsets, in order. */
  spans: Array<{ start: number; end: number }>;
}

/**
 * Replaces `oldStr` by `newStr` in `text`. First an exact match, which must be unique; when
 * there is none, a line-by-line match ignoring leading and trailing whitespace on each line
 * (models often get indentation or trailing spaces wrong), also unique. With `replaceAll`, every
 * (non-overlapping) match is replaced instead, exact ones if there are any. Errors say how many
 * places matched, or that none did, and what to do.
 */
export function applyEdit(rel: string, text: string, oldStr: string, newStr: string, replaceAll = false): EditOutcome {
  if (oldStr === '') {
    throw new ToolError(
      'old_str is empty. To create a file use create_file; to insert text, put a neighbouring line in old_str and ' +
        'repeat it in new_str with the insertion.',
    );
  }
  if (oldStr === newStr) throw new ToolError('old_str and new_str are identical, so the edit would change nothing.');
  const exact = occurrences(text, oldStr);
  if (exact.length === 1 || (replaceAll && exact.length > 0)) {
    return replaced(text, (replaceAll ? nonOverlapping(exact, oldStr.length) : exact).map((at) => ({ start: at, end: at + oldStr.length, with: newStr })), 'exact');
  }
  if (exact.length > 1) throw ambiguous(rel, exact.length, 'exactly');
  const spans = lineSpans(text, oldStr);
  if (spans.length === 1 || (replaceAll && spans.length > 0)) {
    const edits = (replaceAll ? nonOverlappingSpans(spans) : spans).map(({ start, end }) => {
      // The span stops before the last line's line break, so a trailing one in new_str would double it.
      let replacement = oldStr.endsWith('\n') ? newStr.replace(/\n$/, '') : newStr;
      replacement = reindent(replacement, leadingSpace(firstNonBlank(oldStr)), leadingSpace(text.slice(start)));
      // The span ends before the last line's "\r\n": keep a CRLF file CRLF throughout.
      if (text.startsWith('\r\n', end)) replacement = replacement.replace(/\r?\n/g, '\r\n');
      return { start, end, with: replacement };
    });
    return replaced(text, edits, 'whitespace');
  }
  if (spans.length > 1) throw ambiguous(rel, spans.length, 'when leading and trailing whitespace is ignored');
  throw new ToolError(
    `old_str not found in ${rel}, not even ignoring leading and trailing whitespace on each line. Read the file ` +
      '(read_file) and copy the text to replace exactly, including its line breaks but without the line-number ' +
      'prefixes read_file adds.',
  );
}

/** Applies replacements (in order, not overlapping), noting where each landed in the new text. */
function replaced(text: string, edits: ReadonlyArray<{ start: number; end: number; with: string }>, how: EditOutcome['how']): EditOutcome {
  let out = '';
  let from = 0;
  const spans: EditOutcome['spans'] = [];
  for (const e of edits) {
    out += text.slice(from, e.start);
    spans.push({ start: out.length, end: out.length + e.with.length });
    out += e.with;
    from = e.end;
  }
  return { text: out + text.slice(from), how, spans };
}

function nonOverlapping(starts: readonly number[], length: number): number[] {
  const kept: number[] = [];
  for (const at of starts) if (kept.length === 0 || at >= kept[kept.length - 1] + length) kept.push(at);
  return kept;
}

function nonOverlappingSpans(spans: ReadonlyArray<{ start: number; end: number }>): Array<{ start: number; end: number }> {
  const kept: Array<{ start: number; end: number }> = [];
  for (const s of spans) if (kept.length === 0 || s.start > kept[kept.length - 1].end) kept.push(s);
  return kept;
}

function ambiguous(rel: string, count: number, how: string): ToolError {
  return new ToolError(
    `old_str matches ${count} places in ${rel} (${how}); it must match exactly one. Include more surrounding ` +
      'lines in old_str so that it identifies a single place, or pass replace_all: true to replace every one.',
  );
}

/** Start offsets of every (possibly overlapping) occurrence. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) found.push(i);
  return found;
}

/**
 * Character spans of runs of whole lines whose trimmed contents equal the trimmed lines of
 * `oldStr` (blank lines around it dropped). A span ends before the last line's line break, so
 * the replacement keeps the file's line structure.
 */
function lineSpans(text: string, oldStr: string): Array<{ start: number; end: number }> {
  const want = oldStr.split('\n').map((l) => l.trim());
  while (want.length > 0 && want[0] === '') want.shift();
  while (want.length > 0 && want[want.length - 1] === '') want.pop();
  if (want.length === 0) return [];
  const lines = text.split('\n');
  const offsets: number[] = [];
  let offset = 0;
  for (const line of lines) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  const spans: Array<{ start: number; end: number }> = [];
  for (let i = 0; i + want.length <= lines.length; i++) {
    let ok = true;
    for (let j = 0; j < want.length && ok; j++) ok = lines[i + j].trim() === want[j];
    if (!ok) continue;
    const lastLine = lines[i + want.length - 1];
    const end = offsets[i + want.length - 1] + lastLine.replace(/\r$/, '').length;
    spans.push({ start: offsets[i], end });
  }
  return spans;
}

const leadingSpace = (s: string): string => /^[ \t]*/.exec(s)![0];
const firstNonBlank = (s: string): string => s.split('\n').find((l) => l.trim() !== '') ?? '';

/**
 * When old_str was indented differently from the file (the usual reason the exact match failed),
 * new_str most likely is too: move its lines from old_str's indentation to the file's.
 */
function reindent(newStr: string, from: string, to: string): string {
  if (from === to) return newStr;
  return newStr
    .split('\n')
    .map((line) => (line.startsWith(from) && line.trim() !== '' ? to + line.slice(from.length) : line))
    .join('\n');
}
