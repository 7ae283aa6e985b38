import type { McpServerStatus } from '@infinity-code/mcp';
import type { LocalSystem } from '@infinity-code/runtime';
import type { Effort } from '@infinity-code/runtime/models';
// The light subpath: the UI's first frame must not wait for SQLite and the rest of the runtime.
import { newThreadId } from '@infinity-code/runtime/ids';
import type { CommandApprovals } from './command-approvals.js';
import type { PendingChanges, QuitOutcome, ReviewOutcome, ReviewRequest, SessionSummary, TuiController, UserEditsUpdate } from './controller.js';
import type { QuitChoice } from '../pending-changes.js';
import type { ReviewBroker } from './review-broker.js';
import type { ReviewDecision, ReviewDiff } from '../review-diff.js';

/** The parts of a session that need more than the runtime (sandboxes, the session list, models). */
export interface SessionHooks {
  /** Apply the accepted hunks of the root's diff to the working tree (`/diff`). */
  applyToWorkingTree?(request: ReviewRequest, decision: ReviewDecision): Promise<ReviewOutcome>;
  showDiff?(): Promise<ReviewDiff | null>;
  listSessions?(): Promise<SessionSummary[]>;
  setModel?(id: string): Promise<{ contextWindow?: number } | void>;
  setEffort?(effort: Effort | undefined): Promise<void>;
  /**
   * A fresh session (`/new`): whoever owns the session's root thread and sandboxes moves them,
   * and says which root the controller talks to from now on. Defaults to a new thread id.
   */
  newSession?(): Promise<{ sessionId: string; rootThreadId?: string }>;
  /** The user's edits to the working tree since the base (see TuiController.onUserEdits). */
  watchUserEdits?(listener: (edits: UserEditsUpdate) => void): () => void;
  /** Take the user's edits into the sandboxes' base (`/refresh`). */
  refreshBase?(): Promise<ReviewOutcome>;
  /** Release the session, doing `changes` to the pending ones first; defaults to closing the system. */
  quit?(changes: QuitChoice): Promise<QuitOutcome>;
  /** The root's changes the working tree has not received (see TuiController.pendingChanges); none by default. */
  pendingChanges?(): Promise<PendingChanges | null>;
  /** The session's MCP servers (`/mcp`); none by default. */
  mcpStatus?(): Promise<McpServerStatus[]>;
  /** A message of the user's went to the session's root (durably queued): `text` as sent. */
  sent?(text: string): void;
  /**
   * Settles before a message goes to the model: the session's tools are complete (MCP servers
   * started or failed), since a conversation's tools are fixed at its first request.
   */
  toolsReady?(): Promise<void>;
}

export interface LocalControllerOptions {
  system: LocalSystem;
  rootThreadId: string;
  /** The broker whose `reviewer` the system was built with; without one, reports aren't reviewed. */
  reviews?: ReviewBroker;
  /** Where commands wait for the user's approval; without it, none ever does. */
  approvals?: CommandApprovals;
  hooks?: SessionHooks;
}

/**
 * A TuiController over a LocalSystem: the runtime half of the contract (send, stop, compact,
 * events, reviews of children's reports), with the sandbox half supplied as hooks by the CLI.
 */
export function localController({ system, rootThreadId, reviews, approvals, hooks = {} }: LocalControllerOptions): TuiController {
  let root = rootThreadId;
  // Threads with a slice running now: what stop() interrupts. Kept from events, not polled.
  const working = new Set<string>();
  const waiting = new Set<(changes: PendingChanges) => void>();
  const pendingChanges = () => (hooks.pendingChanges ? hooks.pendingChanges() : Promise.resolve(null));
  system.subscribe((e) => {
    if (e.type === 'slice-started') working.add(e.threadId);
    else if (e.type === 'slice-finished') {
      working.delete(e.threadId);
      // The root's answer is in: say whether its work still waits for /diff. Asked only when
      // someone listens; a failure (the session closing) says nothing.
      if (e.threadId === root && e.outcome === 'completed' && waiting.size > 0) {
        pendingChanges().then(
          (p) => {
            if (p && p.files.length > 0) for (const l of waiting) l(p);
          },
          () => undefined,
        );
      }
    }
  });
  return {
    subscribe: (observer) => system.subscribe(observer),
    onReviewRequest: (listener) => (reviews ? reviews.onRequest(listener) : () => {}),
    async send(text) {
      await hooks.toolsReady?.();
      await system.sendUserText(root, text);
      hooks.sent?.(text);
    },
    stop() {
      let stopped = false;
      for (const id of working) stopped = system.interrupt(id) || stopped;
      return stopped;
    },
    stopCommand: (threadId, callId) => system.stopSubscription(threadId, callId),
    compact: () => system.compact(root),
    async quit(changes) {
      // A review left open is abandoned by the close; the next start asks it again.
      if (hooks.quit) return hooks.quit(changes);
      await system.close();
      return {};
    },
    pendingChanges,
    onChangesWaiting(listener) {
      waiting.add(listener);
      return () => void waiting.delete(listener);
    },
    async newSession() {
      const s = hooks.newSession ? await hooks.newSession() : { sessionId: newThreadId() };
      root = s.rootThreadId ?? s.sessionId;
      return s;
    },
    listSessions: () => (hooks.listSessions ? hooks.listSessions() : Promise.resolve([{ id: root, title: 'this session' }])),
    async setModel(id) {
      if (!hooks.setModel) throw new Error('switching models is not available in this session');
      return hooks.setModel(id);
    },
    async setEffort(effort) {
      if (!hooks.setEffort) throw new Error('setting the effort is not available in this session');
      return hooks.setEffort(effort);
    },
    usage: () => system.usageByThread(root),
    showDiff: () => (hooks.showDiff ? hooks.showDiff() : Promise.resolve(null)),
    onUserEdits: (listener) => (hooks.watchUserEdits ? hooks.watchUserEdits(listener) : () => {}),
    async refreshBase() {
      if (!hooks.refreshBase) throw new Error('refreshing the base is not available in this session');
      return hooks.refreshBase();
    },
    onCommandApproval: (open, closed) =>
      approvals ? approvals.onEvent((e) => (e.type === 'open' ? open(e.approval) : closed(e.id))) : () => {},
    answerCommand: (id, allow) => approvals?.answer(id, allow),
    mcpStatus: () => (hooks.mcpStatus ? hooks.mcpStatus() : Promise.resolve([])),
    async resolveReview(request, decision) {
      if (request.kind === 'report') {
        if (!reviews) throw new Error('no review is waiting');
        return reviews.resolve(request.id, decision);
      }
      if (!hooks.applyToWorkingTree) throw new Error('applying to the working tree is not available in this session');
      return hooks.applyToWorkingTree(request, decision);
    },
  };
}
