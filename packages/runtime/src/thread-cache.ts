import type { LoadedThread } from './store.js';

/**
 * A bounded LRU of loaded threads for local mode, so a busy thread isn't re-read and re-parsed on
 * every slice. Bounded by the total number of cached messages, not per thread: idle agents cost
 * nothing beyond the fixed bound, whatever their number.
 */
export class ThreadCache {
  private readonly entries = new Map<string, LoadedThread>();
  private messages = 0;

  constructor(private readonly maxMessages: number) {}

  /** Take a thread out while a slice works on it (its history grows meanwhile). */
  take(threadId: string): LoadedThread | undefined {
    const t = this.entries.get(threadId);
    if (t) {
      this.entries.delete(threadId);
      this.messages -= t.history.length;
    }
    return t;
  }

  put(thread: LoadedThread): void {
    if (this.maxMessages <= 0) return;
    const old = this.entries.get(thread.record.id);
    if (old) this.messages -= old.history.length;
    this.entries.delete(thread.record.id);
    this.entries.set(thread.record.id, thread);
    this.messages += thread.history.length;
    for (const [id, t] of this.entries) {
      if (this.messages <= this.maxMessages) break;
      this.entries.delete(id);
      this.messages -= t.history.length;
    }
  }

  clear(): void {
    this.entries.clear();
    this.messages = 0;
  }
}
