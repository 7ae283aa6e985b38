import { randomUUID } from 'node:crypto';
import { INTERRUPTED_BY_RESTART } from './dispatch.js';
import { EventBus, type Observer } from './events.js';
import type { InputMessage } from './input.js';
import { toolResult, userText } from './input.js';
import { text } from './messages.js';
import { runSlice, type SliceDeps } from './slice.js';
import type { LoadedThread } from './store.js';
import { sliceDeps, type SystemOptions } from './system-options.js';
import { ThreadCache } from './thread-cache.js';

export interface LocalSystemOptions extends SystemOptions {
  /** Upper bound of messages kept in the loaded-thread cache (0 disables it). */
  cacheMessages?: number;
}

/** A thread with work: exists only while inputs are queued or a slice runs. */
interface Driver {
  queue: InputMessage[];
  abort: AbortController | null;
}

/**
 * Local (resident) mode: a router with one driver per busy thread. Slices of a thread run one at
 * a time in queue order; different threads run concurrently. A thread with nothing to do has no
 * driver, timer or closure: only its rows in the store.
 */
export class LocalSystem {
  readonly events = new EventBus();
  private readonly deps: SliceDeps;
  private readonly drivers = new Map<string, Driver>();
  private readonly cache: ThreadCache;
  /** Work in flight that isn't a driver: enqueues and tool calls awaiting their result. */
  private inflight = 0;
  private readonly awaitingResult = new Set<string>();
  private waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  private closed = false;

  constructor(private readonly opts: LocalSystemOptions) {
    const deps = sliceDeps(opts, this.events, (input) => this.deliverToolResult(input));
    this.deps = {
      ...deps,
      dispatch: (thread, call) => this.trackDispatch(thread.id, call.id, () => deps.dispatch(thread, call)),
    };
    this.cache = new ThreadCache(opts.cacheMessages ?? 50_000);
  }

  subscribe(observer: Observer): () => void {
    return this.events.subscribe(observer);
  }

  /**
   * Recover after a restart: dispatch calls committed but never dispatched, report calls that were
   * dispatched and never answered as interrupted, and run every input still queued.
   */
  async start(): Promise<void> {
    const store = this.opts.store;
    const queued = await store.pendingInputs();
    const answered = new Set(
      queued.flatMap((i) => (i.body.kind === 'tool_result' ? [`${i.threadId}\u0000${i.body.toolUseId}`] : [])),
    );
    for (const { threadId, call } of await store.threadsWithPendingCalls()) {
      if (answered.has(`${threadId}\u0000${call.id}`)) continue;
      const tool = this.deps.tools.get(call.name);
      if (call.dispatched && tool?.kind === 'async' && tool.survivesRestart) continue;
      if (!call.dispatched) {
        const thread = await store.loadThread(threadId);
        if (thread) await this.trackDispatch(threadId, call.id, () => this.deps.dispatch(thread.record, call));
        continue;
      }
      const input = toolResult(threadId, call.id, [text(INTERRUPTED_BY_RESTART)], {
        isError: true,
        id: `${call.id}:restart`,
      });
      this.events.emit({ type: 'tool-interrupted', threadId, callId: call.id, reason: 'restart' });
      queued.push(input);
      await store.enqueue([input]);
    }
    for (const input of queued) this.route(input);
  }

  /** Durably enqueue inputs, then route them. Returns which were new (not duplicates). */
  async send(inputs: InputMessage | readonly InputMessage[]): Promise<boolean[]> {
    if (this.closed) throw new Error('The agent system is closed.');
    const list = Array.isArray(inputs) ? (inputs as readonly InputMessage[]) : [inputs as InputMessage];
    this.inflight++;
    try {
      const fresh = await this.opts.store.enqueue(list);
      list.forEach((input, i) => {
        if (fresh[i]) this.route(input);
        else this.events.emit({ type: 'input-dropped', threadId: input.threadId, inputId: input.id, reason: 'duplicate' });
      });
      return fresh;
    } finally {
      this.inflight--;
      this.checkIdle();
    }
  }

  /** Send user text to a thread (created on first use). Returns the input id. */
  async sendUserText(threadId: string, value: string, id: string = randomUUID()): Promise<string> {
    await this.send(userText(threadId, value, id));
    return id;
  }

  /** Stop the thread's running completion, keeping what streamed so far. */
  interrupt(threadId: string): boolean {
    const d = this.drivers.get(threadId);
    if (!d?.abort) return false;
    d.abort.abort();
    return true;
  }

  /**
   * Resolves when no slice runs, nothing is being enqueued and (unless `ignoreRunningTools`) no
   * tool call awaits its result.
   */
  whenIdle(opts: { ignoreRunningTools?: boolean } = {}): Promise<void> {
    if (opts.ignoreRunningTools) return this.waitUntil(() => this.drivers.size === 0 && this.inflight === 0);
    return this.waitUntil(() => this.isIdle());
  }

  /** Number of threads with a driver right now (for tests and benchmarks). */
  get busyThreads(): number {
    return this.drivers.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const d of this.drivers.values()) d.abort?.abort();
    // Running tools are not waited for: their calls are dispatched, so the next start reports
    // them as interrupted rather than running them twice.
    await this.waitUntil(() => this.drivers.size === 0 && this.inflight === 0);
    this.cache.clear();
    await this.opts.store.close();
  }

  private route(input: InputMessage): void {
    const existing = this.drivers.get(input.threadId);
    if (existing) {
      existing.queue.push(input);
      // New user text takes over from a completion that is still streaming.
      if (input.body.kind === 'user_text') existing.abort?.abort();
      return;
    }
    const driver: Driver = { queue: [input], abort: null };
    this.drivers.set(input.threadId, driver);
    void this.drive(input.threadId, driver);
  }

  private async drive(threadId: string, d: Driver): Promise<void> {
    try {
      while (d.queue.length > 0) {
        const batch = d.queue;
        d.queue = [];
        const thread = await this.load(threadId);
        if (!thread) continue;
        d.abort = new AbortController();
        try {
          await runSlice(this.deps, thread, batch, { signal: d.abort.signal, deduplicated: true });
        } finally {
          d.abort = null;
          this.cache.put(thread);
        }
      }
    } catch (err) {
      // A store failure: the inputs stay in the durable queue and run again on the next start.
      this.cache.take(threadId);
      this.events.emit({ type: 'error', threadId, kind: 'store', message: (err as Error).message });
    } finally {
      this.drivers.delete(threadId);
      this.checkIdle();
    }
  }

  private async load(threadId: string): Promise<LoadedThread | undefined> {
    return this.cache.take(threadId) ?? (await this.opts.store.loadThread(threadId));
  }

  private async deliverToolResult(input: InputMessage): Promise<void> {
    try {
      if (!this.closed) await this.send(input);
    } finally {
      if (input.body.kind === 'tool_result') {
        this.awaitingResult.delete(`${input.threadId}\u0000${input.body.toolUseId}`);
        this.checkIdle();
      }
    }
  }

  private async trackDispatch(threadId: string, callId: string, dispatch: () => Promise<void>): Promise<void> {
    this.awaitingResult.add(`${threadId}\u0000${callId}`);
    await dispatch();
  }

  private isIdle(): boolean {
    return this.drivers.size === 0 && this.inflight === 0 && this.awaitingResult.size === 0;
  }

  private waitUntil(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ done, resolve }));
  }

  private checkIdle(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.done()) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }
}
