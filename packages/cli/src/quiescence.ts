import type { LocalSystem, RuntimeEvent, RuntimeStore } from '@infinity-code/runtime';

/**
 * Resolves when the session can do nothing more by itself: no slice running, no input queued, no
 * tool call awaiting its result, no active subscription (a background command still streaming)
 * and no timer pending. Threads that merely ended their turn don't hold it open.
 */
export async function untilQuiescent(system: LocalSystem, store: RuntimeStore, signal: AbortSignal): Promise<void> {
  for (;;) {
    await Promise.race([system.whenIdle(), aborted(signal)]);
    if (signal.aborted) return;
    const [subs, timer] = await Promise.all([store.activeSubscriptions(), store.nextTimer()]);
    if (subs.length === 0 && timer === undefined) return;
    // Something can still wake a thread: wait until a slice starts, then idle again.
    await Promise.race([nextEvent(system, (e) => e.type === 'slice-started'), aborted(signal)]);
  }
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
