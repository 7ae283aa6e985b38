import { SandboxError } from '@infinity-code/sandbox/patches';

/**
 * A failure the model caused and can fix: its message becomes the tool result (flagged as an
 * error), so it always says what to do instead.
 */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

/** A path argument leaves the sandbox: `..`, an absolute path elsewhere, or a symlink out. */
export class PathEscapeError extends ToolError {
  constructor(
    readonly path: string,
    why: string,
  ) {
    super(
      `Path "${path}" ${why}. Tools only act inside the repository's sandbox: use a path relative ` +
        'to the repository root (e.g. src/index.ts); list_files shows what is there.',
    );
    this.name = 'PathEscapeError';
  }
}

/** The text a model sees for any failure: ours as is, the sandbox's (already actionable), or a bug. */
export function errorText(err: unknown): string {
  if (err instanceof ToolError) return `Error: ${err.message}`;
  // The sandbox's messages already say what to do (its path errors name the path and why).
  if (err instanceof SandboxError) return `Error: ${err.message}`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  // Reached through a symlink the tools could not classify up front.
  if (code === 'EISDIR') return 'Error: the path is a directory, not a file. Use list_files to see what it contains.';
  if (code === 'EACCES' || code === 'EPERM') return 'Error: permission denied for that path in the sandbox; try another path.';
  const message = err instanceof Error ? err.message : String(err);
  return `Error: the tool failed unexpectedly: ${message}`;
}
