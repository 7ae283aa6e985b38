/** Process exit codes (docs/architecture.md, *CLI contracts*); scripts rely on them. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  config: 3,
  unapplied: 4,
  limit: 5,
  interrupted: 130,
  /** Stopped by SIGTERM (what timeout, docker stop and CI cancellation send): 128 + 15. */
  terminated: 143,
  /** Stopped by SIGHUP (the terminal went away): 128 + 1. */
  hungUp: 129,
} as const;

/** The signals a headless run stops on, each ending it as SIGINT does, with its own exit code. */
export const STOP_SIGNALS = { SIGINT: EXIT.interrupted, SIGTERM: EXIT.terminated, SIGHUP: EXIT.hungUp } as const;
export type StopSignal = keyof typeof STOP_SIGNALS;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * Marks a UserError. The CLI's bundle holds two copies of this module (a headless run is a build of
 * its own: scripts/bundle.mjs), so `instanceof` checks this mark rather than the class.
 */
const USER_ERROR = Symbol.for('infinity-code.UserError');

/** An error meant for the user: one clear paragraph and an exit code, never a stack trace. */
export class UserError extends Error {
  readonly [USER_ERROR] = true;

  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'UserError';
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { [USER_ERROR]?: unknown })[USER_ERROR] === true;
  }
}
