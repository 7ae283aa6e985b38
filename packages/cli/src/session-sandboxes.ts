import type { Sandbox, SandboxSession } from '@infinity-code/sandbox';
import { SandboxMap, type ThreadRecords } from './sandbox-map.js';

/**
 * The sandboxes of every session a process runs. Each session (root thread) has its own sandbox
 * session, a snapshot of the working tree taken when that session began (or the one recorded
 * for it, resumed), and each thread works in its root's. So after `/new` the new session starts
 * from the tree as it is then, its diffs hold only its own changes, while threads of the earlier
 * session still finish in theirs.
 */
export class SessionSandboxes {
  private readonly byRoot = new Map<string, Promise<SandboxMap>>();
  /** A thread's root never changes: looked up once. */
  private readonly rootOf = new Map<string, string>();

  constructor(
    private readonly o: {
      /** Opens (or resumes) the sandbox session of a root, and records it for the next run. */
      open(rootId: string): Promise<SandboxSession>;
      threads: ThreadRecords;
    },
  ) {}

  /** The root's sandboxes, its sandbox session opened on first use. */
  forRoot(rootId: string): Promise<SandboxMap> {
    let map = this.byRoot.get(rootId);
    if (!map) {
      map = this.o.open(rootId).then((session) => new SandboxMap(session, this.o.threads));
      this.byRoot.set(rootId, map);
      // A failed open must not be cached: the next use tries again.
      map.catch(() => this.byRoot.delete(rootId));
    }
    return map;
  }

  /** The thread's sandbox, in its root's sandbox session, created on first use. */
  async sandboxFor(threadId: string): Promise<Sandbox> {
    return (await this.mapOf(threadId)).sandboxFor(threadId);
  }

  /** Replace a child's sandbox by a fresh one on its parent's current state (after a review). */
  async restack(threadId: string, parentId: string): Promise<void> {
    await (await this.mapOf(threadId)).restack(threadId, parentId);
  }

  async discard(threadId: string): Promise<void> {
    await (await this.mapOf(threadId)).discard(threadId);
  }

  /**
   * Stops every sandbox session; `keep(rootId)` says whose storage stays for a later run (-c),
   * the others are deleted.
   */
  async close(keep: (rootId: string) => boolean): Promise<void> {
    for (const [rootId, map] of this.byRoot) {
      const opened = await map.catch(() => undefined);
      // A sandbox being discarded must be gone before its session's storage goes.
      await opened?.discarded();
      await opened?.session.close({ keep: keep(rootId) });
    }
    this.byRoot.clear();
  }

  private async mapOf(threadId: string): Promise<SandboxMap> {
    let root = this.rootOf.get(threadId);
    if (root === undefined) {
      // A root before its first message has no record yet: it is its own root.
      root = (await this.o.threads.threadRecord(threadId))?.stack[0] ?? threadId;
      this.rootOf.set(threadId, root);
    }
    return this.forRoot(root);
  }
}
