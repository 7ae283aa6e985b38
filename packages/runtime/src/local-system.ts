import { randomUUID } from 'node:crypto';
import { asyncContext } from './dispatch.js';
import { SystemClosingError } from './errors.js';
import { EventBus, type Observer } from './events.js';
import type { InputMessage } from './input.js';
import { toolResult, userText } from './input.js';
import { text, type HistoryMessage } from './messages.js';
import { whenQuiescent, type Quiescence, type QuiescenceOptions } from './quiescence.js';
import { runSlice, type SliceDeps } from './slice.js';
import type { ReportReviewer } from './services.js';
import type { LoadedThread, ThreadRecord, ThreadUsage } from './store.js';
import { sliceDeps, type SystemOptions } from './system-options.js';
import { REPORTING_TOOLS } from './builtin-tools.js';
import { ThreadCache } from './thread-cache.js';
import type { Tool, ToolDefinition } from './tool.js';
import { TimerScheduler } from './timer-scheduler.js';
import { INTERRUPTED_BY_RESTART } from './wording.js';

export interface LocalSystemOptions extends SystemOptions {
  /** Upper bound of messages kept in the loaded-thread cache (0 disables it). */
  cacheMessages?: number;
  /**
   * The sessions (root threads) this process runs, when the store is shared with others: start()
   * recovers, and timers and quiescence consider, only threads under these roots (more join with
   * runRoot). Unset: every thread in the store is this system's.
   */
  roots?: readonly string[];
}

/** A thread with work: exists only while inputs are queued or a slice runs. */
interface Driver {
  queue: InputMessage[];
  /** Run a slice even with no input (recovering a call interrupted by a crash). */
  kick: boolean;
  abort: AbortController | null;
  /** The thread's parent, while a slice runs (null: a root). */
  parentId?: string | null;
  /** Ids of inputs its slices read from the store themselves: not handed to a slice again. */
  taken?: Set<string>;
}

const key = (threadId: string, callId: string) => `${threadId}\u0000${callId}`;

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
  private readonly timers: TimerScheduler;
  /** Work in flight that isn't a driver: enqueues. */
  private inflight = 0;
  /** Dispatched calls whose result hasn't come back yet. */
  private readonly awaitingResult = new Set<string>();
  private waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  private closed = false;
  /** Aborted by close(): a slice waiting inside a call (a report review) gives up. */
  private readonly closing = new AbortController();
  /**
   * By parent, the children whose report is on its way: from when the model begins writing the
   * reporting call until the report was delivered (or the child's slice ended without one), the
   * review included. Present only meanwhile, so an idle parent costs nothing here.
   */
  private readonly reportsUnderReview = new Map<string, Set<string>>();
  /** See LocalSystemOptions.roots; undefined: all. */
  private roots: readonly string[] | undefined;

  constructor(private readonly opts: LocalSystemOptions) {
    const now = opts.now ?? Date.now;
    this.roots = opts.roots ? [...opts.roots] : undefined;
    this.timers = new TimerScheduler(opts.store, now, (inputs) => this.routeDelivered(inputs), () => this.roots);
    const review = opts.reviewReport;
    const deps = sliceDeps(
      review ? { ...opts, reviewReport: (thread, report, ctx) => this.tracked(review, thread, report, ctx) } : opts,
      this.events,
      (input) => this.deliver(input),
      (dueAt) => this.timers.arm(dueAt),
      this.closing.signal,
    );
    this.deps = {
      ...deps,
      dispatch: async (thread, call) => {
        // Passive waits (timers) are tracked by the store and the scheduler, not in memory.
        if (!deps.tools.isPassive(call.name)) this.awaitingResult.add(key(thread.id, call.id));
        await deps.dispatch(thread, call);
      },
    };
    this.cache = new ThreadCache(opts.cacheMessages ?? 50_000);
    // An interrupted call's late result is stale: stop waiting for it.
    this.events.subscribe((e) => {
      if (e.type === 'tool-interrupted') this.settled(e.threadId, e.callId);
      // A call moved to the background was answered by the runtime: its tool won't answer it.
      if (e.type === 'tool-result' && e.subscription) this.settled(e.threadId, e.toolUseId);
      else if (e.type === 'tool-call-streaming' && REPORTING_TOOLS.has(e.name)) this.reportComing(e.threadId);
    });
  }

  subscribe(observer: Observer): () => void {
    return this.events.subscribe(observer);
  }

  /**
   * Offers more tools from the next completion on, to every thread alike (tools of a server that
   * started after the session did). Returns those left out, with the reason (see ToolRegistry.add).
   */
  addTools(tools: readonly Tool[]): Promise<Array<{ name: string; reason: string }>> {
    return this.deps.tools.add(tools);
  }

  /**
   * Starts loading what checking the model's tool calls needs, without waiting for it: a caller
   * that knows when the process has nothing better to do (the first request is out) calls this
   * then, and the first reply with calls does not wait for it.
   */
  warmTools(): void {
    void this.deps.tools.warm().catch(() => undefined);
  }

  /**
   * Recover after a restart: dispatch calls committed but never dispatched, re-run synchronous
   * calls a crash cut short, report calls that died with the process as interrupted, re-arm the
   * timers, and run every input still queued.
   */
  async start(): Promise<void> {
    // A session that starts is about to complete: the provider loads while the queue is read.
    this.opts.provider.warm?.();
    const store = this.opts.store;
    const roots = this.roots;
    const queued = await store.pendingInputs(roots);
    const answered = new Map(
      queued.flatMap((i) => (i.body.kind === 'tool_result' ? [[key(i.threadId, i.body.toolUseId), i.body.subscription === true] as const] : [])),
    );
    const kicked = new Set<string>();
    for (const { threadId, call } of await store.threadsWithPendingCalls(roots)) {
      // A child's inherited calls are answered by its parent, which recovers on its own.
      if (call.inherited) continue;
      const tool = this.deps.tools.get(call.name);
      const startsSubscription = answered.get(key(threadId, call.id));
      if (startsSubscription !== undefined) {
        // The subscription starts only when a slice takes this result, so activeSubscriptions()
        // below doesn't list it yet; its tool must still learn that the process behind it is gone.
        if (startsSubscription && tool?.kind === 'async' && tool.resume) {
          const thread = await store.loadThread(threadId);
          if (thread) tool.resume(asyncContext(this.deps, thread.record, call));
        }
        continue;
      }
      if (!call.dispatched) {
        // A slice dispatches the batch's undispatched calls first and runs its synchronous ones.
        if (!kicked.has(threadId)) this.route(threadId, null);
        kicked.add(threadId);
        continue;
      }
      // Only calls of in-process async tools die with the process; the others (timers, tool
      // servers) still get their answer. A tool not offered (yet) in this process can't answer
      // one either: the tools a session adds once started (MCP servers) are in-process too.
      if (tool !== undefined && (tool.kind !== 'async' || tool.survivesRestart)) {
        if (tool?.kind === 'async' && !tool.passive) this.awaitingResult.add(key(threadId, call.id));
        continue;
      }
      const input = toolResult(threadId, call.id, [text(INTERRUPTED_BY_RESTART)], { isError: true, id: `${call.id}:restart` });
      this.events.emit({ type: 'tool-interrupted', threadId, callId: call.id, reason: 'restart' });
      queued.push(input);
      await store.enqueue([input]);
    }
    for (const { thread, subscription } of await store.activeSubscriptions(roots)) {
      const tool = this.deps.tools.get(subscription.name);
      if (tool?.kind === 'async') tool.resume?.(asyncContext(this.deps, thread, { id: subscription.callId, name: subscription.name, input: subscription.input }));
    }
    await this.timers.start();
    for (const input of queued) this.route(input.threadId, input);
  }

  /**
   * This process runs the session rooted at `rootId` too, from now on (a session started after
   * start(), with a fresh root: there is nothing of it to recover).
   */
  runRoot(rootId: string): void {
    if (this.roots && !this.roots.includes(rootId)) this.roots = [...this.roots, rootId];
  }

  /** Durably enqueue inputs, then route them. Returns which were new (not duplicates). */
  async send(inputs: InputMessage | readonly InputMessage[]): Promise<boolean[]> {
    if (this.closed) throw new Error('The agent system is closed.');
    const list = Array.isArray(inputs) ? (inputs as readonly InputMessage[]) : [inputs as InputMessage];
    this.inflight++;
    try {
      const fresh = await this.opts.store.enqueue(list);
      list.forEach((input, i) => {
        if (fresh[i]) this.route(input.threadId, input);
        else {
          this.events.emit({ type: 'input-dropped', threadId: input.threadId, inputId: input.id, reason: 'duplicate' });
        }
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

  /** Summarise the thread's history now (what `/compact` does). */
  async compact(threadId: string): Promise<void> {
    await this.send({ id: `compact:${randomUUID()}`, threadId, body: { kind: 'compaction' } });
  }

  /** Stop the thread's running completion, keeping what streamed so far. */
  interrupt(threadId: string): boolean {
    const d = this.drivers.get(threadId);
    if (!d?.abort) return false;
    d.abort.abort();
    return true;
  }

  /** Stop every running completion (Ctrl+C). Returns how many were running. */
  interruptAll(): number {
    let n = 0;
    for (const id of this.drivers.keys()) if (this.interrupt(id)) n++;
    return n;
  }

  /**
   * The user stops a call of the thread that goes on in the background (a subscription: a
   * command): its tool ends it, and the thread reads that the user stopped it when it next wakes;
   * it is not woken for it. False when the thread has no such call or its tool can't stop one.
   */
  async stopSubscription(threadId: string, callId: string): Promise<boolean> {
    const record = await this.opts.store.threadRecord(threadId);
    // The call's result may still be on its way to the thread's record: its call is in the batch then.
    const sub = record?.subscriptions.find((s) => s.callId === callId) ?? record?.batch.find((c) => c.id === callId);
    const tool = sub && this.deps.tools.get(sub.name);
    if (!record || !sub || tool?.kind !== 'async' || !tool.cancel) return false;
    const call = { id: callId, name: sub.name, input: sub.input };
    tool.cancel({ threadId, threadStack: record.stack, call, thread: record }, { byUser: true });
    return true;
  }

  /**
   * Resolves when no slice runs, nothing is being enqueued and (unless `ignoreRunningTools`) no
   * tool call awaits its result. Passive waits (sleep) don't count: a sleeping thread is idle.
   */
  whenIdle(opts: { ignoreRunningTools?: boolean } = {}): Promise<void> {
    if (opts.ignoreRunningTools) return this.waitUntil(() => this.drivers.size === 0 && this.inflight === 0);
    return this.waitUntil(() => this.isIdle());
  }

  /**
   * Resolves when the system can do nothing more by itself: idle (see whenIdle), with no active
   * subscription or pending timer left that could wake a thread later. See QuiescenceOptions for
   * giving up (`aborted`) and for a host that knows nothing can deliver input any more (`stalled`).
   */
  whenQuiescent(opts: QuiescenceOptions = {}): Promise<Quiescence> {
    return whenQuiescent(
      {
        store: {
          activeSubscriptions: () => this.opts.store.activeSubscriptions(this.roots),
          nextTimer: () => this.opts.store.nextTimer(this.roots),
        },
        whenIdle: () => this.whenIdle(),
        isIdle: () => this.isIdle(),
        nextSlice: () =>
          new Promise<void>((resolve) => {
            const off = this.events.subscribe((e) => {
              if (e.type !== 'slice-started') return;
              off();
              resolve();
            });
          }),
      },
      opts,
    );
  }

  /** A thread's record (parent, stack, status, subscriptions...) without its history. */
  threadRecord(threadId: string): Promise<ThreadRecord | undefined> {
    return this.opts.store.threadRecord(threadId);
  }

  /** Everything the thread's model sees (inherited prefix or summary included); empty for an unknown thread. */
  async threadHistory(threadId: string): Promise<readonly HistoryMessage[]> {
    return (await this.opts.store.loadThread(threadId))?.history ?? [];
  }

  /** Stored usage of every thread under `rootId`, per model (see UsageStore.usageByThread). */
  usageByThread(rootId: string): Promise<ThreadUsage[]> {
    return this.opts.store.usageByThread(rootId);
  }

  /** Number of threads with a driver right now (for tests and benchmarks). */
  get busyThreads(): number {
    return this.drivers.size;
  }

  /** Calls dispatched and not yet answered (for tests, benchmarks and quiescence). */
  get runningToolCalls(): number {
    return this.awaitingResult.size;
  }

  /**
   * The line a UI shows for a call (the tool's `display`), for a transcript rebuilt from stored
   * history, where live events' lines are not kept; undefined when its tool gives none.
   */
  callDisplay(call: { name: string; input: Record<string, unknown> }): string | undefined {
    return this.deps.tools.displayOf(call);
  }

  /** The names of the tools every thread is offered, in the order the model sees them. */
  get toolNames(): string[] {
    return this.deps.tools.definitions().map((d) => d.name);
  }

  /** The tools every thread is offered (name, description, input schema), in that order. */
  get toolDefinitions(): readonly ToolDefinition[] {
    return this.deps.tools.definitions();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.checkIdle();
    this.timers.stop();
    this.closing.abort();
    for (const d of this.drivers.values()) d.abort?.abort();
    // Running tools are not waited for: their calls are dispatched, so the next start reports
    // them as interrupted rather than running them twice.
    await this.waitUntil(() => this.drivers.size === 0 && this.inflight === 0);
    this.cache.clear();
    await this.opts.store.close();
  }

  /** Where tools, children and timers send inputs: the durable queue, then the router. */
  private async deliver(input: InputMessage): Promise<void> {
    try {
      if (!this.closed) await this.send(input);
    } finally {
      if (input.body.kind === 'tool_result') this.settled(input.threadId, input.body.toolUseId);
      // Routed by now (or a duplicate, or the system closed): nothing more is on its way.
      if (input.body.kind === 'report') this.reportArrived(input.threadId, input.body.childThreadId);
    }
  }

  /**
   * Runs a review, noting that a report to the child's parent is on its way until the report is
   * routed (or the review fails), so the parent can take it together with the others (below).
   */
  private async tracked(review: ReportReviewer, thread: ThreadRecord, report: string, ctx: Parameters<ReportReviewer>[2]) {
    const parentId = thread.parentId;
    if (parentId === null) return review(thread, report, ctx);
    const children = this.reportsUnderReview.get(parentId) ?? new Set<string>();
    this.reportsUnderReview.set(parentId, children.add(thread.id));
    try {
      return await review(thread, report, ctx);
    } catch (err) {
      this.reportArrived(parentId, thread.id);
      throw err;
    }
  }

  /**
   * A child began writing a call that may report: its parent, if woken by a sibling's report
   * meanwhile, waits for this one too (see gatheringReports). Undone when the child's slice ends.
   */
  private reportComing(childId: string): void {
    const parentId = this.drivers.get(childId)?.parentId;
    if (parentId == null) return;
    const children = this.reportsUnderReview.get(parentId) ?? new Set<string>();
    this.reportsUnderReview.set(parentId, children.add(childId));
  }

  private reportArrived(parentId: string, childId: string): void {
    const children = this.reportsUnderReview.get(parentId);
    if (!children?.delete(childId)) return;
    if (children.size === 0) this.reportsUnderReview.delete(parentId);
    this.checkIdle();
  }

  /**
   * Children that finish together (a fan-out) report within moments of each other, but each
   * review (diff, merge) takes a while. A parent woken by a report while its other children's
   * reports are still under review waits for them, so it reads them in one completion instead of
   * paying for one completion per report. User text does not wait.
   */
  private gatheringReports(threadId: string, d: Driver): boolean {
    return (
      !this.closed &&
      (this.reportsUnderReview.get(threadId)?.size ?? 0) > 0 &&
      d.queue.some((i) => i.body.kind === 'report') &&
      !d.queue.some((i) => i.body.kind === 'user_text')
    );
  }

  /** Inputs the store already made durable (fired timers). */
  private routeDelivered(inputs: InputMessage[]): void {
    for (const input of inputs) {
      if (input.body.kind === 'tool_result') this.settled(input.threadId, input.body.toolUseId);
      this.route(input.threadId, input);
    }
  }

  private settled(threadId: string, callId: string): void {
    if (this.awaitingResult.delete(key(threadId, callId))) this.checkIdle();
  }

  private route(threadId: string, input: InputMessage | null): void {
    const existing = this.drivers.get(threadId);
    if (existing) {
      if (input) existing.queue.push(input);
      else existing.kick = true;
      if (input?.body.kind === 'user_text') this.checkIdle();
      // New user text takes over from a completion that is still streaming.
      if (input?.body.kind === 'user_text') existing.abort?.abort();
      return;
    }
    const driver: Driver = { queue: input ? [input] : [], kick: input === null, abort: null };
    this.drivers.set(threadId, driver);
    void this.drive(threadId, driver);
  }

  private async drive(threadId: string, d: Driver): Promise<void> {
    try {
      while (d.queue.length > 0 || d.kick) {
        // Only when there is something to wait for: awaiting otherwise would still cost a turn of
        // the event loop, and observers would see the child's close before its report.
        if (this.gatheringReports(threadId, d)) await this.waitUntil(() => !this.gatheringReports(threadId, d));
        // Inputs an earlier slice already read from the store (see SliceOptions.takenFromStore).
        const taken = d.taken;
        const batch = taken ? d.queue.filter((i) => !taken.has(i.id)) : d.queue;
        d.queue = [];
        d.kick = false;
        const thread = await this.load(threadId);
        if (!thread) {
          for (const input of batch) {
            this.events.emit({ type: 'input-dropped', threadId, inputId: input.id, reason: 'unknown-thread' });
          }
          continue;
        }
        d.abort = new AbortController();
        d.parentId = thread.record.parentId;
        try {
          // Kept while the driver runs (a busy spell): an input read early may be routed late.
          await runSlice(this.deps, thread, batch, { signal: d.abort.signal, deduplicated: true, takenFromStore: d });
        } finally {
          d.abort = null;
          // A report begun in this slice was delivered by now, or never will be.
          if (d.parentId !== null) this.reportArrived(d.parentId, threadId);
          this.cache.put(thread);
        }
        await this.maybeCompact(thread);
      }
    } catch (err) {
      // A store failure, or closing mid-call: the inputs and the call stay durable and run again
      // on the next start; the cached thread may be half-way through a turn, so it goes.
      this.cache.take(threadId);
      if (!(err instanceof SystemClosingError)) {
        this.events.emit({ type: 'error', threadId, kind: 'store', message: (err as Error).message });
      }
    } finally {
      this.drivers.delete(threadId);
      this.checkIdle();
    }
  }

  /** Auto-compaction at 75% of the context window (local mode only, as in the Infinity runtime, hydro-project/infinity). */
  private async maybeCompact(thread: LoadedThread): Promise<void> {
    const r = thread.record;
    const setting = this.opts.contextWindow ?? 0;
    const window = typeof setting === 'function' ? setting(this.deps.model(r)) : setting;
    if (window <= 0 || r.kind === 'compaction' || r.compacting || r.status === 'closed') return;
    if (r.contextTokens <= window * 0.75) return;
    await this.send({ id: `compact:auto:${r.messageCount}`, threadId: r.id, body: { kind: 'compaction' } });
  }

  private async load(threadId: string): Promise<LoadedThread | undefined> {
    return this.cache.take(threadId) ?? (await this.opts.store.loadThread(threadId));
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
