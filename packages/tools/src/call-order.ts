/**
 * What a call does to the thread's files, which decides what it waits for:
 * - read: runs alongside other reads, after every earlier write;
 * - write: runs alone, after every earlier read and write, and before every later one;
 * - command: starts after every earlier write, and nothing waits for it (commands are long
 *   background work the model chose to run alongside the rest).
 */
export type CallAccess = 'read' | 'write' | 'command';

/** One call's place in its thread's line. */
export interface CallTurn {
  /** True when the call may start; false when it was withdrawn first (it must not run). */
  readonly ready: Promise<boolean>;
  /**
   * The call is over (done, failed, or never ran): later calls stop waiting for it. Idempotent;
   * before `ready` it withdraws the call (`ready` gives false).
   */
  leave(): void;
}

/** What tests and UIs may see of the bookkeeping. */
export interface CallOrderView {
  /** Threads with calls waiting or running; an idle thread has no entry. */
  readonly size: number;
}

/** Said in the tools' descriptions: models plan their replies around it. */
export const ORDER_NOTE: Record<CallAccess, string> = {
  read:
    'Several calls in one reply are fine: reads run at the same time, each after the file changes requested ' +
    'before it in the reply.',
  write:
    'Several calls in one reply are fine: a file change runs after the file calls before it in the reply and ' +
    'before those after it, so later calls see it.',
  command:
    'Several calls in one reply are fine: a command starts after the file changes requested before it in the ' +
    'reply (so it sees them), but nothing waits for a command: calls after it in the reply run alongside it.',
};

interface Entry {
  readonly access: CallAccess;
  state: 'waiting' | 'running' | 'over';
  readonly over: Promise<void>;
  readonly markOver: () => void;
  readonly settle: (go: boolean) => void;
}

type ThreadLine = Map<string, Entry>;

/**
 * Orders each thread's file tool and command calls by dispatch order (the order of the calls in
 * the model's reply, as the runtime dispatches them without waiting for one another). A call
 * takes its place when dispatched and waits only for the earlier calls of its thread still in
 * line that it conflicts with. Threads never wait for one another, and a thread's line exists
 * only while it has calls in it: no timers, no listeners.
 */
export class CallOrder implements CallOrderView {
  private readonly lines = new Map<string, ThreadLine>();

  get size(): number {
    return this.lines.size;
  }

  /**
   * Takes the call's place now (call it synchronously in dispatch, so the place is the dispatch
   * order). The caller must `leave()` once the call is over, whatever happened.
   */
  enter(threadId: string, callId: string, access: CallAccess): CallTurn {
    let line = this.lines.get(threadId);
    if (!line) {
      line = new Map();
      this.lines.set(threadId, line);
    }
    // Waited on directly rather than through a chain, so a withdrawn call in between frees
    // nothing it should not: each call still waits for its own conflicts.
    const before = [...line.values()].filter((e) => conflicts(access, e.access)).map((e) => e.over);
    let markOver!: () => void;
    const over = new Promise<void>((resolve) => (markOver = resolve));
    let settle!: (go: boolean) => void;
    const ready = new Promise<boolean>((resolve) => (settle = resolve));
    const entry: Entry = { access, state: 'waiting', over, markOver, settle };
    line.set(callId, entry);
    void Promise.all(before).then(() => {
      if (entry.state !== 'waiting') return;
      entry.state = 'running';
      settle(true);
    });
    return { ready, leave: () => this.leave(threadId, callId, entry) };
  }

  /**
   * Withdraws a call that is still waiting (it was cancelled): its `ready` gives false and later
   * calls stop waiting for it at once. Returns false when it already started, or is not in line.
   */
  withdraw(threadId: string, callId: string): boolean {
    const entry = this.lines.get(threadId)?.get(callId);
    if (!entry || entry.state !== 'waiting') return false;
    this.leave(threadId, callId, entry);
    return true;
  }

  private leave(threadId: string, callId: string, entry: Entry): void {
    if (entry.state === 'over') return;
    if (entry.state === 'waiting') entry.settle(false);
    entry.state = 'over';
    entry.markOver();
    const line = this.lines.get(threadId);
    // Call ids are unique, but one call must never take another's place out of line.
    if (line?.get(callId) === entry) line.delete(callId);
    if (line?.size === 0) this.lines.delete(threadId);
  }
}

/** Whether a call of kind `later` must wait for an earlier one of kind `earlier`. */
function conflicts(later: CallAccess, earlier: CallAccess): boolean {
  if (earlier === 'command') return false;
  if (later === 'write') return true;
  return earlier === 'write';
}
