import type { LocalSystem, RuntimeEvent, RuntimeStore, Subscription } from '@infinity-code/runtime';

/** How waiting ended: nothing left to do, the user interrupted, or nothing could wake what waits. */
export type Quiescence =
  | { kind: 'quiescent' }
  | { kind: 'aborted' }
  | { kind: 'stalled'; waiting: Array<{ threadId: string; subscription: Subscription }> };

/**
 * Resolves when the session can do nothing more by itself: no slice running, no input queued, no
 * tool call awaiting its result, no active subscription (a background command still streaming)
 * and no timer pending. Threads that merely ended their turn don't hold it open. `stalled`
 * resolves when the process has nothing left to run (see `whenLoopDrains`): a subscription still
 * open then has nobody behind it, and waiting longer would wait forever.
 */
export async function untilQuiescent(
  system: LocalSystem,
  store: RuntimeStore,
  signal: AbortSignal,
  stalled: Promise<void> = new Promise(() => undefined),
): Promise<Quiescence> {
  let isStalled = false;
  const stall = stalled.then(() => {
    isStalled = true;
  });
  for (;;) {
    await Promise.race([system.whenIdle(), aborted(signal), stall]);
    if (signal.aborted) return { kind: 'aborted' };
    const [subs, timer] = await Promise.all([store.activeSubscriptions(), store.nextTimer()]);
    if (isStalled) return { kind: 'stalled', waiting: subs.map((s) => ({ threadId: s.thread.id, subscription: s.subscription })) };
    if (subs.length === 0 && timer === undefined) return { kind: 'quiescent' };
    // Something can still wake a thread: wait until a slice starts, then idle again.
    await Promise.race([nextEvent(system, (e) => e.type === 'slice-started'), aborted(signal), stall]);
  }
}

/**
 * Resolves when Node's event loop runs dry (`beforeExit`): no timer, socket or child process is
 * left that could ever deliver another input. Without it, a run waiting on such an input would
 * end silently with exit code 0.
 */
export function whenLoopDrains(): { drained: Promise<void>; dispose(): void } {
  let listener: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => {
    listener = () => resolve();
    process.once('beforeExit', listener);
  });
  return { drained, dispose: () => process.off('beforeExit', listener) };
}

function nextEvent(system: LocalSystem, match: (e: RuntimeEvent) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const off = system.subscribe((e) => {
      if (match(e)) {
        off();
        resolve();
      }
    });
  });
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
