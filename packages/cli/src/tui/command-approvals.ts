import { randomUUID } from 'node:crypto';
import type { CommandApproval } from './controller.js';

/** What the UI hears: a question to show, or one to take down (answered, or its call ended). */
export type ApprovalEvent = { type: 'open'; approval: CommandApproval } | { type: 'closed'; id: string };

/**
 * Connects execute_command's "ask before running an unconfined command" to a UI. `ask` (the
 * tool's side) waits until the UI answers through `answer`; a call cancelled meanwhile withdraws
 * its question, which then counts as a no.
 */
export interface CommandApprovals {
  /** Pass as AgentSession's `askUncontained`. */
  ask(
    request: { threadId: string; command: string; kind?: CommandApproval['kind']; server?: CommandApproval['server'] },
    signal: AbortSignal,
  ): Promise<boolean>;
  /** Questions open now, then every change; returns the unsubscribe function. */
  onEvent(listener: (event: ApprovalEvent) => void): () => void;
  /** The user's answer; an unknown or withdrawn id is ignored (the question is gone already). */
  answer(id: string, allow: boolean): void;
}

export function createCommandApprovals(): CommandApprovals {
  const open = new Map<string, { approval: CommandApproval; settle(allow: boolean): void }>();
  let listeners: Array<(event: ApprovalEvent) => void> = [];
  const tell = (event: ApprovalEvent) => {
    for (const l of listeners) l(event);
  };
  const close = (id: string, allow: boolean) => {
    const q = open.get(id);
    if (!q) return;
    open.delete(id);
    q.settle(allow);
    tell({ type: 'closed', id });
  };
  return {
    ask(request, signal) {
      if (signal.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const approval: CommandApproval = {
          id: `command:${randomUUID()}`,
          threadId: request.threadId,
          command: request.command,
          ...(request.kind ? { kind: request.kind } : {}),
          ...(request.server ? { server: request.server } : {}),
        };
        const withdraw = () => close(approval.id, false);
        signal.addEventListener('abort', withdraw, { once: true });
        open.set(approval.id, {
          approval,
          settle: (allow) => {
            signal.removeEventListener('abort', withdraw);
            resolve(allow);
          },
        });
        tell({ type: 'open', approval });
      });
    },
    onEvent(listener) {
      listeners = [...listeners, listener];
      for (const q of open.values()) listener({ type: 'open', approval: q.approval });
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    answer: (id, allow) => close(id, allow),
  };
}
