import type { InputMessage } from './input.js';
import { toolResult } from './input.js';
import { text } from './messages.js';
import type { RootFilter, RuntimeStore, Timer } from './store.js';

// setTimeout's limit; a longer wait simply re-arms when this one fires.
const MAX_DELAY = 2 ** 31 - 1;

export function timerResult(t: Timer): InputMessage {
  return toolResult(t.threadId, t.callId, [text(`The wait is over (timer due at ${new Date(t.dueAt).toISOString()}).`)], {
    display: { summary: 'the wait is over' },
  });
}

/**
 * One scheduler for all durable timers: a single Node timer armed for the earliest due time,
 * never one per thread. Fired timers become queued tool results in the same transaction that
 * removes them, so a crash neither loses nor repeats a wake-up.
 */
export class TimerScheduler {
  private handle: NodeJS.Timeout | null = null;
  private armedFor = Infinity;
  private stopped = false;

  constructor(
    private readonly store: RuntimeStore,
    private readonly now: () => number,
    private readonly onFired: (inputs: InputMessage[]) => void,
    /** Whose timers these are (see LocalSystemOptions.roots). */
    private readonly roots: () => RootFilter = () => undefined,
  ) {}

  async start(): Promise<void> {
    const next = await this.store.nextTimer(this.roots());
    if (next) this.arm(next.dueAt);
  }

  /** A timer due at `dueAt` exists; make sure we wake up by then. */
  arm(dueAt: number): void {
    if (this.stopped || dueAt >= this.armedFor) return;
    if (this.handle) clearTimeout(this.handle);
    this.armedFor = dueAt;
    const delay = Math.min(MAX_DELAY, Math.max(0, dueAt - this.now()));
    this.handle = setTimeout(() => void this.fire(), delay);
  }

  stop(): void {
    this.stopped = true;
    if (this.handle) clearTimeout(this.handle);
    this.handle = null;
  }

  private async fire(): Promise<void> {
    this.handle = null;
    this.armedFor = Infinity;
    if (this.stopped) return;
    const fired = await this.store.fireTimers(this.now(), timerResult, this.roots());
    if (this.stopped) return;
    if (fired.length > 0) this.onFired(fired);
    const next = await this.store.nextTimer(this.roots());
    if (next) this.arm(next.dueAt);
  }
}
