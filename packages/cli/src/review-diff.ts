// The shape of a diff the TUI can review, and the decision it hands back. The sandbox package
// reads the diff into files and hunks (patchFiles) and cuts it down to the accepted hunks
// (selectHunks); the TUI gets that reading as plain data, ids included, and never computes an id
// or touches patch bytes itself. Only types come from the sandbox: its code is not loaded before
// the first frame (see run-tui.ts). Outside tui/ because headless runs review too (everything
// accepted) and must not load the UI.
import type { PatchFile, PatchHunk } from '@infinity-code/sandbox';

export type FileStatus = PatchFile['status'];

/** A hunk: its id, its `@@ -a,b +c,d @@` line and its lines (' ', '+', '-' or '\' first), decoded for showing. */
export type ReviewHunk = Pick<PatchHunk, 'id' | 'header' | 'lines'>;

export interface ReviewFile extends Pick<PatchFile, 'path' | 'status' | 'decisionIds'> {
  hunks: readonly ReviewHunk[];
  /** Git modes of both sides, when known; a change between them is shown (see fileNotes). */
  oldMode?: string;
  newMode?: string;
  /** Where the file points after the change, when it is a symlink then. */
  linkTarget?: string;
}

/** A change the agent made that is not part of the diff (it is never applied), and why. */
export interface LeftOut {
  path: string;
  reason: string;
}

export interface ReviewDiff {
  files: ReviewFile[];
  /** Shown with the diff, never decided on. */
  leftOut?: LeftOut[];
}

/** What the human decided, by decision id (see ReviewFile.decisionIds). Every id is in exactly one list. */
export interface ReviewDecision {
  accepted: string[];
  rejected: Array<{ id: string; reason: string }>;
}

/**
 * A decision that was not carried out because, in files it accepts changes in, the sandbox holds
 * other changes now than the ones reviewed (a command rewrote them after the review was shown).
 * Nothing was applied. `fresh` is the diff as it is now, for the user to review again; null when
 * nothing is left to review.
 */
export class ReviewChangedError extends Error {
  constructor(
    readonly files: readonly string[],
    readonly fresh: ReviewDiff | null,
  ) {
    const one = files.length === 1;
    const what = one ? files[0] : `${files.slice(0, -1).join(', ')} and ${files.at(-1)}`;
    super(
      `${what} changed since you reviewed ${one ? 'it' : 'them'}: nothing was applied. ` +
        (fresh ? `Review ${one ? 'it' : 'them'} again as ${one ? 'it is' : 'they are'} now.` : 'The changes you reviewed are gone: nothing is left to apply.'),
    );
    this.name = 'ReviewChangedError';
  }
}

/**
 * The ids a file's decisions are recorded under: one per hunk, in order; a file with no text
 * hunks (binary, mode change, pure rename, empty file) has one, so every change can be decided.
 */
export function fileHunkIds(file: ReviewFile): readonly string[] {
  return file.decisionIds;
}

export function allHunkIds(diff: ReviewDiff): string[] {
  return diff.files.flatMap(fileHunkIds);
}

const STATUSES: ReadonlySet<string> = new Set(['added', 'modified', 'deleted', 'renamed']);

const SYMLINK = '120000';

/**
 * What a file's line says beyond its path and hunks: an executable bit or type that changed,
 * where a symlink points. Hunks do not show either, and both matter before applying.
 */
export function fileNotes(file: ReviewFile): string[] {
  const notes: string[] = [];
  if (file.linkTarget !== undefined) notes.push(`symlink → ${file.linkTarget}`);
  const { oldMode, newMode } = file;
  if (oldMode !== undefined && newMode !== undefined && oldMode !== newMode) notes.push(`mode ${oldMode} → ${newMode}`);
  else if (oldMode === undefined && newMode !== undefined && newMode !== '100644' && newMode !== SYMLINK) notes.push(`mode ${newMode}`);
  return notes;
}

const optionalString = (v: unknown) => v === undefined || typeof v === 'string';
const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** Attachments are `unknown` in the runtime: check the shape before showing a review. */
export function isReviewDiff(value: unknown): value is ReviewDiff {
  if (typeof value !== 'object' || value === null) return false;
  const { files, leftOut } = value as { files?: unknown; leftOut?: unknown };
  const leftOutOk =
    leftOut === undefined ||
    (Array.isArray(leftOut) &&
      leftOut.every((l: unknown) => typeof l === 'object' && l !== null && typeof (l as LeftOut).path === 'string' && typeof (l as LeftOut).reason === 'string'));
  return (
    leftOutOk &&
    Array.isArray(files) &&
    files.every((f: unknown) => {
      if (typeof f !== 'object' || f === null) return false;
      const file = f as Record<string, unknown>;
      return (
        typeof file.path === 'string' &&
        typeof file.status === 'string' &&
        STATUSES.has(file.status) &&
        strings(file.decisionIds) &&
        (file.decisionIds).length > 0 &&
        optionalString(file.oldMode) &&
        optionalString(file.newMode) &&
        optionalString(file.linkTarget) &&
        Array.isArray(file.hunks) &&
        file.hunks.every(
          (h: unknown) =>
            typeof h === 'object' &&
            h !== null &&
            typeof (h as ReviewHunk).id === 'string' &&
            typeof (h as ReviewHunk).header === 'string' &&
            strings((h as ReviewHunk).lines),
        )
      );
    })
  );
}

/** "2 files, +10 -3" */
export function diffStat(diff: ReviewDiff): string {
  let added = 0;
  let removed = 0;
  for (const f of diff.files) {
    for (const h of f.hunks) {
      for (const l of h.lines) {
        if (l.startsWith('+')) added++;
        else if (l.startsWith('-')) removed++;
      }
    }
  }
  const files = diff.files.length === 1 ? '1 file' : `${diff.files.length} files`;
  return `${files}, +${added} -${removed}`;
}
