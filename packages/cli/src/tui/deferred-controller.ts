import type { Observer } from '@infinity-code/runtime';
import type { CommandApproval, PendingChanges, ReviewRequest, TuiController, UserEditsUpdate } from './controller.js';

/**
 * A controller for a session still opening: the UI can draw and take input at once; calls wait
 * for the session, and subscriptions attach to it when it is ready.
 */
export function deferredController(ready: Promise<TuiController>): TuiController {
  let live: TuiController | undefined;
  const attach: Array<(c: TuiController) => void> = [];
  ready.then(
    (c) => {
      live = c;
      for (const a of attach.splice(0)) a(c);
    },
    () => attach.splice(0),
  );
  const later = (subscribe: (c: TuiController) => () => void): (() => void) => {
    if (live) return subscribe(live);
    let off: (() => void) | undefined;
    let cancelled = false;
    attach.push((c) => {
      if (!cancelled) off = subscribe(c);
    });
    return () => {
      cancelled = true;
      off?.();
    };
  };
  return {
    subscribe: (observer: Observer) => later((c) => c.subscribe(observer)),
    onReviewRequest: (listener: (r: ReviewRequest) => void) => later((c) => c.onReviewRequest(listener)),
    send: async (text) => (await ready).send(text),
    stop: () => live?.stop() ?? false,
    // Nothing runs before the session has opened.
    stopCommand: (threadId, callId) => live?.stopCommand(threadId, callId) ?? Promise.resolve(false),
    compact: async () => (await ready).compact(),
    async quit(changes) {
      // A session that failed to open has nothing to release.
      const c = await ready.catch(() => undefined);
      return c ? c.quit(changes) : {};
    },
    async pendingChanges() {
      const c = await ready.catch(() => undefined);
      return c ? c.pendingChanges() : null;
    },
    onChangesWaiting: (listener: (changes: PendingChanges) => void) => later((c) => c.onChangesWaiting(listener)),
    newSession: async () => (await ready).newSession(),
    listSessions: async () => (await ready).listSessions(),
    setModel: async (id) => (await ready).setModel(id),
    setEffort: async (effort) => (await ready).setEffort(effort),
    usage: async () => (await ready).usage(),
    showDiff: async () => (await ready).showDiff(),
    resolveReview: async (r, d) => (await ready).resolveReview(r, d),
    onUserEdits: (listener: (edits: UserEditsUpdate) => void) => later((c) => c.onUserEdits(listener)),
    refreshBase: async () => (await ready).refreshBase(),
    onCommandApproval: (open: (a: CommandApproval) => void, closed: (id: string) => void) =>
      later((c) => c.onCommandApproval(open, closed)),
    // Only a question the live session asked can be answered.
    answerCommand: (id, allow) => live?.answerCommand(id, allow),
    mcpStatus: async () => (await ready).mcpStatus(),
  };
}
