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
}

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
  | { type: 'finish' };

export function initialReview(diff: ReviewDiff): ReviewState {
  const entries: ReviewEntry[] = [];
  diff.files.forEach((f, file) => {
    entries.push({ kind: 'file', file });
    fileHunkIds(f).forEach((id, hunk) => entries.push({ kind: 'hunk', file, hunk, id }));
  });
  return { diff, entries, cursor: 0, verdicts: {}, reason: null, message: null, done: false };
}

export function reduceReview(s: ReviewState, a: ReviewAction): ReviewState {
  if (s.done) return s;
  switch (a.type) {
    case 'move':
      return { ...s, cursor: clamp(s.cursor + a.by, 0, s.entries.length - 1), message: null };
    case 'accept': {
      const ids = a.scope === 'all' ? allHunkIds(s.diff) : idsOf(s, s.cursor);
      return advance(decide(s, ids, { accepted: true }), a.scope);
    }
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
    if (e.kind === 'hunk' && !s.verdicts[e.id]) return { ...s, cursor: i };
  }
  return s;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}
