import { allHunkIds, fileHunkIds, type ReviewDecision, type ReviewDiff } from '../review-diff.js';

/** One selectable line of the review: a file (decides all its hunks) or a hunk. */
export type ReviewEntry = { kind: 'file'; file: number } | { kind: 'hunk'; file: number; hunk: number; id: string };

export type Verdict = { accepted: true } | { accepted: false; reason: string };

/** What a rejection applies to. */
export type RejectTarget = { kind: 'all' } | { kind: 'entry'; index: number };

export interface ReviewState {
  diff: ReviewDiff;
  entries: ReviewEntry[];
  cursor: number;
  verdicts: Record<string, Verdict>;
  /** Typing the reason for a rejection. */
  reason: { target: RejectTarget; text: string } | null;
  /** A line for the footer (why finishing isn't possible yet). */
  message: string | null;
  done: boolean;
  /**
   * The first line of the shown hunk (see shownHunk) in view: a hunk longer than the screen is
   * read by scrolling, so nothing is accepted unseen. Back to 0 when another hunk is shown.
   */
  scroll: number;
  /**
   * The hunk last printed whole above the review (into the terminal's scrollback, where a hunk
   * of any length can be read, searched and copied), so the footer can point there.
   */
  shownInFull: { file: number; hunk: number } | null;
}

/** How far a scroll goes: a line, a page (the lines in view), or to either end. */
export type ScrollStep = 'line' | 'page' | 'end';

export type ReviewAction =
  | { type: 'move'; by: number }
  | { type: 'accept'; scope: 'entry' | 'all' }
  /** Starts typing a reason; the rejection is recorded when it is confirmed. */
  | { type: 'reject'; scope: 'entry' | 'all' }
  | { type: 'reason-input'; text: string }
  | { type: 'reason-backspace' }
  | { type: 'reason-confirm' }
  | { type: 'reason-cancel' }
  /** Esc on a review that can't be closed undecided (a child waits for it): say what to do. */
  | { type: 'needs-decision' }
  | { type: 'finish' }
  /** Scrolls the shown hunk; `window` is how many of its lines are in view. */
  | { type: 'scroll'; by: ScrollStep; dir: 1 | -1; window: number }
  /** Prints the shown hunk whole above the review (the view does; this records it). */
  | { type: 'show-in-full' };

export function initialReview(diff: ReviewDiff): ReviewState {
  const entries: ReviewEntry[] = [];
  diff.files.forEach((f, file) => {
    entries.push({ kind: 'file', file });
    fileHunkIds(f).forEach((id, hunk) => entries.push({ kind: 'hunk', file, hunk, id }));
  });
  return { diff, entries, cursor: 0, verdicts: {}, reason: null, message: null, done: false, scroll: 0, shownInFull: null };
}

export function reduceReview(s: ReviewState, a: ReviewAction): ReviewState {
  if (s.done) return s;
  switch (a.type) {
    case 'move':
      return withCursor({ ...s, message: null }, clamp(s.cursor + a.by, 0, s.entries.length - 1));
    case 'accept': {
      const ids = a.scope === 'all' ? allHunkIds(s.diff) : idsOf(s, s.cursor);
      return advance(decide(s, ids, { accepted: true }), a.scope);
    }
    case 'scroll': {
      const window = Math.max(1, a.window);
      const last = lastStart(shownLines(s).length, window);
      const from = Math.min(s.scroll, last);
      const step = a.by === 'line' ? 1 : a.by === 'page' ? window : last;
      return { ...s, scroll: clamp(from + a.dir * step, 0, last) };
    }
    case 'show-in-full':
      return shownLines(s).length > 0 ? { ...s, shownInFull: shownHunk(s) } : s;
    case 'reject':
      return { ...s, reason: { target: a.scope === 'all' ? { kind: 'all' } : { kind: 'entry', index: s.cursor }, text: '' }, message: null };
    case 'reason-input':
      return s.reason ? { ...s, reason: { ...s.reason, text: s.reason.text + a.text.replace(/[\r\n]+/g, ' ') } } : s;
    case 'reason-backspace':
      return s.reason ? { ...s, reason: { ...s.reason, text: s.reason.text.slice(0, -1) } } : s;
    case 'reason-cancel':
      return { ...s, reason: null };
    case 'needs-decision':
      return { ...s, message: 'A child thread waits for this decision: A accepts all of it, R rejects it (with a reason).' };
    case 'reason-confirm': {
      if (!s.reason) return s;
      const { target, text } = s.reason;
      const ids = target.kind === 'all' ? allHunkIds(s.diff) : idsOf(s, target.index);
      const next = decide({ ...s, reason: null }, ids, { accepted: false, reason: text.trim() });
      return advance(next, target.kind === 'all' ? 'all' : 'entry');
    }
    case 'finish': {
      const open = undecided(s).length;
      if (open > 0) return { ...s, message: `${open} ${open === 1 ? 'hunk' : 'hunks'} still undecided.` };
      return { ...s, done: true, message: null };
    }
  }
}

/** The decision handed back when the review is done. */
export function toDecision(s: ReviewState): ReviewDecision {
  const decision: ReviewDecision = { accepted: [], rejected: [] };
  for (const id of allHunkIds(s.diff)) {
    const v = s.verdicts[id];
    if (!v) continue;
    if (v.accepted) decision.accepted.push(id);
    else decision.rejected.push({ id, reason: v.reason });
  }
  return decision;
}

export function undecided(s: ReviewState): string[] {
  return allHunkIds(s.diff).filter((id) => !s.verdicts[id]);
}

/** The file the cursor is in (its hunks are the ones shown). */
export function currentFile(s: ReviewState): number {
  return s.entries[s.cursor]?.file ?? 0;
}

/** The hunk whose lines are shown: the focused one, or a file's first when its line is focused. */
export function shownHunk(s: ReviewState): { file: number; hunk: number } {
  const e = s.entries[s.cursor];
  return { file: e?.file ?? 0, hunk: e?.kind === 'hunk' ? e.hunk : 0 };
}

/** The lines of the shown hunk (none for a file without text hunks). */
export function shownLines(s: ReviewState): readonly string[] {
  const { file, hunk } = shownHunk(s);
  return s.diff.files[file]?.hunks[hunk]?.lines ?? [];
}

/** Whether the shown hunk is the one last printed whole above the review. */
export function isShownInFull(s: ReviewState): boolean {
  const shown = shownHunk(s);
  return s.shownInFull?.file === shown.file && s.shownInFull.hunk === shown.hunk;
}

/**
 * Lines of the shown hunk in view when `maxLines` is the room for them: all of a hunk that fits;
 * of a longer one two fewer, for the line saying how many are above and the footer saying where
 * the view is, so the review is no taller than with a short hunk.
 */
export function viewWindow(s: ReviewState, maxLines: number): number {
  return shownLines(s).length <= maxLines ? maxLines : Math.max(1, maxLines - 2);
}

/**
 * Which of the shown hunk's lines are in view with `window` lines of room: `start` (0-based) up
 * to `end` (exclusive) of `total`. The scroll is clamped here too: the room changes with the
 * terminal's size, not only through actions.
 */
export function hunkView(s: ReviewState, window: number): { start: number; end: number; total: number } {
  const total = shownLines(s).length;
  const room = Math.max(1, window);
  const start = clamp(s.scroll, 0, lastStart(total, room));
  return { start, end: Math.min(total, start + room), total };
}

/**
 * A file's decisions in a few words: "✓2 ✗1" once all are made, "1 undecided" or "✓1 · 2 of 3
 * undecided" before. Pieces, so the view can colour them.
 */
export function tallyParts(t: { accepted: number; rejected: number; total: number }): Array<{ kind: 'accepted' | 'rejected' | 'open'; text: string }> {
  const parts: Array<{ kind: 'accepted' | 'rejected' | 'open'; text: string }> = [];
  if (t.accepted > 0) parts.push({ kind: 'accepted', text: `✓${t.accepted}` });
  if (t.rejected > 0) parts.push({ kind: 'rejected', text: `✗${t.rejected}` });
  const open = t.total - t.accepted - t.rejected;
  if (open > 0) parts.push({ kind: 'open', text: open === t.total ? `${open} undecided` : `${open} of ${t.total} undecided` });
  return parts;
}

/** Accepted / rejected / total hunks of a file. */
export function fileTally(s: ReviewState, file: number): { accepted: number; rejected: number; total: number } {
  const ids = fileHunkIds(s.diff.files[file]);
  const accepted = ids.filter((id) => s.verdicts[id]?.accepted === true).length;
  const rejected = ids.filter((id) => s.verdicts[id]?.accepted === false).length;
  return { accepted, rejected, total: ids.length };
}

function idsOf(s: ReviewState, index: number): readonly string[] {
  const e = s.entries[index];
  if (!e) return [];
  return e.kind === 'hunk' ? [e.id] : fileHunkIds(s.diff.files[e.file]);
}

function decide(s: ReviewState, ids: readonly string[], v: Verdict): ReviewState {
  const verdicts = { ...s.verdicts };
  for (const id of ids) verdicts[id] = v;
  return { ...s, verdicts, message: null };
}

/** After a decision, go to the next entry still undecided (deciding is the common path). */
function advance(s: ReviewState, scope: 'entry' | 'all'): ReviewState {
  if (scope === 'all') return s;
  for (let i = s.cursor + 1; i < s.entries.length; i++) {
    const e = s.entries[i];
    if (e.kind === 'hunk' && !s.verdicts[e.id]) return withCursor(s, i);
  }
  return s;
}

/** The cursor at `cursor`; another hunk shown starts at its top. */
function withCursor(s: ReviewState, cursor: number): ReviewState {
  const before = shownHunk(s);
  const next = { ...s, cursor };
  const after = shownHunk(next);
  return before.file === after.file && before.hunk === after.hunk ? next : { ...next, scroll: 0 };
}

/** The last first line that still fills the view. */
function lastStart(total: number, window: number): number {
  return Math.max(0, total - window);
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}
