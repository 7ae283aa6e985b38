/* eslint-disable @typescript-eslint/require-await -- the store interface is async for stores that wait on I/O; this one answers at once (better-sqlite3 and memory are synchronous), and async keeps a thrown error a rejection. */
import { buildView, type ViewSource, type ViewThread } from './history-view.js';
import type { InputMessage } from './input.js';
import { addUsage, ZERO_USAGE, type HistoryMessage } from './messages.js';
import type {
  CompactionSummary,
  CompletionUsage,
  LoadedThread,
  NewThread,
  PendingCall,
  RootFilter,
  RuntimeStore,
  SliceCommit,
  Subscription,
  ThreadKind,
  ThreadRecord,
  ThreadUsage,
  Timer,
} from './store.js';
import { threadUsage, type ModelTotals, type ThreadTotals } from './thread-usage.js';

interface MemThread {
  record: ThreadRecord;
  view: ViewThread;
  own: HistoryMessage[];
  summaries: CompactionSummary[];
  processed: Set<string>;
  /** One entry per completion, in order (the SQLite store's completions rows). */
  completions: CompletionUsage[];
}

/**
 * In-memory RuntimeStore for tests and benchmarks. Same contract as the SQLite store, including
 * "durable" meaning "visible to the next reader"; nothing survives the process.
 */
export class MemoryStore implements RuntimeStore {
  private readonly threads = new Map<string, MemThread>();
  /** Keyed by thread and input id; a Map keeps arrival order and makes removal O(1). */
  private readonly queue = new Map<string, InputMessage>();
  private timers: Timer[] = [];
  private readonly source: ViewSource = {
    thread: (id) => this.threads.get(id)?.view,
    ownMessages: (id) => this.threads.get(id)?.own ?? [],
    summaries: (id) => this.threads.get(id)?.summaries ?? [],
  };

  async loadThread(threadId: string): Promise<LoadedThread | undefined> {
    const t = this.threads.get(threadId);
    if (!t) return undefined;
    const view = buildView(this.source, threadId);
    return { record: cloneRecord(t.record), ...view };
  }

  async threadRecord(threadId: string): Promise<ThreadRecord | undefined> {
    const t = this.threads.get(threadId);
    return t && cloneRecord(t.record);
  }

  async threadExists(threadId: string): Promise<boolean> {
    return this.threads.has(threadId);
  }

  async ensureRootThread(threadId: string): Promise<void> {
    this.ensureRoot(threadId);
  }

  async createThread(spec: NewThread): Promise<void> {
    if (this.threads.has(spec.id)) return;
    const parent = this.threads.get(spec.parentId);
    if (!parent) throw new Error(`parent thread ${spec.parentId} does not exist`);
    const record = newRecord(spec.id, [...parent.record.stack, spec.id], spec.kind);
    record.parentId = spec.parentId;
    record.spawnCallId = spec.spawnCallId;
    record.cutoff = spec.cutoff;
    record.batch = spec.batch.map((c) => ({ ...c }));
    record.messageCount = spec.seed.length;
    this.threads.set(spec.id, {
      record,
      view: {
        stack: record.stack,
        kind: spec.kind,
        parentId: spec.parentId,
        spawnCallId: spec.spawnCallId,
        cutoff: spec.cutoff,
        parentSummaries: parent.summaries.length,
      },
      own: spec.seed.slice(),
      summaries: [],
      processed: new Set(),
      completions: [],
    });
  }

  async saveSummary(threadId: string, summary: Pick<CompactionSummary, 'upTo' | 'text' | 'keepFrom'>): Promise<void> {
    this.threads.get(threadId)?.summaries.push({
      upTo: summary.upTo,
      text: summary.text,
      ...(summary.keepFrom !== undefined && { keepFrom: summary.keepFrom }),
    });
  }

  async applySummary(threadId: string): Promise<void> {
    const t = this.threads.get(threadId);
    const latest = t?.summaries.at(-1);
    if (t && latest && latest.appliedAt === undefined) latest.appliedAt = t.own.length;
  }

  async closeThread(threadId: string): Promise<void> {
    const t = this.threads.get(threadId);
    if (t) t.record.status = 'closed';
  }

  async countOpenThreads(rootId: string): Promise<number> {
    let n = 0;
    for (const t of this.threads.values()) if (t.record.stack[0] === rootId && t.record.status === 'open') n++;
    return n;
  }

  async processedIds(threadId: string, ids: readonly string[]): Promise<Set<string>> {
    const t = this.threads.get(threadId);
    const out = new Set<string>();
    if (!t) return out;
    for (const id of ids) if (t.processed.has(id)) out.add(id);
    return out;
  }

  async markDispatched(threadId: string, callId: string): Promise<void> {
    const call = this.threads.get(threadId)?.record.batch.find((c) => c.id === callId);
    if (call) call.dispatched = true;
  }

  async threadsWithPendingCalls(roots?: RootFilter): Promise<Array<{ threadId: string; call: PendingCall }>> {
    const out: Array<{ threadId: string; call: PendingCall }> = [];
    for (const [threadId, t] of this.threads) {
      if (t.record.status !== 'open' || !underRoots(t.record, roots)) continue;
      for (const call of t.record.batch) if (call.result === undefined) out.push({ threadId, call: { ...call } });
    }
    return out;
  }

  async activeSubscriptions(roots?: RootFilter): Promise<Array<{ thread: ThreadRecord; subscription: Subscription }>> {
    const out: Array<{ thread: ThreadRecord; subscription: Subscription }> = [];
    for (const t of this.threads.values()) {
      if (t.record.status !== 'open' || !underRoots(t.record, roots)) continue;
      for (const sub of t.record.subscriptions) out.push({ thread: cloneRecord(t.record), subscription: { ...sub } });
    }
    return out;
  }

  async addTimer(timer: Timer): Promise<void> {
    this.timers = this.timers.filter((t) => !(t.threadId === timer.threadId && t.callId === timer.callId));
    this.timers.push({ ...timer });
    this.timers.sort((a, b) => a.dueAt - b.dueAt);
  }

  async nextTimer(roots?: RootFilter): Promise<Timer | undefined> {
    const next = this.timers.find((t) => this.timerUnder(t, roots));
    return next ? { ...next } : undefined;
  }

  async fireTimers(now: number, result: (t: Timer) => InputMessage, roots?: RootFilter): Promise<InputMessage[]> {
    const due = this.timers.filter((t) => t.dueAt <= now && this.timerUnder(t, roots));
    this.timers = this.timers.filter((t) => !due.includes(t));
    const inputs = due.map(result);
    const fresh = await this.enqueue(inputs);
    return inputs.filter((_, i) => fresh[i]);
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

  async pendingInputs(roots?: RootFilter): Promise<InputMessage[]> {
    return [...this.queue.values()].filter((i) => {
      const t = this.threads.get(i.threadId);
      return t !== undefined && underRoots(t.record, roots);
    });
  }

  private timerUnder(timer: Timer, roots: RootFilter): boolean {
    const t = this.threads.get(timer.threadId);
    return t !== undefined && underRoots(t.record, roots);
  }

  async pendingInputsFor(threadId: string): Promise<InputMessage[]> {
    return [...this.queue.values()].filter((i) => i.threadId === threadId);
  }

  async commit(c: SliceCommit): Promise<void> {
    const t = this.threads.get(c.threadId) ?? this.ensureRoot(c.threadId);
    if (c.enqueue.length > 0) await this.enqueue(c.enqueue);
    for (const m of c.append) t.own.push(m);
    t.record.messageCount += c.append.length;
    for (const id of c.consumed) {
      t.processed.add(id);
      this.queue.delete(queueKey(c.threadId, id));
    }
    t.record.batch = c.batch.map((call) => ({ ...call }));
    t.record.subscriptions = c.subscriptions.map((s) => ({ ...s }));
    t.record.hasDeferred = c.hasDeferred;
    t.record.compacting = c.compacting;
    t.record.completions += c.completions;
    t.record.usage = addUsage(t.record.usage, c.usage);
    t.record.contextTokens = c.contextTokens;
    if (c.completionUsage) for (const u of c.completionUsage) t.completions.push({ model: u.model, usage: { ...u.usage } });
  }

  async usageByThread(rootId: string): Promise<ThreadUsage[]> {
    const threads: ThreadTotals[] = [];
    const perModel = new Map<string, ModelTotals[]>();
    for (const t of this.threads.values()) {
      if (t.record.stack[0] !== rootId) continue;
      const r = t.record;
      threads.push({ threadId: r.id, kind: r.kind, completions: r.completions, usage: { ...r.usage } });
      const byModel = new Map<string, ModelTotals>();
      for (const c of t.completions) {
        const m = byModel.get(c.model);
        if (m) {
          m.completions++;
          m.usage = addUsage(m.usage, c.usage);
        } else {
          byModel.set(c.model, { model: c.model, completions: 1, usage: { ...c.usage } });
        }
      }
      perModel.set(r.id, [...byModel.values()]);
    }
    return threadUsage(threads, perModel);
  }

  async close(): Promise<void> {}

  private ensureRoot(threadId: string): MemThread {
    let t = this.threads.get(threadId);
    if (!t) {
      t = {
        record: newRecord(threadId, [threadId], 'root'),
        view: { stack: [threadId], kind: 'root', parentId: null, spawnCallId: null, cutoff: 0, parentSummaries: 0 },
        own: [],
        summaries: [],
        processed: new Set(),
        completions: [],
      };
      this.threads.set(threadId, t);
    }
    return t;
  }
}

function queueKey(threadId: string, inputId: string): string {
  return `${threadId}\u0000${inputId}`;
}

export function newRecord(id: string, stack: string[], kind: ThreadKind): ThreadRecord {
  return {
    id,
    stack,
    kind,
    parentId: null,
    spawnCallId: null,
    cutoff: 0,
    status: 'open',
    subscriptions: [],
    hasDeferred: false,
    compacting: false,
    batch: [],
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
    subscriptions: r.subscriptions.map((s) => ({ ...s })),
    batch: r.batch.map((c) => ({ ...c })),
    usage: { ...r.usage },
  };
}

function underRoots(record: ThreadRecord, roots: RootFilter): boolean {
  return roots === undefined || roots.includes(record.stack[0] ?? record.id);
}
