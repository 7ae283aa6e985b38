import type { InputMessage } from './input.js';
import { addUsage, ZERO_USAGE, type HistoryMessage } from './messages.js';
import type { LoadedThread, PendingCall, RuntimeStore, SliceCommit, ThreadRecord } from './store.js';

interface MemThread {
  record: ThreadRecord;
  history: HistoryMessage[];
  processed: Set<string>;
}

/**
 * In-memory RuntimeStore for tests and benchmarks. Same contract as the SQLite store, including
 * "durable" meaning "visible to the next reader"; nothing survives the process.
 */
export class MemoryStore implements RuntimeStore {
  private readonly threads = new Map<string, MemThread>();
  /** Keyed by thread and input id; a Map keeps arrival order and makes removal O(1). */
  private readonly queue = new Map<string, InputMessage>();

  async loadThread(threadId: string): Promise<LoadedThread | undefined> {
    const t = this.threads.get(threadId);
    if (!t) return undefined;
    return { record: cloneRecord(t.record), history: t.history.slice() };
  }

  async threadExists(threadId: string): Promise<boolean> {
    return this.threads.has(threadId);
  }

  async ensureRootThread(threadId: string): Promise<void> {
    this.ensureRoot(threadId);
  }

  async processedIds(threadId: string, ids: readonly string[]): Promise<Set<string>> {
    const t = this.threads.get(threadId);
    const out = new Set<string>();
    if (!t) return out;
    for (const id of ids) if (t.processed.has(id)) out.add(id);
    return out;
  }

  async markDispatched(threadId: string, callId: string): Promise<void> {
    const call = this.threads.get(threadId)?.record.pendingCall;
    if (call && call.id === callId) call.dispatched = true;
  }

  async threadsWithPendingCalls(): Promise<Array<{ threadId: string; call: PendingCall }>> {
    const out: Array<{ threadId: string; call: PendingCall }> = [];
    for (const [threadId, t] of this.threads) {
      if (t.record.pendingCall) out.push({ threadId, call: { ...t.record.pendingCall } });
    }
    return out;
  }

  async enqueue(inputs: readonly InputMessage[]): Promise<boolean[]> {
    return inputs.map((input) => {
      let t = this.threads.get(input.threadId);
      if (!t) {
        if (input.body.kind !== 'user_text') return false;
        t = this.ensureRoot(input.threadId);
      }
      const key = queueKey(input.threadId, input.id);
      if (t.processed.has(input.id) || this.queue.has(key)) return false;
      this.queue.set(key, input);
      return true;
    });
  }

  async pendingInputs(): Promise<InputMessage[]> {
    return [...this.queue.values()];
  }

  async commit(c: SliceCommit): Promise<void> {
    const t = this.threads.get(c.threadId) ?? this.ensureRoot(c.threadId);
    for (const m of c.append) t.history.push(m);
    t.record.messageCount += c.append.length;
    for (const id of c.consumed) {
      t.processed.add(id);
      this.queue.delete(queueKey(c.threadId, id));
    }
    t.record.pendingCall = c.pendingCall ? { ...c.pendingCall } : null;
    t.record.completions += c.completions;
    t.record.usage = addUsage(t.record.usage, c.usage);
    t.record.contextTokens = c.contextTokens;
  }

  async close(): Promise<void> {}

  private ensureRoot(threadId: string): MemThread {
    let t = this.threads.get(threadId);
    if (!t) {
      t = { record: newRecord(threadId, [threadId]), history: [], processed: new Set() };
      this.threads.set(threadId, t);
    }
    return t;
  }
}

function queueKey(threadId: string, inputId: string): string {
  return `${threadId}\u0000${inputId}`;
}

export function newRecord(id: string, stack: string[]): ThreadRecord {
  return {
    id,
    stack,
    status: 'open',
    pendingCall: null,
    completions: 0,
    usage: { ...ZERO_USAGE },
    contextTokens: 0,
    messageCount: 0,
  };
}

function cloneRecord(r: ThreadRecord): ThreadRecord {
  return {
    ...r,
    stack: r.stack.slice(),
    pendingCall: r.pendingCall ? { ...r.pendingCall } : null,
    usage: { ...r.usage },
  };
}
