import type { Subscription, RuntimeStore } from './store.js';

/** How waiting for quiescence ended: nothing left to do, the caller gave up, or nothing could wake what waits. */
export type Quiescence =
  | { kind: 'quiescent' }
  | { kind: 'aborted' }
  | { kind: 'stalled'; waiting: Array<{ threadId: string; subscription: Subscription }> };

export interface QuiescenceOptions {
  /** Stop waiting: the answer is `aborted`. */
  signal?: AbortSignal;
  /**
   * Resolves when the host knows nothing can deliver another input (Node's event loop ran dry,
   * say): what still waits then waits forever, and the answer is `stalled`, naming it.
   */
  stalled?: Promise<void>;
}

/** What the waiting needs from the system: its in-memory idleness and its wake-ups. */
export interface QuiescenceSource {
  store: Pick<RuntimeStore, 'activeSubscriptions' | 'nextTimer'>;
  /** Resolves when no slice runs, nothing is being enqueued and no dispatched call awaits its result. */
  whenIdle(): Promise<void>;
  isIdle(): boolean;
  /** Resolves when a slice starts (something woke a thread). */
  nextSlice(): Promise<void>;
}

/**
 * Resolves when the system can do nothing more by itself: idle (see QuiescenceSource.whenIdle),
 * and no active subscription (a background command still streaming) or timer that could wake a
 * thread later. Threads that merely ended their turn don't hold it open. Subscriptions and
 * timers are read from the store: an idle thread keeps them there, not in memory.
 */
export async function whenQuiescent(source: QuiescenceSource, opts: QuiescenceOptions = {}): Promise<Quiescence> {
  const { signal } = opts;
  let isStalled = false;
  const stall = opts.stalled?.then(() => {
    isStalled = true;
  });
  // Made once: a listener per round would pile up on the signal over a long run.
  const stop = Promise.race([aborted(signal), ...(stall ? [stall] : [])]);
  const or = (p: Promise<void>) => Promise.race([p, stop]);
  for (;;) {
    await or(source.whenIdle());
    if (signal?.aborted) return { kind: 'aborted' };
    const [subs, timer] = await Promise.all([source.store.activeSubscriptions(), source.store.nextTimer()]);
    if (isStalled) return { kind: 'stalled', waiting: subs.map((s) => ({ threadId: s.thread.id, subscription: s.subscription })) };
    // A slice may have started while the store was read: what it does decides.
    if (!source.isIdle()) continue;
    if (subs.length === 0 && timer === undefined) return { kind: 'quiescent' };
    // Something can still wake a thread: wait until a slice starts, then for idleness again.
    await or(source.nextSlice());
  }
}

function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return new Promise(() => undefined);
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
