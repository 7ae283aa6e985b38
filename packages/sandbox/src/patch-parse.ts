// Reads a git patch (`diff-tree -p --binary -M` output) into file sections and hunks, as views
// of the patch's bytes. Nothing here decodes what a file holds: content need not be UTF-8
// (Latin-1, Shift-JIS, CRLF, binary), and a patch rebuilt from decoded text would change it.
// Only the ASCII framing (`diff --git`, `@@ -a,b +c,d @@`, the extended header lines) is read.
import { PatchFormatError } from './errors.js';
import { readHeaderPath, splitPathPair } from './git-path.js';

export type SectionKind = 'added' | 'deleted' | 'modified' | 'renamed' | 'copied';

/** One hunk: its `@@` line and body, exactly as in the patch. */
export interface RawHunk {
  readonly bytes: Buffer;
  readonly oldStart: number;
  readonly oldCount: number;
  readonly newStart: number;
  readonly newCount: number;
  /** Where the digits of newStart are in `bytes` (to move the hunk without touching the rest). */
  readonly newStartAt: { readonly offset: number; readonly length: number };
}

/** One `diff --git` section: a file's header lines (binary data included) and its text hunks. */
export interface RawSection {
  /** The whole section. */
  readonly bytes: Buffer;
  /** Everything before the first hunk (all of it when there is none). */
  readonly header: Buffer;
  readonly hunks: readonly RawHunk[];
  /** Path after the change (for a deletion, the deleted path), without git's quoting or prefix. */
  readonly path: Buffer;
  /** Source of a rename or copy. */
  readonly oldPath?: Buffer;
  readonly kind: SectionKind;
  readonly binary: boolean;
}

const DIFF_GIT = Buffer.from('diff --git ');
const HUNK = Buffer.from('@@ ');
const HUNK_LINE = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

interface Line {
  start: number;
  /** Where its content ends: before the newline (or at the end of the patch). */
  textEnd: number;
}

/** Splits a patch into its file sections. Throws PatchFormatError on anything git would not write. */
export function parsePatch(patch: Buffer): RawSection[] {
  const lines = splitLines(patch);
  const sections: RawSection[] = [];
  let i = 0;
  while (i < lines.length) {
    if (!startsWith(patch, lines[i], DIFF_GIT)) throw formatError(patch, lines, i, 'expected a "diff --git" line');
    const start = lines[i].start;
    // Binary data lines start with a length letter, "literal", "delta" or are empty: never "@@ ".
    let headerStop = i + 1;
    while (headerStop < lines.length && !startsWith(patch, lines[headerStop], HUNK) && !startsWith(patch, lines[headerStop], DIFF_GIT)) headerStop++;
    const facts = readHeader(patch, lines, i, headerStop);
    const hunks: RawHunk[] = [];
    let j = headerStop;
    while (j < lines.length && startsWith(patch, lines[j], HUNK)) {
      const numbers = hunkNumbers(patch, lines, j);
      const next = hunkEnd(patch, lines, j, numbers);
      hunks.push({ bytes: patch.subarray(lines[j].start, next < lines.length ? lines[next].start : patch.length), ...numbers });
      j = next;
    }
    if (j < lines.length && !startsWith(patch, lines[j], DIFF_GIT)) throw formatError(patch, lines, j, 'a hunk holds more lines than its @@ line counts');
    const end = j < lines.length ? lines[j].start : patch.length;
    const headerBytesEnd = headerStop < lines.length ? lines[headerStop].start : patch.length;
    sections.push({
      bytes: patch.subarray(start, end),
      header: patch.subarray(start, Math.min(headerBytesEnd, end)),
      hunks,
      ...facts,
    });
    i = j;
  }
  return sections;
}

/** What a section's header says about the file: its paths, the kind of change, binary or not. */
function readHeader(patch: Buffer, lines: readonly Line[], first: number, stop: number): Pick<RawSection, 'path' | 'oldPath' | 'kind' | 'binary'> {
  let kind: SectionKind = 'modified';
  let binary = false;
  let from: Buffer | undefined;
  let to: Buffer | undefined;
  let minus: Buffer | undefined;
  let plus: Buffer | undefined;
  const path = (l: number, rest: Buffer): Buffer => readHeaderPath(rest) ?? fail(l, 'a quoted path never ends');
  const fail = (l: number, why: string): never => {
    throw formatError(patch, lines, l, why);
  };
  for (let l = first + 1; l < stop; l++) {
    const line = patch.subarray(lines[l].start, lines[l].textEnd);
    // latin1: one character per byte, so the rest of a field is cut from the bytes, not the text.
    const text = line.toString('latin1');
    const field = (name: string): Buffer | undefined => (text.startsWith(name) ? line.subarray(name.length) : undefined);
    let rest: Buffer | undefined;
    if (field('new file mode ')) kind = 'added';
    else if (field('deleted file mode ')) kind = 'deleted';
    else if ((rest = field('rename from ') ?? field('copy from '))) from = path(l, rest);
    else if ((rest = field('rename to '))) [to, kind] = [path(l, rest), 'renamed'];
    else if ((rest = field('copy to '))) [to, kind] = [path(l, rest), 'copied'];
    else if ((rest = field('--- '))) minus = text === '--- /dev/null' ? undefined : withoutPrefix(path(l, rest), 'a/');
    else if ((rest = field('+++ '))) plus = text === '+++ /dev/null' ? undefined : withoutPrefix(path(l, rest), 'b/');
    else if (text === 'GIT binary patch' || text.startsWith('Binary files ')) binary = true;
  }
  // A section without rename or ---/+++ lines (binary, mode change, empty file) names its file
  // only on the `diff --git` line, where both sides are then the same path.
  const pair = () => {
    const rest = patch.subarray(lines[first].start + DIFF_GIT.length, lines[first].textEnd);
    const split = splitPathPair(rest);
    return split ? withoutPrefix(split.b, 'b/') : fail(first, 'cannot tell the path on the "diff --git" line');
  };
  const p = to ?? plus ?? minus ?? pair();
  return { path: p, ...(from ? { oldPath: from } : {}), kind, binary };
}

/** The line after a hunk's body: counts the lines its @@ line announces, then any "\ No newline" markers. */
function hunkEnd(patch: Buffer, lines: readonly Line[], at: number, counts: { oldCount: number; newCount: number }): number {
  let old = counts.oldCount;
  let neu = counts.newCount;
  let j = at + 1;
  for (; old > 0 || neu > 0; j++) {
    const line = lines[j];
    if (!line) throw formatError(patch, lines, at, 'the patch ends inside this hunk');
    const c = line.textEnd === line.start ? undefined : patch[line.start];
    // An empty line is an empty context line whose leading space was lost; git apply reads it so.
    if (c === 0x20 || c === undefined) [old, neu] = [old - 1, neu - 1];
    else if (c === 0x2d) old--;
    else if (c === 0x2b) neu--;
    else if (c !== 0x5c) throw formatError(patch, lines, j, 'a hunk line must start with " ", "-", "+" or "\\"');
    if (old < 0 || neu < 0) throw formatError(patch, lines, j, 'a hunk holds more lines than its @@ line counts');
  }
  while (j < lines.length && patch[lines[j].start] === 0x5c) j++;
  return j;
}

function hunkNumbers(patch: Buffer, lines: readonly Line[], at: number): Omit<RawHunk, 'bytes'> {
  // latin1: one character per byte, so offsets in the string are offsets in the bytes.
  const text = patch.subarray(lines[at].start, lines[at].textEnd).toString('latin1');
  const m = HUNK_LINE.exec(text);
  if (!m) throw formatError(patch, lines, at, 'a malformed @@ line');
  const plus = text.indexOf(' +') + 2;
  return {
    oldStart: Number(m[1]),
    oldCount: m[2] === undefined ? 1 : Number(m[2]),
    newStart: Number(m[3]),
    newCount: m[4] === undefined ? 1 : Number(m[4]),
    newStartAt: { offset: plus, length: m[3].length },
  };
}

function splitLines(buf: Buffer): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(0x0a, start);
    const end = nl === -1 ? buf.length : nl + 1;
    lines.push({ start, textEnd: nl === -1 ? buf.length : nl });
    start = end;
  }
  return lines;
}

function startsWith(buf: Buffer, line: { start: number }, prefix: Buffer): boolean {
  return buf.length - line.start >= prefix.length && buf.compare(prefix, 0, prefix.length, line.start, line.start + prefix.length) === 0;
}

function withoutPrefix(p: Buffer, prefix: 'a/' | 'b/'): Buffer {
  return p.length > 2 && p[0] === prefix.charCodeAt(0) && p[1] === 0x2f ? p.subarray(2) : p;
}

function formatError(patch: Buffer, lines: readonly Line[], at: number, why: string): PatchFormatError {
  const line = lines[at];
  const shown = line ? patch.subarray(line.start, Math.min(line.textEnd, line.start + 80)).toString('utf8') : '';
  return new PatchFormatError(`line ${at + 1}: ${why}${shown ? ` ("${shown}")` : ''}`);
}
