// Hunk-by-hunk review of a diff: the files and hunks a person decides on (with ids), and the diff
// cut down to the accepted hunks. The cut copies the patch's own bytes; only the new-side line
// numbers of a hunk's @@ line change (when earlier hunks of its file were dropped). Text is
// decoded for showing, never for applying: a file need not be UTF-8.
import type { ChangedFile, SandboxDiff } from './diff.js';
import { UnknownHunkError, SandboxError } from './errors.js';
import { parsePatch, type RawHunk, type RawSection } from './patch-parse.js';
import { escapedName } from './utf8-names.js';

export type PatchFileStatus = 'added' | 'modified' | 'deleted' | 'renamed';

/** A hunk as shown for review. */
export interface PatchHunk {
  /** What a decision on it is recorded under (see hunkId). */
  readonly id: string;
  /** The `@@ -a,b +c,d @@` line, decoded for showing. */
  readonly header: string;
  /** Its lines, each starting with ' ', '+', '-' or '\', decoded for showing (bytes that are not UTF-8 show as U+FFFD). */
  readonly lines: readonly string[];
}

/** A file of a diff as shown for review. */
export interface PatchFile {
  /** Path after the change (for a deletion, the deleted path), as in SandboxDiff.files. */
  readonly path: string;
  /** Source of a rename. */
  readonly oldPath?: string;
  readonly status: PatchFileStatus;
  readonly binary: boolean;
  /** Its text hunks; none for a binary file, a mode change, a pure rename, an empty file or a type change. */
  readonly hunks: readonly PatchHunk[];
  /**
   * What decisions on the file are recorded under: its hunks' ids, or, for a file without text
   * hunks (kept or dropped whole), the one id `<path>#0`.
   */
  readonly decisionIds: readonly string[];
}

/** A hunk's id: `<path>#<index>`, the index counting the file's hunks from 0. */
export function hunkId(path: string, index: number): string {
  return `${path}#${index}`;
}

/** The files and hunks of a patch (SandboxDiff.patchBytes), in patch order. */
export function patchFiles(patch: Buffer): PatchFile[] {
  return groupByFile(parsePatch(patch)).map(toPatchFile);
}

/**
 * The diff with only the accepted hunks (ids as patchFiles gives them): the kept hunks' bytes
 * verbatim, each file's header (modes, rename, binary data) with them, files with no accepted
 * hunk left out. `omitted` is kept; `from` and `to` stay those of the full diff. Everything
 * accepted: the diff itself. An accepted id the diff does not have throws UnknownHunkError
 * (the decision was made on other changes); nothing is applied then.
 */
export function selectHunks(diff: SandboxDiff, accepted: Iterable<string>): SandboxDiff {
  const files = groupByFile(parsePatch(diff.patchBytes));
  const wanted = new Set(accepted);
  const known = new Set(files.flatMap((f) => decisionIds(f)));
  const unknown = [...wanted].filter((id) => !known.has(id));
  if (unknown.length > 0) throw new UnknownHunkError(unknown);
  if ([...known].every((id) => wanted.has(id))) return diff;

  const parts: Buffer[] = [];
  const kept: ChangedFile[] = [];
  const byPath = new Map(diff.files.map((f) => [f.path, f]));
  for (const file of files) {
    const changed = byPath.get(file.path);
    if (!changed) throw new SandboxError('internal', `The patch changes ${file.path}, which the diff's file list does not name. Take the diff again.`);
    if (isWhole(file)) {
      if (!wanted.has(hunkId(file.path, 0))) continue;
      parts.push(...file.sections.map((s) => s.bytes));
      kept.push(changed);
      continue;
    }
    const section = file.sections[0];
    const hunks = keptHunks(section.hunks, (i) => wanted.has(hunkId(file.path, i)));
    if (hunks.length === 0) continue;
    parts.push(section.header, ...hunks);
    kept.push(hunks.length === section.hunks.length ? changed : { ...changed, ...lineCounts(hunks) });
  }
  const patchBytes = Buffer.concat(parts);
  return {
    patch: patchBytes.toString('utf8'),
    patchBytes,
    files: kept,
    omitted: diff.omitted,
    from: diff.from,
    to: diff.to,
    isEmpty: kept.length === 0,
  };
}

/**
 * The accepted hunks' bytes, in order. Dropping a hunk shifts the new-side start of every later
 * one by the lines it would have added (or removed); the old side is the same file either way.
 */
function keptHunks(hunks: readonly RawHunk[], keep: (index: number) => boolean): Buffer[] {
  const out: Buffer[] = [];
  let shift = 0;
  hunks.forEach((h, i) => {
    if (!keep(i)) {
      shift += h.newCount - h.oldCount;
      return;
    }
    out.push(shift === 0 ? h.bytes : movedHunk(h, h.newStart - shift));
  });
  return out;
}

/** The hunk with another new-side start; every other byte, the rest of its @@ line included, as it was. */
function movedHunk(h: RawHunk, newStart: number): Buffer {
  const { offset, length } = h.newStartAt;
  return Buffer.concat([h.bytes.subarray(0, offset), Buffer.from(String(Math.max(0, newStart)), 'latin1'), h.bytes.subarray(offset + length)]);
}

/** Lines added and removed by the kept hunks (a partly kept file's counts in SandboxDiff.files). */
function lineCounts(hunks: readonly Buffer[]): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const h of hunks) {
    // Every line after the @@ line starts with its marker.
    for (let at = h.indexOf(0x0a) + 1; at > 0 && at < h.length; at = h.indexOf(0x0a, at) + 1) {
      if (h[at] === 0x2b) additions++;
      else if (h[at] === 0x2d) deletions++;
    }
  }
  return { additions, deletions };
}

/** A file's sections: one, or two for a type change (git writes it as a deletion and an addition of the same path). */
interface FileSections {
  path: string;
  sections: RawSection[];
}

function groupByFile(sections: readonly RawSection[]): FileSections[] {
  const files = new Map<string, FileSections>();
  for (const s of sections) {
    // Paths are decoded as SandboxDiff.files decodes them (raw-changes.ts), so the two match.
    const path = escapedName(s.path);
    const file = files.get(path);
    if (file) file.sections.push(s);
    else files.set(path, { path, sections: [s] });
  }
  return [...files.values()];
}

/** Decided whole: no text hunks, or a type change (half of one would not apply). */
function isWhole(file: FileSections): boolean {
  return file.sections.length > 1 || file.sections[0].hunks.length === 0;
}

function decisionIds(file: FileSections): string[] {
  return isWhole(file) ? [hunkId(file.path, 0)] : file.sections[0].hunks.map((_, i) => hunkId(file.path, i));
}

function toPatchFile(file: FileSections): PatchFile {
  const whole = isWhole(file);
  const first = file.sections[0];
  const hunks = whole ? [] : first.hunks.map((h, i) => shownHunk(h, hunkId(file.path, i)));
  const status: PatchFileStatus =
    file.sections.length > 1 ? 'modified' : first.kind === 'renamed' ? 'renamed' : first.kind === 'copied' ? 'added' : first.kind;
  return {
    path: file.path,
    ...(first.oldPath && first.kind === 'renamed' ? { oldPath: escapedName(first.oldPath) } : {}),
    status,
    binary: file.sections.some((s) => s.binary),
    hunks,
    decisionIds: decisionIds(file),
  };
}

const utf8 = new TextDecoder('utf-8');

function shownHunk(h: RawHunk, id: string): PatchHunk {
  const text = utf8.decode(h.bytes);
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const [header, ...body] = lines;
  return { id, header: header, lines: body };
}
