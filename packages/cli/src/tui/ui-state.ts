import { ZERO_USAGE, type Usage } from '@infinity-code/runtime/messages';
import type { Effort } from '@infinity-code/runtime/models';
import type { CommandApproval, ReviewRequest, TuiInfo } from './controller.js';
import type { QuitChoice } from '../pending-changes.js';
import { BUILT_IN_PRICING, type Pricing } from '../pricing.js';

export type NoticeLevel = 'info' | 'error' | 'retry' | 'compaction';

/** A finished transcript entry: never changes once added (it is printed once, in <Static>). */
export type TranscriptItem =
  | { kind: 'user'; id: number; text: string }
  | { kind: 'assistant'; id: number; text: string }
  /** The model's progress notes between its tool calls (its thinking, where the API shows it); `full`: not folded. */
  | { kind: 'thinking'; id: number; text: string; full?: boolean }
  | {
      kind: 'tool';
      id: number;
      display: string;
      summary: string;
      status: 'ok' | 'error' | 'interrupted';
      /** What the call changed, as a unified diff (file edits). */
      diff?: string;
      /** A few lines of its output worth showing (the end of a command's). */
      output?: string[];
    }
  /**
   * A child's report injected into the root, in the child's words (and the reviewer's note);
   * `closed`: the child ended with it; `diffStat` when it carried a diff to review.
   */
  | { kind: 'report'; id: number; from: string; text: string; closed?: boolean; diffStat?: string }
  /** Subscription output (a background command) injected into the root; `summary` e.g. its exit status. */
  | { kind: 'event'; id: number; source: string; lines: string[]; summary?: string }
  | { kind: 'notice'; id: number; level: NoticeLevel; text: string }
  /** A hunk under review printed whole (`e` in the review): read in the terminal's scrollback. */
  | { kind: 'hunk'; id: number; path: string; position: string; header: string; lines: readonly string[] };

/** A tool call awaiting its result. */
export interface RunningTool {
  callId: string;
  /** The tool's name. */
  name: string;
  threadId: string;
  display: string;
  /** Synchronous calls run inside the slice; only asynchronous ones outlive it. */
  sync: boolean;
  /** A wait (sleep): new input ends it, as it is meant to end. */
  passive?: boolean;
  /** The last lines of its output so far (commands): a live tail. */
  tail: string[];
  /** The tool said the work is over; its result may still be on its way. */
  ended?: boolean;
  /** When its call was made (epoch ms), where the store has a clock. */
  startedAt?: number;
}

/** A command that went on in the background (its call answered "still running") and hasn't ended. */
export interface BackgroundCommand {
  callId: string;
  threadId: string;
  display: string;
  tail: string[];
  /** When its call was made (epoch ms), where the store has a clock. */
  startedAt?: number;
}

/** Lines of live output kept per running command. */
export const TAIL_LINES = 3;

/** `tail` with `text`'s lines added, keeping the last TAIL_LINES non-empty ones. */
export function addTail(tail: string[], text: string): string[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.length === 0 ? tail : [...tail, ...lines].slice(-TAIL_LINES);
}

/** A live thread other than the root. */
export interface ChildThread {
  id: string;
  parentId: string;
  kind: 'child' | 'event' | 'compaction';
  label: string;
  depth: number;
  /** A slice of this thread is running. */
  working: boolean;
  /** Display line of the call it is running or waiting on. */
  tool?: string;
  /** Between slices, what it waits on: a wait (sleep) or work under way. */
  waiting?: 'passive' | 'active';
  /** How its last slice ended, when it isn't working. */
  outcome?: string;
  /** Its report waits for the user's review: nothing runs for it meanwhile. */
  awaitingUser?: boolean;
}

export interface StatusInfo {
  model: string;
  /** The effort sent with each completion; unset: none, the model's default applies. */
  effort?: Effort;
  contextWindow: number;
  backend: string;
  sessionId: string;
  /** Summed over every completion of every thread since the UI started (a /new keeps counting). */
  usage: Usage;
  /**
   * Estimated USD of the completions whose model has a price, each priced with its own model;
   * undefined while none had one and the current model has none either.
   */
  cost?: number;
  /** Some completion's model had no price: `cost` leaves it out. */
  costPartial?: boolean;
  /** Input tokens of the root's last completion. */
  contextTokens: number;
}

/** A review to show, with a title for its header. */
export interface PendingReview extends ReviewRequest {
  title: string;
}

export interface UiState {
  rootThreadId: string;
  /** Prices per model (the model table with the config's settings). */
  pricing: Pricing;
  /** Bumped on /new: the transcript's <Static> is keyed by it so it starts over. */
  epoch: number;
  items: TranscriptItem[];
  nextId: number;
  /** Root text streaming now (not yet a finished item). */
  liveText: string;
  /** Root thinking streaming now: null when no thinking block is open ('' while it has no text). */
  liveThinking: string | null;
  /** `/notes`: the model's notes shown whole, not folded after a few lines. */
  notesFull: boolean;
  /** A slice of the root runs. */
  busy: boolean;
  /** When the root's current completion began (epoch ms), where the store has a clock. */
  completionSince?: number;
  /** The model API has sent nothing since then (epoch ms) for a while, in the root's completion. */
  silentSince?: number;
  running: RunningTool[];
  /** Background commands of every thread, oldest first. */
  background: BackgroundCommand[];
  threads: ChildThread[];
  /** Recently closed threads (bounded): late events of theirs must not bring a row back. */
  closedThreads: string[];
  /** Display lines of the root's calls, to name the output of its background commands. */
  rootCalls: Record<string, string>;
  status: StatusInfo;
  /** Diffs awaiting review, oldest first; the first one is on screen. */
  reviews: PendingReview[];
  /** Commands awaiting the user's yes or no, oldest first; the first one is on screen (before reviews). */
  approvals: CommandApproval[];
  /** Ctrl+C was pressed once: the next press quits. */
  quitArmed: boolean;
  /** Quitting, asked what becomes of these changes (not in the working tree yet). */
  quitAsk: { files: string[] } | null;
  /** Leaving, with the changes applied, kept or discarded: the session is being closed. */
  leaving: QuitChoice | null;
  /** Files the user changed in the working tree since the sandboxes' base was taken. */
  userEdited: string[];
}

export function initialState(info: TuiInfo): UiState {
  return {
    rootThreadId: info.rootThreadId ?? info.sessionId,
    pricing: info.pricing ?? BUILT_IN_PRICING,
    epoch: 0,
    items: [],
    nextId: 1,
    liveText: '',
    liveThinking: null,
    notesFull: false,
    busy: false,
    running: [],
    background: [],
    threads: [],
    closedThreads: [],
    rootCalls: {},
    status: {
      model: info.model,
      ...(info.effort !== undefined ? { effort: info.effort } : {}),
      contextWindow: info.contextWindow,
      backend: info.backend,
      sessionId: info.sessionId,
      usage: ZERO_USAGE,
      ...((info.pricing ?? BUILT_IN_PRICING).has(info.model) ? { cost: 0 } : {}),
      contextTokens: 0,
    },
    reviews: [],
    approvals: [],
    quitArmed: false,
    quitAsk: null,
    leaving: null,
    userEdited: [],
  };
}

type NewItem = TranscriptItem extends infer T ? (T extends { id: number } ? Omit<T, 'id'> : never) : never;

export function pushItem(s: UiState, item: NewItem): UiState {
  return { ...s, items: [...s.items, { ...item, id: s.nextId }], nextId: s.nextId + 1 };
}

export function notice(s: UiState, level: NoticeLevel, text: string): UiState {
  return pushItem(s, { kind: 'notice', level, text });
}

/** The root's streamed thinking and text become finished items (notes first, as they came). */
export function flushLive(s: UiState): UiState {
  const t = flushThinking(s);
  if (t.liveText.trim() === '') return t.liveText === '' ? t : { ...t, liveText: '' };
  return { ...pushItem(t, { kind: 'assistant', text: t.liveText.trimEnd() }), liveText: '' };
}

/** A thinking block ended: its notes, if it showed any, join the transcript. */
export function flushThinking(s: UiState): UiState {
  if (s.liveThinking === null) return s;
  const text = s.liveThinking.trim();
  return { ...(text === '' ? s : pushItem(s, { kind: 'thinking', text, ...(s.notesFull && { full: true }) })), liveThinking: null };
}

export function updateThread(s: UiState, id: string, f: (t: ChildThread) => ChildThread): UiState {
  return { ...s, threads: s.threads.map((t) => (t.id === id ? f(t) : t)) };
}
