import type { InputMessage } from './input.js';
import type { HistoryMessage, Usage } from './messages.js';
import type { ToolCall } from './tool.js';

/** The one asynchronous call a thread waits on, if any. */
export interface PendingCall extends ToolCall {
  /** True once handed to the tool; a restart never dispatches it again. */
  dispatched: boolean;
}

export type ThreadStatus = 'open' | 'closed';

export interface ThreadRecord {
  id: string;
  /** Root first, this thread last. */
  stack: string[];
  status: ThreadStatus;
  pendingCall: PendingCall | null;
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
  /** Everything the model sees, inherited prefix included. Never mutated by readers. */
  history: HistoryMessage[];
}

/** Conversation history: append-only turns per thread. */
export interface ConversationStore {
  loadThread(threadId: string): Promise<LoadedThread | undefined>;
  threadExists(threadId: string): Promise<boolean>;
  /** Creates a root thread if it doesn't exist yet. */
  ensureRootThread(threadId: string): Promise<void>;
}

/** Processed input ids and per-thread state. */
export interface StateStore {
  /** The subset of `ids` already processed by `threadId`. */
  processedIds(threadId: string, ids: readonly string[]): Promise<Set<string>>;
  markDispatched(threadId: string, callId: string): Promise<void>;
  /** Threads waiting on a call: for recovery after a restart. */
  threadsWithPendingCalls(): Promise<Array<{ threadId: string; call: PendingCall }>>;
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
  pendingInputs(): Promise<InputMessage[]>;
}

/** Everything one slice (or one step of it) makes durable, in one transaction. */
export interface SliceCommit {
  threadId: string;
  append: HistoryMessage[];
  /** Input ids consumed by this slice: marked processed and removed from the queue. */
  consumed: string[];
  pendingCall: PendingCall | null;
  /** Completions run since the last commit (added to the thread's count). */
  completions: number;
  /** Usage since the last commit (added to the thread's total). */
  usage: Usage;
  contextTokens: number;
}

export interface RuntimeStore extends ConversationStore, StateStore, InputQueue {
  /** Durable when the promise resolves (a group commit may bundle several slices). */
  commit(commit: SliceCommit): Promise<void>;
  close(): Promise<void>;
}
