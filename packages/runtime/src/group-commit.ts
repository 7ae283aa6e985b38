import type { Database } from 'better-sqlite3';

interface Pending {
  op: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: write operations queued during one event-loop turn run in a single SQLite
 * transaction, and each caller's promise resolves only after that transaction committed. WAL
 * commits are bound by the log append, so bundling the slices that finish together multiplies
 * throughput without weakening "durable before the promise resolves".
 */
export class GroupCommitter {
  private pending: Pending[] = [];
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    /** Called when a group's transaction rolled back, before its operations are redone. */
    private readonly onRollback: () => void = () => {},
  ) {}

  run<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Resolves once everything queued so far is committed. */
  drained(): Promise<void> {
    if (!this.scheduled && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    const results: unknown[] = new Array(batch.length);
    try {
      this.db.transaction(() => {
        for (let i = 0; i < batch.length; i++) results[i] = batch[i].op();
      })();
      for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
    } catch {
      // One bad operation must not fail its neighbours: redo each in its own transaction so only
      // the culprit's caller sees the error.
      this.onRollback();
      for (const p of batch) {
        try {
          p.resolve(this.db.transaction(p.op)());
        } catch (err) {
          this.onRollback();
          p.reject(err);
        }
      }
    }
    if (this.pending.length === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }
}
