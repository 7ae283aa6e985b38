import type { HistoryMessage, RuntimeEvent, ToolDisplay } from '@infinity-code/runtime';
import type { Effort } from '@infinity-code/runtime/models';
import { replayHistory } from './history-items.js';
import { reduceRuntime } from './state-runtime.js';
import type { CommandApproval, ReviewRequest } from './controller.js';
import { shortId } from './format.js';
import { changesWaitLine, type QuitChoice } from '../pending-changes.js';
import { deepTerminalSafe } from '../terminal-safe.js';
import { flushLive, initialState, notice, pushItem, updateThread, type NoticeLevel, type PendingReview, type UiState } from './ui-state.js';

export * from './ui-state.js';

/** What the UI itself does to its state (as opposed to runtime events). */
export type UiAction =
  /** The user sent a message to the root thread. */
  | { type: 'ui:submit'; text: string }
  | { type: 'ui:notice'; level: NoticeLevel; text: string }
  /** `/new`: a fresh session with its own root thread. */
  | { type: 'ui:session'; sessionId: string; rootThreadId: string }
  | { type: 'ui:model'; model: string; contextWindow?: number }
  /** `/effort`: the level of the next completions; undefined for the model's default. */
  | { type: 'ui:effort'; effort: Effort | undefined }
  /** `/notes`: the model's notes folded after a few lines, or shown whole (the latest again, whole). */
  | { type: 'ui:notes' }
  /** The session finished opening in the background (the first frame doesn't wait for it). */
  | { type: 'ui:backend'; backend: string }
  /**
   * A resumed session's earlier transcript (the root's stored history), with its calls' display
   * lines by id, and what their tools gave UIs for their results (see resultDisplays).
   */
  | { type: 'ui:history'; messages: readonly HistoryMessage[]; displays?: Readonly<Record<string, string>>; results?: Readonly<Record<string, ToolDisplay>> }
  /** A diff to review (a child's report waits for it, or `/diff`); the title defaults from the thread. */
  | { type: 'ui:review-open'; review: ReviewRequest & { title?: string } }
  /** A review was decided (or failed); it leaves the queue. */
  | { type: 'ui:review-closed'; id: string }
  /** A command waits for the user's approval (the sandbox can't confine it). */
  | { type: 'ui:approval-open'; approval: CommandApproval }
  /** It was answered, or its call ended first. */
  | { type: 'ui:approval-closed'; id: string }
  | { type: 'ui:quit-armed'; armed: boolean }
  /** Quitting with changes the working tree has not received: ask what becomes of them. */
  | { type: 'ui:quit-ask'; files: string[] }
  /** The user stays after all. */
  | { type: 'ui:quit-cancel' }
  /** The session is being closed, the changes applied, kept or discarded first. */
  | { type: 'ui:leaving'; changes: QuitChoice }
  /** The root answered, and changes of the session wait for /diff. */
  | { type: 'ui:changes-waiting'; files: string[] }
  /** Files the user changed in the working tree since the sandboxes' base (the full list). */
  | { type: 'ui:user-edits'; paths: string[] }
  /** A hunk under review, printed whole above the review. */
  | { type: 'ui:hunk-in-full'; path: string; position: string; header: string; lines: readonly string[] };

function isUiAction(x: RuntimeEvent | UiAction): x is UiAction {
  return x.type.startsWith('ui:');
}

/**
 * The whole screen state as a function of what happened. Pure: no I/O, no clock: `now` is when
 * it happened (epoch ms), given by the store, for how long things have been running.
 */
export function reduce(s: UiState, event: RuntimeEvent | UiAction, now?: number): UiState {
  if (!isUiAction(event)) return reduceRuntime(s, deepTerminalSafe(event), now);
  // What the model, its commands and the repository's file names say never drives the terminal
  // (a stored history is shown as well); reviews and approvals keep their data exact, since what
  // is decided on them goes back to the session.
  return reduceUi(s, event.type === 'ui:history' || event.type === 'ui:notice' || event.type === 'ui:hunk-in-full' ? deepTerminalSafe(event) : event);
}

function reduceUi(s: UiState, a: UiAction): UiState {
  switch (a.type) {
    case 'ui:submit': {
      // The message ends whatever the root waits on (docs/architecture.md, *The slice*: user text interrupts a pending
      // call), so those rows finish above it, keeping the transcript in the order things happened.
      let next = flushLive(s);
      for (const r of next.running) {
        if (r.threadId !== s.rootThreadId || r.sync) continue;
        next = pushItem(next, { kind: 'tool', display: r.display, summary: 'ended by your message', status: 'interrupted' });
      }
      next = { ...next, running: next.running.filter((r) => r.threadId !== s.rootThreadId || r.sync) };
      return pushItem(next, { kind: 'user', text: a.text });
    }
    case 'ui:notice':
      return notice(s, a.level, a.text);
    case 'ui:session':
      return notice(
        {
          // A fresh state for the new session, keeping the id counter and the status figures.
          ...initialState({ ...s.status, rootThreadId: a.rootThreadId, pricing: s.pricing }),
          nextId: s.nextId,
          epoch: s.epoch + 1,
          // Same sandboxes, same base: the user's edits still differ from it.
          userEdited: s.userEdited,
          // The old session's commands still wait for an answer.
          approvals: s.approvals,
          status: { ...s.status, sessionId: a.sessionId, contextTokens: 0 },
        },
        'info',
        `New session ${a.sessionId}.`,
      );
    case 'ui:history':
      return replayHistory(s, a.messages, a.displays, a.results);
    case 'ui:backend':
      return { ...s, status: { ...s.status, backend: a.backend } };
    case 'ui:model':
      return notice(
        {
          ...s,
          status: {
            ...s.status,
            model: a.model,
            contextWindow: a.contextWindow ?? s.status.contextWindow,
            ...(s.status.cost === undefined && s.pricing.has(a.model) ? { cost: 0 } : {}),
          },
        },
        'info',
        `Model set to ${a.model}.`,
      );
    case 'ui:notes': {
      const full = !s.notesFull;
      const latest = full ? s.items.findLast((i) => i.kind === 'thinking') : undefined;
      const next = notice({ ...s, notesFull: full }, 'info', full ? "The model's notes are shown whole from now on (/notes folds them)." : "The model's notes are folded after a few lines from now on.");
      return latest?.kind === 'thinking' ? pushItem(next, { kind: 'thinking', text: latest.text, full: true }) : next;
    }
    case 'ui:effort': {
      const { effort: _, ...status } = s.status;
      return notice(
        { ...s, status: a.effort === undefined ? status : { ...status, effort: a.effort } },
        'info',
        a.effort === undefined ? "Effort set to the model's default." : `Effort set to ${a.effort}.`,
      );
    }
    case 'ui:review-open': {
      if (s.reviews.some((r) => r.id === a.review.id)) return s;
      const child = a.review.childThreadId;
      const label = s.threads.find((t) => t.id === child)?.label ?? (child ? `thread ${shortId(child)}` : 'a child thread');
      const review: PendingReview = { ...a.review, title: a.review.title ?? `Changes from ${label}` };
      const next = { ...s, reviews: [...s.reviews, review] };
      // The child is blocked on the human now; its row should say so.
      return child ? updateThread(next, child, (t) => ({ ...t, tool: 'waiting for your review', awaitingUser: true })) : next;
    }
    case 'ui:review-closed': {
      const child = s.reviews.find((r) => r.id === a.id)?.childThreadId;
      const next = { ...s, reviews: s.reviews.filter((r) => r.id !== a.id) };
      // Decided: the child goes on (its next events say with what).
      return child ? updateThread(next, child, ({ awaitingUser: _, ...t }) => ({ ...t, tool: undefined })) : next;
    }
    case 'ui:approval-open':
      if (s.approvals.some((q) => q.id === a.approval.id)) return s;
      return { ...s, approvals: [...s.approvals, a.approval] };
    case 'ui:approval-closed':
      return s.approvals.some((q) => q.id === a.id) ? { ...s, approvals: s.approvals.filter((q) => q.id !== a.id) } : s;
    case 'ui:quit-armed':
      return { ...s, quitArmed: a.armed };
    case 'ui:quit-ask':
      return { ...s, quitAsk: { files: a.files } };
    case 'ui:quit-cancel':
      return { ...s, quitAsk: null, quitArmed: false };
    case 'ui:leaving':
      return { ...s, quitAsk: null, leaving: a.changes };
    case 'ui:changes-waiting':
      return notice(s, 'info', changesWaitLine(a.files));
    case 'ui:user-edits':
      return { ...s, userEdited: a.paths };
    case 'ui:hunk-in-full':
      return pushItem(s, { kind: 'hunk', path: a.path, position: a.position, header: a.header, lines: a.lines });
  }
}
