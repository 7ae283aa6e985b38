import type { InputMessage } from './input.js';
import type { HistoryMessage, ToolResultBlock, Usage } from './messages.js';
import type { ToolCall } from './tool.js';

/**
 * One call of the thread's latest reply. The calls of a reply form a batch that stays on the
 * thread until every call has its result; then the results go to the model together.
 */
export interface PendingCall extends ToolCall {
  /** True once handed to the tool; a restart never dispatches it again. */
  dispatched: boolean;
  /** Its result, once in (kept here until the whole batch is answered). */
  result?: ToolResultBlock;
  /**
   * A call of the parent's reply that a child inherited with it: the parent ran it, and the
   * child only receives a result saying so (its own spawn call's result is its instructions).
   */
  inherited?: boolean;
}

export type ThreadStatus = 'open' | 'closed';

/** Why a thread exists: spawned by the model, to handle one event, or to compact its parent. */
export type ThreadKind = 'root' | 'child' | 'event' | 'compaction';

export interface Subscription {
  callId: string;
  name: string;
  input: Record<string, unknown>;
}

export interface CompactionSummary {
  /** Own messages [0, upTo) (and everything inherited) are what the summary was written from. */
  upTo: number;
  text: string;
  /**
   * Own messages [keepFrom, upTo) stay in the view after the summary as they were (the latest
   * turns); the ones before are replaced by the summary and the verbatim record the view builds
   * from them (the user's own messages). Unset in summaries stored before it existed: those
   * replace everything before `upTo` and carry no record, and are shown exactly as they were.
   */
  keepFrom?: number;
  /**
   * The owner's message count when it switched to the summary (applySummary); unset until then,
   * and its own view ignores the summary. Turns in [upTo, appliedAt) were made before the
   * switch: their thinking is bound to the replaced prefix, so the view leaves it out.
   */
  appliedAt?: number;
}

export interface NewThread {
  id: string;
  parentId: string;
  kind: Exclude<ThreadKind, 'root'>;
  /** The parent's call this thread hangs off (spawn call, or the subscription's call). */
  spawnCallId: string;
  /** The parent's own messages [0, cutoff) are inherited. */
  cutoff: number;
  /** The inherited calls the child's first inputs answer (the parent's spawning reply). */
  batch: PendingCall[];
  /** Rows written into the child's own history at creation (event and compaction seeds). */
  seed: HistoryMessage[];
}

export interface Timer {
  threadId: string;
  callId: string;
  dueAt: number;
}

export interface ThreadRecord {
  id: string;
  /** Root first, this thread last. */
  stack: string[];
  kind: ThreadKind;
  parentId: string | null;
  spawnCallId: string | null;
  /** The parent's own messages [0, cutoff) are inherited (0 for a root). */
  cutoff: number;
  status: ThreadStatus;
  subscriptions: Subscription[];
  /** Inputs wait in the durable queue until the batch's active calls are answered. */
  hasDeferred: boolean;
  /** A compaction child is summarising this thread. */
  compacting: boolean;
  /** The calls of the latest reply while any of them waits for its result; empty otherwise. */
  batch: PendingCall[];
  /** Completions run by this thread (for budgets and displays). */
  completions: number;
  usage: Usage;
  /** Input tokens of the latest completion (context fill). */
  contextTokens: number;
  /** Number of messages stored for this thread itself (not inherited ones). */
  messageCount: number;
}

export interface LoadedThread {
  record: ThreadRecord;
  /** Everything the model sees, inherited prefix (or summary) included. */
  history: HistoryMessage[];
  /** history[ownOffset] is the thread's own message number `ownFrom` (later ones follow). */
  ownOffset: number;
  ownFrom: number;
}

/** Conversation history: append-only turns per thread. */
export interface ConversationStore {
  loadThread(threadId: string): Promise<LoadedThread | undefined>;
  /**
   * The thread's record alone (parent, stack, status...), without reading its messages: for
   * hosts that need to know where a thread hangs, which loading its whole history would cost.
   */
  threadRecord(threadId: string): Promise<ThreadRecord | undefined>;
  threadExists(threadId: string): Promise<boolean>;
  /** Creates a root thread if it doesn't exist yet. */
  ensureRootThread(threadId: string): Promise<void>;
  /** Creates a child thread (no-op if the id exists: spawning is idempotent by id). */
  createThread(spec: NewThread): Promise<void>;
  /** Store a summary for the thread; loads substitute it once it is applied. */
  saveSummary(threadId: string, summary: Pick<CompactionSummary, 'upTo' | 'text' | 'keepFrom'>): Promise<void>;
  /** The thread switches to its latest summary from now on (see CompactionSummary.appliedAt). */
  applySummary(threadId: string): Promise<void>;
  closeThread(threadId: string): Promise<void>;
  /** Open threads under the same root (budgets). */
  countOpenThreads(rootId: string): Promise<number>;
}

/**
 * Which threads a recovery query concerns: those whose root is listed; undefined means all. A
 * process running some sessions of a shared store must not pick up another session's work.
 */
export type RootFilter = readonly string[] | undefined;

/** Processed input ids and per-thread state. */
export interface StateStore {
  /** The subset of `ids` already processed by `threadId`. */
  processedIds(threadId: string, ids: readonly string[]): Promise<Set<string>>;
  markDispatched(threadId: string, callId: string): Promise<void>;
  /** Every call still waiting for its result, with its thread: for recovery after a restart. */
  threadsWithPendingCalls(roots?: RootFilter): Promise<Array<{ threadId: string; call: PendingCall }>>;
  /** Active subscriptions of open threads: for resuming them after a restart. */
  activeSubscriptions(roots?: RootFilter): Promise<Array<{ thread: ThreadRecord; subscription: Subscription }>>;
  addTimer(timer: Timer): Promise<void>;
  /** The earliest timer, if any (one scheduler polls it; no timer per thread). */
  nextTimer(roots?: RootFilter): Promise<Timer | undefined>;
  /**
   * Atomically turns every timer due at `now` into a queued tool result for its call and removes
   * it. Returns the inputs enqueued.
   */
  fireTimers(now: number, result: (t: Timer) => InputMessage, roots?: RootFilter): Promise<InputMessage[]>;
}

/** The durable input queue: what was enqueued survives a crash until a slice consumes it. */
export interface InputQueue {
  /**
   * Durably enqueue inputs. Returns, per input, whether it was new; an id already queued or
   * processed for the same thread is a duplicate and is not stored again. Inputs for unknown
   * threads are refused (false) unless they are user text, which creates a root thread.
   */
  enqueue(inputs: readonly InputMessage[]): Promise<boolean[]>;
  /** Every input enqueued and not yet consumed, in arrival order. */
  pendingInputs(roots?: RootFilter): Promise<InputMessage[]>;
  /** One thread's unconsumed inputs, in arrival order (deferred ones included). */
  pendingInputsFor(threadId: string): Promise<InputMessage[]>;
}

/** Everything one slice (or one step of it) makes durable, in one transaction. */
export interface SliceCommit {
  threadId: string;
  append: HistoryMessage[];
  /** Input ids consumed by this slice: marked processed and removed from the queue. */
  consumed: string[];
  batch: PendingCall[];
  subscriptions: Subscription[];
  hasDeferred: boolean;
  compacting: boolean;
  /** Durably queue these (deferred inputs that came from outside the queue, in step mode). */
  enqueue: InputMessage[];
  /** Completions run since the last commit (added to the thread's count). */
  completions: number;
  /** Usage since the last commit (added to the thread's total). */
  usage: Usage;
  contextTokens: number;
  /**
   * Each completion since the last commit with the model that ran it, stored per completion so
   * displays can price each with its own model (a /model switch, a child on another model).
   * Absent means none.
   */
  completionUsage?: CompletionUsage[];
}

/** One completion's tokens and the model the slice asked for. */
export interface CompletionUsage {
  model: string;
  usage: Usage;
}

/** A thread's usage with one model: what `usageByThread` lists. */
export interface ThreadUsage {
  threadId: string;
  kind: ThreadKind;
  /**
   * The model the completions ran on; UNRECORDED_MODEL for usage the thread's totals hold
   * without a per-completion record (a store written before per-completion usage existed).
   */
  model: string;
  completions: number;
  usage: Usage;
}

/** The model of usage a thread's totals hold but no per-completion record accounts for. */
export const UNRECORDED_MODEL = '(unrecorded)';

/** Per-thread, per-model usage for displays (cost breakdowns); not used by slices. */
export interface UsageStore {
  /**
   * Every thread under `rootId` (the root included) that ran completions, one entry per model
   * it used: threads in creation order, models in order of first use.
   */
  usageByThread(rootId: string): Promise<ThreadUsage[]>;
}

export interface RuntimeStore extends ConversationStore, StateStore, InputQueue, UsageStore {
  /** Durable when the promise resolves (a group commit may bundle several slices). */
  commit(commit: SliceCommit): Promise<void>;
  close(): Promise<void>;
}
