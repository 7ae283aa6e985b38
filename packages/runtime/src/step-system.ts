import { EventBus, type Observer } from './events.js';
import type { InputMessage } from './input.js';
import { runSlice, type SliceDeps } from './slice.js';
import { sliceDeps, type SystemOptions } from './system-options.js';
import { timerResult } from './timer-scheduler.js';
import type { Tool } from './tool.js';

export interface StepSystemOptions extends SystemOptions {
  /** The host's queue: tool results produced by dispatched calls are sent here. */
  send(input: InputMessage): Promise<void>;
}

/**
 * Step (serverless) mode: `step(batch)` runs one slice per thread in the batch and keeps nothing
 * in memory between calls; every step loads from the store. Ordering per thread across calls is
 * the host queue's job (e.g. FIFO groups keyed by thread id).
 */
export class StepSystem {
  readonly events = new EventBus();
  private readonly deps: SliceDeps;

  constructor(private readonly opts: StepSystemOptions) {
    // Timers are stored; the host polls `fireTimers` (or schedules a delayed message) instead.
    this.deps = sliceDeps(opts, this.events, (input) => opts.send(input), () => {});
  }

  subscribe(observer: Observer): () => void {
    return this.events.subscribe(observer);
  }

  /** Offers more tools from the next completion on (see LocalSystem.addTools). */
  addTools(tools: readonly Tool[]): Promise<Array<{ name: string; reason: string }>> {
    return this.deps.tools.add(tools);
  }

  /** Runs the batch's threads concurrently; after all finish, rethrows the first failure. */
  async step(batch: readonly InputMessage[]): Promise<void> {
    const byThread = new Map<string, InputMessage[]>();
    for (const input of batch) {
      const list = byThread.get(input.threadId);
      if (list) list.push(input);
      else byThread.set(input.threadId, [input]);
    }
    const results = await Promise.allSettled(
      [...byThread].map(([threadId, inputs]) => this.stepThread(threadId, inputs)),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Turns due timers into tool results, sent to the host queue. Returns how many fired. */
  async fireTimers(now: number = Date.now()): Promise<number> {
    const fired = await this.opts.store.fireTimers(now, timerResult);
    for (const input of fired) await this.opts.send(input);
    return fired.length;
  }

  private async stepThread(threadId: string, inputs: InputMessage[]): Promise<void> {
    const store = this.opts.store;
    if (inputs.some((i) => i.body.kind === 'user_text')) await store.ensureRootThread(threadId);
    const thread = await store.loadThread(threadId);
    if (!thread) {
      for (const input of inputs) {
        this.events.emit({ type: 'input-dropped', threadId, inputId: input.id, reason: 'stale' });
      }
      return;
    }
    await runSlice(this.deps, thread, inputs, {
      signal: new AbortController().signal,
      deduplicated: false,
    });
  }
}
