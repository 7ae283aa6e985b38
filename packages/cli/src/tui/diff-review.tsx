import { Box, Text, useInput, type Key } from 'ink';
import {
  currentFile,
  fileTally,
  hunkView,
  initialReview,
  isShownInFull,
  reduceReview,
  shownHunk,
  tallyParts,
  toDecision,
  undecided,
  viewWindow,
  type ReviewAction,
  type ReviewState,
} from './diff-review-state.js';
import { diffStat, fileHunkIds, fileNotes, type LeftOut, type ReviewDecision, type ReviewDiff, type ReviewFile } from '../review-diff.js';
import { useLatestState } from './use-latest-state.js';
import { terminalSafe } from '../terminal-safe.js';

export type { ReviewDecision, ReviewDiff } from '../review-diff.js';

/** A hunk to print whole: which file and hunk, its `@@` line and all its lines. */
export interface HunkInFull {
  path: string;
  /** "hunk 2 of 3", or "" for a file's only hunk. */
  position: string;
  header: string;
  lines: readonly string[];
}

export interface DiffReviewProps {
  diff: ReviewDiff;
  title: string;
  /** Called once, when every hunk is decided and the user finishes. */
  onDecision: (decision: ReviewDecision) => void;
  isActive: boolean;
  /** Lines of the focused hunk to show; keeps the live region shorter than the terminal. */
  maxHunkLines?: number;
  /**
   * Prints a hunk whole above the review (`e`): a hunk longer than the screen, read there in the
   * terminal's scrollback. Without it, `e` is not offered.
   */
  onShowInFull?: (hunk: HunkInFull) => void;
  /** Said before anything is applied: files of this diff the user edited too (see editWarning). */
  warning?: { files: string[]; text: string };
  /** Esc closes the review undecided (nothing applied); without it, Esc says a decision is needed. */
  onDismiss?: () => void;
}

const STATUS_LETTER: Record<ReviewFile['status'], string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

function keyToAction(s: ReviewState, input: string, key: Key, window: number, canShowInFull: boolean): ReviewAction | 'dismiss' | null {
  if (s.reason) {
    if (key.return) return { type: 'reason-confirm' };
    if (key.escape) return { type: 'reason-cancel' };
    if (key.backspace || key.delete) return { type: 'reason-backspace' };
    if (key.ctrl || input === '') return null;
    return { type: 'reason-input', text: input };
  }
  // Scrolling the shown hunk: beside the moving keys (arrows, j/k), never in their place. J/K,
  // Space and b are there for hands that know a pager.
  const scroll = (by: 'line' | 'page' | 'end', dir: 1 | -1): ReviewAction => ({ type: 'scroll', by, dir, window });
  if ((key.shift && key.upArrow) || input === 'K') return scroll('line', -1);
  if ((key.shift && key.downArrow) || input === 'J') return scroll('line', 1);
  if (key.pageUp || input === 'b') return scroll('page', -1);
  if (key.pageDown || input === ' ') return scroll('page', 1);
  if (key.home || input === 'g') return scroll('end', -1);
  if (key.end || input === 'G') return scroll('end', 1);
  if (input === 'e' && canShowInFull) return { type: 'show-in-full' };
  if (key.upArrow || input === 'k') return { type: 'move', by: -1 };
  if (key.downArrow || input === 'j') return { type: 'move', by: 1 };
  if (input === 'a') return { type: 'accept', scope: 'entry' };
  if (input === 'r') return { type: 'reject', scope: 'entry' };
  if (input === 'A') return { type: 'accept', scope: 'all' };
  if (input === 'R') return { type: 'reject', scope: 'all' };
  if (key.return) return { type: 'finish' };
  if (key.escape) return 'dismiss';
  return null;
}

/** Review a diff file by file and hunk by hunk: accept, or reject with a reason. */
export function DiffReview({ diff, title, onDecision, isActive, maxHunkLines = 20, warning, onDismiss, onShowInFull }: DiffReviewProps) {
  const [get, update] = useLatestState<ReviewState>(() => initialReview(diff));
  useInput(
    (input, key) => {
      const before = get();
      let action = keyToAction(before, input, key, viewWindow(before, maxHunkLines), onShowInFull !== undefined);
      if (action === 'dismiss') {
        if (onDismiss) return onDismiss();
        action = { type: 'needs-decision' };
      }
      if (!action) return;
      const next = update((s) => reduceReview(s, action));
      if (action.type === 'show-in-full' && next.shownInFull) onShowInFull?.(hunkInFull(next));
      if (next.done && !before.done) onDecision(toDecision(next));
    },
    { isActive },
  );
  const s = get();
  const open = undecided(s).length;
  const view = hunkView(s, viewWindow(s, maxHunkLines));
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text bold>
        Review: {title} <Text color="gray">({diffStat(diff)})</Text>
      </Text>
      {warning ? <Text color="red">⚠ {warning.text}</Text> : null}
      <FileList state={s} edited={warning?.files ?? []} />
      <LeftOutList items={diff.leftOut ?? []} />
      <Hunks state={s} view={view} />
      {s.reason ? (
        <Text>
          <Text color="red">Reason for rejecting {targetName(s)}: </Text>
          {s.reason.text}
          <Text inverse> </Text>
          <Text dimColor> (Enter to confirm, Esc to cancel)</Text>
        </Text>
      ) : (
        <Text dimColor>
          ↑↓ move · a accept · r reject · A accept all · R reject all · Enter finish{onDismiss ? ' · Esc close' : ''}
          {open > 0 ? ` · ${open} undecided` : ' · all decided'}
        </Text>
      )}
      <ScrollFooter view={view} canShowInFull={onShowInFull !== undefined} shownInFull={isShownInFull(s)} />
      {s.message ? <Text color="yellow">{s.message}</Text> : null}
    </Box>
  );
}

function FileList({ state, edited }: { state: ReviewState; edited: string[] }) {
  return (
    <Box flexDirection="column" marginTop={1}>
      {state.diff.files.map((f, i) => {
        const t = fileTally(state, i);
        const focused = state.entries[state.cursor]?.kind === 'file' && state.entries[state.cursor]?.file === i;
        const notes = fileNotes(f);
        return (
          <Text key={f.path}>
            <Text color="cyan">{focused ? '▸ ' : '  '}</Text>
            <Text bold={focused}>
              {STATUS_LETTER[f.status]} {terminalSafe(f.path)}
            </Text>
            {notes.length > 0 ? <Text color="magenta">  {notes.join(' · ')}</Text> : null}
            <Text color="gray">
              {tallyParts(t).map((p) => (
                <Text key={p.kind} color={p.kind === 'accepted' ? 'green' : p.kind === 'rejected' ? 'red' : 'gray'}>
                  {'  '}
                  {p.text}
                </Text>
              ))}
            </Text>
            {edited.includes(f.path) ? <Text color="red">  ✎ edited by you</Text> : null}
          </Text>
        );
      })}
    </Box>
  );
}

/** Changes the agent made that the diff leaves out: listed, never decided on or applied. */
function LeftOutList({ items }: { items: LeftOut[] }) {
  if (items.length === 0) return null;
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text color="red">Not part of this diff (never applied):</Text>
      {items.map((l) => (
        <Text key={l.path}>
          {'  ⊘ '}
          {terminalSafe(l.path)}
          <Text color="gray"> — left out: {l.reason}</Text>
        </Text>
      ))}
    </Box>
  );
}

/** Where a hunk longer than the view is scrolled to, and the keys that scroll it or show it all. */
function ScrollFooter({ view, canShowInFull, shownInFull }: { view: HunkView; canShowInFull: boolean; shownInFull: boolean }) {
  if (view.total <= view.end - view.start) return null;
  return (
    <Text dimColor>
      lines {view.start + 1}–{view.end} of {view.total} · ⇧↑↓ line · PgUp/PgDn page · g/G top/bottom
      {canShowInFull ? (shownInFull ? ' · shown whole above (e again)' : ' · e show all above') : ''}
    </Text>
  );
}

/** The hunks of the file under the cursor; only the focused one is expanded. */
function Hunks({ state, view }: { state: ReviewState; view: HunkView }) {
  const fileIndex = currentFile(state);
  const file = state.diff.files[fileIndex];
  if (!file) return null;
  const notes = fileNotes(file);
  const entry = state.entries[state.cursor];
  const focusedHunk = entry?.kind === 'hunk' ? entry.hunk : 0;
  const ids = fileHunkIds(file);
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text underline>{terminalSafe(file.path)}</Text>
      {ids.map((id, i) => {
        const hunk = file.hunks[i];
        const v = state.verdicts[id];
        const focused = entry?.kind === 'hunk' && entry.hunk === i;
        const lines = hunk?.lines ?? [];
        return (
          <Box key={id} flexDirection="column">
            <Text>
              <Text color="cyan">{focused ? '▸ ' : '  '}</Text>
              {v ? v.accepted ? <Text color="green">✓ </Text> : <Text color="red">✗ </Text> : <Text color="gray">· </Text>}
              <Text color="cyan">{hunk ? hunk.header : `(no text changes: ${notes.length > 0 ? notes.join(', ') : file.status})`}</Text>
              {v && !v.accepted && v.reason ? <Text color="gray"> — {v.reason}</Text> : null}
            </Text>
            {i === focusedHunk ? <HunkLines lines={lines} view={view} /> : null}
          </Box>
        );
      })}
    </Box>
  );
}

function HunkLines({ lines, view }: { lines: readonly string[]; view: HunkView }) {
  const shown = lines.slice(view.start, view.end);
  return (
    <Box flexDirection="column" paddingLeft={4}>
      {view.start > 0 ? <Text dimColor>… {view.start} more lines above</Text> : null}
      {shown.map((l, i) => (
        <Text key={view.start + i} color={l.startsWith('+') ? 'green' : l.startsWith('-') ? 'red' : undefined} dimColor={l.startsWith(' ')}>
          {l === '' ? ' ' : terminalSafe(l)}
        </Text>
      ))}
      {lines.length > view.end ? <Text dimColor>… {lines.length - view.end} more lines</Text> : null}
    </Box>
  );
}

type HunkView = ReturnType<typeof hunkView>;

/** The shown hunk, whole, to print above the review. */
function hunkInFull(s: ReviewState): HunkInFull {
  const { file, hunk } = shownHunk(s);
  const f = s.diff.files[file];
  const h = f.hunks[hunk];
  return { path: f.path, position: f.hunks.length > 1 ? `hunk ${hunk + 1} of ${f.hunks.length}` : '', header: h.header, lines: h.lines };
}

function targetName(s: ReviewState): string {
  const target = s.reason?.target;
  if (!target || target.kind === 'all') return 'the whole diff';
  const e = s.entries[target.index];
  if (!e) return 'this change';
  const file = s.diff.files[e.file];
  return e.kind === 'file' ? terminalSafe(file.path) : `${terminalSafe(file.path)} hunk ${e.hunk + 1}`;
}
