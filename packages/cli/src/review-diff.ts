// The shape of a diff the TUI can review, and the decision it hands back. The sandbox produces
// the diff (as a child's report attachment, or the root's accumulated diff for `/diff`); the TUI
// only knows this plain data, so it stays independent of git and of the sandbox package. Outside
// tui/ because headless runs review too (everything accepted) and must not load the UI.

export type FileStatus = 'added' | 'modified' | 'deleted' | 'renamed';

export interface ReviewHunk {
  /** The `@@ -a,b +c,d @@` line. */
  header: string;
  /** Unified diff body lines, each starting with ' ', '+', '-' or '\'. */
  lines: string[];
}

export interface ReviewFile {
  path: string;
  status: FileStatus;
  hunks: ReviewHunk[];
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

/** What the human decided, by hunk id (see `hunkId`). Every hunk is in exactly one list. */
export interface ReviewDecision {
  accepted: string[];
  rejected: Array<{ id: string; reason: string }>;
}

/**
 * A hunk's id: `<path>#<index>`. A file with no textual hunks (binary, pure rename, empty file)
 * still gets one decision, under `<path>#0`, so every change can be accepted or rejected.
 */
export function hunkId(path: string, index: number): string {
  return `${path}#${index}`;
}

/** The ids a file's decisions are recorded under. */
export function fileHunkIds(file: ReviewFile): string[] {
  const n = Math.max(1, file.hunks.length);
  return Array.from({ length: n }, (_, i) => hunkId(file.path, i));
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
        optionalString(file.oldMode) &&
        optionalString(file.newMode) &&
        optionalString(file.linkTarget) &&
        Array.isArray(file.hunks) &&
        file.hunks.every(
          (h: unknown) =>
            typeof h === 'object' &&
            h !== null &&
            typeof (h as ReviewHunk).header === 'string' &&
            Array.isArray((h as ReviewHunk).lines) &&
            (h as ReviewHunk).lines.every((l) => typeof l === 'string'),
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
