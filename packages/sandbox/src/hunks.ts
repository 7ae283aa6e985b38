// Hunk-by-hunk review of a diff: the files and hunks a person decides on (with ids), and the diff
// cut down to the accepted hunks. The cut copies the patch's own bytes; only the new-side line
// numbers of a hunk's @@ line change (when earlier hunks of its file were dropped). Text is
// decoded for showing, never for applying: a file need not be UTF-8.
import { createHash } from 'node:crypto';
import type { ChangedFile, SandboxDiff } from './diff.js';
import { PatchFormatError, UnknownHunkError, SandboxError } from './errors.js';
import { parsePatch, type RawHunk, type RawSection } from './patch-parse.js';
import { escapedName } from './utf8-names.js';

export type PatchFileStatus = 'added' | 'modified' | 'deleted' | 'renamed';

/** A hunk as shown for review. */
export interface PatchHunk {
  /** What a decision on it is recorded under (see decision ids below). */
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
   * hunks (kept or dropped whole), one id for the whole change.
   */
  readonly decisionIds: readonly string[];
}

// Decision ids name content, not positions: `<path>#<old start>:<digest>` for a text hunk (the
// digest covers the path, where the hunk starts in the old file and its lines), `<path>#<digest>`
// for a file decided whole (the digest covers its whole change: modes, rename, binary data). A
// decision made on one version of a change therefore never selects another version of it: an id
// the sandbox's later diff would reuse for other lines simply is not there. Ids stay the same
// when other files, or other hunks of the file, change. The old start keeps a file's ids
// distinct (two hunks never start on the same line) whatever the short digest does; the bytes a
// review applies are guarded by comparing them whole (changedSinceReview), not by this digest.
const DIGEST_CHARS = 8;

function digest(...parts: Array<string | Buffer>): string {
  const hash = createHash('sha256');
  for (const p of parts) hash.update(p).update('\0');
  return hash.digest('hex').slice(0, DIGEST_CHARS);
}

/** A text hunk's id; the @@ line is left out but for the old start (the new start moves when earlier hunks change). */
function textHunkId(path: string, h: RawHunk): string {
  const body = h.bytes.subarray(h.bytes.indexOf(0x0a) + 1);
  return `${path}#${h.oldStart}:${digest(path, String(h.oldStart), body)}`;
}

/** The id of a file decided whole: its sections' bytes, header lines included. */
function wholeFileId(file: FileSections): string {
  return `${file.path}#${digest(file.path, ...file.sections.map((s) => s.bytes))}`;
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
  const ids = new Map(files.map((f) => [f, decisionIds(f)]));
  const known = new Set([...ids.values()].flat());
  const unknown = [...wanted].filter((id) => !known.has(id));
  if (unknown.length > 0) throw new UnknownHunkError(unknown);
  if ([...known].every((id) => wanted.has(id))) return diff;

  const parts: Buffer[] = [];
  const kept: ChangedFile[] = [];
  const byPath = new Map(diff.files.map((f) => [f.path, f]));
  for (const file of files) {
    const changed = byPath.get(file.path);
    if (!changed) throw new SandboxError('internal', `The patch changes ${file.path}, which the diff's file list does not name. Take the diff again.`);
    const fileIds = ids.get(file)!;
    if (isWhole(file)) {
      if (!wanted.has(fileIds[0])) continue;
      parts.push(...file.sections.map((s) => s.bytes));
      kept.push(changed);
      continue;
    }
    const section = file.sections[0];
    const hunks = keptHunks(section.hunks, (i) => wanted.has(fileIds[i]));
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
 * The files in which `accepted` (decision ids of `reviewed`) takes a change that `current`, the
 * same sandbox's diff taken now, no longer holds byte for byte: rewritten, reverted, given
 * another mode, or left out now. A review's decision is carried out on the reviewed bytes (see
 * selectHunks); this says whether those are still what the sandbox holds, so that a change made
 * after the review (a command still running, say) is shown before anything of that file is
 * applied. Files with nothing accepted, and files new in `current`, do not count: applying the
 * reviewed bytes leaves them where they are, and the next diff offers them. Without `accepted`
 * every file counts, new ones too: for a sandbox whose changes not applied are then dropped (a
 * child's, after its review), nothing may go that the user did not see.
 */
export function changedSinceReview(reviewed: SandboxDiff, current: SandboxDiff, accepted?: Iterable<string>): string[] {
  const wanted = accepted === undefined ? undefined : new Set(accepted);
  const before = new Map(groupByFile(parsePatch(reviewed.patchBytes)).map((f) => [f.path, f]));
  const now = new Map(groupByFile(parsePatch(current.patchBytes)).map((f) => [f.path, f]));
  const paths = wanted === undefined ? new Set([...before.keys(), ...now.keys()]) : [...before.values()].filter((f) => decisionIds(f).some((id) => wanted.has(id))).map((f) => f.path);
  return [...paths].filter((p) => !sameChange(before.get(p), now.get(p)));
}

function sameChange(a: FileSections | undefined, b: FileSections | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return Buffer.concat(a.sections.map((s) => s.bytes)).equals(Buffer.concat(b.sections.map((s) => s.bytes)));
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
  if (isWhole(file)) return [wholeFileId(file)];
  const ids = file.sections[0].hunks.map((h) => textHunkId(file.path, h));
  // git never writes two hunks starting on the same old line; a patch that does is not git's.
  if (new Set(ids).size !== ids.length) throw new PatchFormatError(`two hunks of ${file.path} start on the same line`);
  return ids;
}

function toPatchFile(file: FileSections): PatchFile {
  const whole = isWhole(file);
  const first = file.sections[0];
  const ids = decisionIds(file);
  const hunks = whole ? [] : first.hunks.map((h, i) => shownHunk(h, ids[i]));
  const status: PatchFileStatus =
    file.sections.length > 1 ? 'modified' : first.kind === 'renamed' ? 'renamed' : first.kind === 'copied' ? 'added' : first.kind;
  return {
    path: file.path,
    ...(first.oldPath && first.kind === 'renamed' ? { oldPath: escapedName(first.oldPath) } : {}),
    status,
    binary: file.sections.some((s) => s.binary),
    hunks,
    decisionIds: ids,
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
