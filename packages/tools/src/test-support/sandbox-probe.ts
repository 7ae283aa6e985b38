// A view of a real sandbox that logs what the tools ask of it and can hold an operation back until
// the test lets it go: how a test sees which call touched the sandbox, in what order, without
// timing anything.
import type { Sandbox } from '@infinity-code/sandbox';

/** The operations logged, as `${method} ${first argument}` (e.g. "writeFile a.txt", "exec cat a.txt"). */
const WATCHED = new Set(['readFile', 'writeFile', 'stat', 'exists', 'exec']);

export interface Hold {
  /** Resolves when the held operation has been asked for (and is waiting). */
  readonly reached: Promise<void>;
  /** Lets it go on. */
  release(): void;
}

export class SandboxProbe {
  /** Each watched operation when asked for, then `${op}: done` when it finished. */
  readonly log: string[] = [];
  readonly view: Sandbox;
  private holds: Array<{ match: (op: string) => boolean; arrive: () => void; released: Promise<void> }> = [];
  private readonly releases: Array<() => void> = [];

  constructor(sb: Sandbox) {
    this.view = new Proxy(sb, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        const fn = (value as (...a: unknown[]) => unknown).bind(target);
        if (typeof prop !== 'string' || !WATCHED.has(prop)) return fn;
        return async (...args: unknown[]) => {
          const op = `${prop} ${String(args[0])}`;
          this.log.push(op);
          await this.holdFor(op);
          const result = await fn(...args);
          this.log.push(`${op}: done`);
          return result;
        };
      },
    });
  }

  /** The next operation `match` accepts (its log text, exactly or by pattern) waits until released. */
  hold(match: string | RegExp): Hold {
    let arrive!: () => void;
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const test = typeof match === 'string' ? (op: string) => op === match : (op: string) => match.test(op);
    this.holds.push({ match: test, arrive, released });
    this.releases.push(release);
    return { reached, release };
  }

  /** Lets every held operation go, and holds nothing more (after a failed test, so nothing hangs). */
  releaseAll(): void {
    this.holds = [];
    for (const release of this.releases) release();
  }

  /** Index of the first log entry equal to `op` (or matching it), -1 if none. */
  indexOf(op: string | RegExp): number {
    return this.log.findIndex((e) => (typeof op === 'string' ? e === op : op.test(e)));
  }

  private async holdFor(op: string): Promise<void> {
    const i = this.holds.findIndex((h) => h.match(op));
    if (i < 0) return;
    const [h] = this.holds.splice(i, 1);
    h.arrive();
    await h.released;
  }
}
