import type { McpServerStatus } from '@infinity-code/mcp';
import type { Observer, ThreadUsage } from '@infinity-code/runtime';
import type { Effort } from '@infinity-code/runtime/models';
import type { QuitChoice } from '../pending-changes.js';
import type { Pricing } from '../pricing.js';
import type { ReviewDecision, ReviewDiff } from '../review-diff.js';

/** What the TUI is started with. */
export interface TuiInfo {
  model: string;
  /** `output_config.effort` sent (--effort, the config's); unset: the model's default. */
  effort?: Effort;
  /** The model's context window in tokens (for the context % in the status line). */
  contextWindow: number;
  /** What the status line says after "sandbox": on, or off (commands unconfined), in the user's words. */
  backend: string;
  sessionId: string;
  /** The session's root thread; defaults to `sessionId` (a session is its root thread). */
  rootThreadId?: string;
  /** Prices for the status line and `/cost`; the model table's by default. */
  pricing?: Pricing;
}

export interface SessionSummary {
  id: string;
  /** The session's first request, or another short title. */
  title: string;
  /** Last activity, epoch ms. */
  updatedAt?: number;
}

/** A diff waiting for the human's decision. */
export interface ReviewRequest {
  /** Unique per review (the injected report's id, or a fresh id for `/diff`). */
  id: string;
  /** A child's report (accepted hunks are squashed into the parent's sandbox) or the root's diff (`/diff`). */
  kind: 'report' | 'working-tree';
  /** The reporting child, for `report` reviews. */
  childThreadId?: string;
  diff: ReviewDiff;
}

/**
 * A command waiting for the user's yes or no: the sandbox can't confine commands on this
 * machine, so none runs without it.
 */
export interface CommandApproval {
  id: string;
  /** The thread that wants to run it. */
  threadId: string;
  command: string;
  /**
   * 'uncontained' (default): it would run without confinement. 'network': it failed without
   * network (the sandbox has none) and would run again with the machine's network.
   * 'mcp-server': the repository defines an MCP server (`command` is its command line or URL)
   * that would start; the answer is remembered.
   */
  kind?: 'uncontained' | 'network' | 'mcp-server';
  /** For 'mcp-server': which server, defined where. */
  server?: { name: string; file: string; transport: 'stdio' | 'http' };
}

/** The user's edits to the working tree, as the session's watcher sees them. */
export interface UserEditsUpdate {
  /** Sorted, repository-relative. */
  paths: string[];
  /** Set when edits can no longer be followed (the watcher failed): said once, to the user. */
  problem?: string;
}

/** Changes of the session the user's working tree has not received (what `/diff` would offer now). */
export interface PendingChanges {
  /** Repository-relative paths, as the diff lists them. */
  files: string[];
}

/** What became of the session on the way out. */
export interface QuitOutcome {
  /** Printed once the TUI has gone: what happened to the changes, and how to get them back. */
  message?: string;
}

/** What came of applying a decision, for the transcript. */
export interface ReviewOutcome {
  message: string;
  /** Files left with conflict markers (3-way apply into the working tree). */
  conflicts?: string[];
}

/**
 * Everything the TUI asks of the product. The TUI holds no business logic: it renders runtime
 * events and calls these. The CLI implements it over LocalSystem and the sandboxes; the methods
 * may throw (or reject) with a message meant for the user, which the TUI shows as an error.
 */
export interface TuiController {
  /** Runtime events of this session (all threads). Returns the unsubscribe function. */
  subscribe(observer: Observer): () => void;
  /**
   * Diffs waiting for the human: those already waiting, then each new one (a child's report
   * waits in the runtime's report reviewer until `resolveReview`). Returns the unsubscribe function.
   */
  onReviewRequest(listener: (request: ReviewRequest) => void): () => void;
  /** Send the user's message to the root thread (it interrupts a running completion or call). */
  send(text: string): Promise<void>;
  /** Stop the running slice(s); false when nothing was running. */
  stop(): boolean;
  /**
   * Stop a thread's command running in the background (see UiState.background): it is killed,
   * and the thread reads that the user stopped it when it next wakes, without being woken for it.
   * False when it was not running (any more).
   */
  stopCommand(threadId: string, callId: string): Promise<boolean>;
  /** Summarise the root thread's history now. */
  compact(): Promise<void>;
  /**
   * Release the session (close the system, stores, watchers); the TUI exits after it. `changes`
   * says what becomes of the pending changes (see pendingChanges): applied to the working tree
   * first, kept for the next run (-c), or discarded (the conversation stays).
   */
  quit(changes: QuitChoice): Promise<QuitOutcome>;
  /** The session's changes the working tree has not received; null when there are none. */
  pendingChanges(): Promise<PendingChanges | null>;
  /**
   * After each final answer of the root (its turn over), the pending changes, when there are
   * any. Returns the unsubscribe function.
   */
  onChangesWaiting(listener: (changes: PendingChanges) => void): () => void;
  /** Start a fresh session; the TUI clears its state for it. */
  newSession(): Promise<{ sessionId: string; rootThreadId?: string }>;
  listSessions(): Promise<SessionSummary[]>;
  /** Switch models for the next completions; returns the new context window if it changed. */
  setModel(id: string): Promise<{ contextWindow?: number } | void>;
  /** Set the effort of the next completions (`/effort`); undefined: none is sent, the model's default applies. */
  setEffort(effort: Effort | undefined): Promise<void>;
  /** Stored usage of the session's threads per model (`/cost`), earlier runs of it included. */
  usage(): Promise<ThreadUsage[]>;
  /** The root's accumulated diff against the working tree (`/diff`); null when there is none. */
  showDiff(): Promise<ReviewDiff | null>;
  /**
   * Carry out a decision: for a child's report, squash the accepted hunks into the parent's
   * sandbox, discard the rest and release the report with the verdict (reasons included) for the
   * parent's model; for `/diff`, apply the accepted hunks to the working tree (3-way).
   */
  resolveReview(request: ReviewRequest, decision: ReviewDecision): Promise<ReviewOutcome>;
  /**
   * Files of the working tree the user changed since the sandboxes' base was taken: the current
   * list at once, then each time it changes. Returns the unsubscribe function.
   */
  onUserEdits(listener: (edits: UserEditsUpdate) => void): () => void;
  /** Take the user's edits into the sandboxes' base (`/refresh`): the agent sees them from now on. */
  refreshBase(): Promise<ReviewOutcome>;
  /**
   * Commands waiting for the user's approval: those open already, then each new one (`open`),
   * and each taken down (`closed`: answered, or its call ended first). Returns the unsubscribe.
   */
  onCommandApproval(open: (approval: CommandApproval) => void, closed: (id: string) => void): () => void;
  /** The user's answer to a command approval: run it, or tell the agent the user declined. */
  answerCommand(id: string, allow: boolean): void;
  /** The session's MCP servers with their state and tools (`/mcp`). */
  mcpStatus(): Promise<McpServerStatus[]>;
}
