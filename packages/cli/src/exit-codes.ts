/** Process exit codes (docs/architecture.md, *CLI contracts*); scripts rely on them. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  config: 3,
  unapplied: 4,
  limit: 5,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error meant for the user: one clear paragraph and an exit code, never a stack trace. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
