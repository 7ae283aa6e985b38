import type { ThreadRecord } from '@infinity-code/runtime';
import type { Sandbox, SandboxSession } from '@infinity-code/sandbox';

/** Where a thread hangs, from the runtime (LocalSystem.threadRecord): no history is read. */
export interface ThreadRecords {
  threadRecord(threadId: string): Promise<ThreadRecord | undefined>;
}

/**
 * Which sandbox each thread of one sandbox session works in. A child's sandbox is created when it is spawned (not at its
 * first tool call), so it holds the parent's edits made before the spawn and none made after.
 */
export class SandboxMap {
  private readonly byThread = new Map<string, Promise<Sandbox>>();
  /** Discards under way: callers need not wait for one (a closing child's), the session's close does. */
  private readonly discarding = new Set<Promise<void>>();

  constructor(
    readonly session: SandboxSession,
    private readonly threads: ThreadRecords,
  ) {}

  /** The thread's sandbox, created (stacked on its parent's) on first use. */
  sandboxFor(threadId: string): Promise<Sandbox> {
    let sb = this.byThread.get(threadId);
    if (!sb) {
      sb = this.create(threadId);
      this.byThread.set(threadId, sb);
      // A failed creation must not be cached: the next call tries again.
      sb.catch(() => this.byThread.delete(threadId));
    }
    return sb;
  }

  /** Replace a child's sandbox by a fresh one on its parent's current state (after a review). */
  async restack(threadId: string, parentId: string): Promise<void> {
    const old = this.byThread.get(threadId);
    const parent = await this.sandboxFor(parentId);
    const fresh = (async () => {
      if (old) await (await old.catch(() => undefined))?.discard();
      return this.session.create(threadId, parent);
    })();
    this.byThread.set(threadId, fresh);
    await fresh;
  }

  async discard(threadId: string): Promise<void> {
    const sb = this.byThread.get(threadId);
    this.byThread.delete(threadId);
    if (!sb) return;
    const run = (async () => (await sb.catch(() => undefined))?.discard())();
    this.discarding.add(run);
    try {
      await run;
    } finally {
      this.discarding.delete(run);
    }
  }

  /** Settles once every discard started so far is over (failed ones included). */
  async discarded(): Promise<void> {
    await Promise.allSettled([...this.discarding]);
  }

  /** Every sandbox with a thread, for listing changes nobody reported. */
  async all(): Promise<Array<{ threadId: string; sandbox: Sandbox }>> {
    const out: Array<{ threadId: string; sandbox: Sandbox }> = [];
    for (const [threadId, p] of this.byThread) {
      const sandbox = await p.catch(() => undefined);
      if (sandbox && !sandbox.isDiscarded) out.push({ threadId, sandbox });
    }
    return out;
  }

  private async create(threadId: string): Promise<Sandbox> {
    // A resumed session already holds the sandboxes of threads that worked before.
    const existing = this.session.get(threadId);
    if (existing && !existing.isDiscarded) return existing;
    const parentId = (await this.threads.threadRecord(threadId))?.parentId ?? null;
    if (parentId === null) return this.session.create(threadId);
    return this.session.create(threadId, await this.sandboxFor(parentId));
  }
}
