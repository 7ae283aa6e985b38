import { ALWAYS_SECRET_ENV } from './options.js';

export interface CommandEnvOptions {
  /** Removed although they don't look like credentials (config `secretEnv`). */
  secretNames?: readonly string[];
  /** Let through although they look like credentials (config `sandbox.envAllow`). */
  allow?: readonly string[];
  /** Where the allowed values come from: this process's environment. */
  from?: NodeJS.ProcessEnv;
}

/**
 * The environment changes for every command, on top of what the sandbox passes on (this
 * process's environment without anything that looks like a credential): the user's own secrets
 * removed and allowed variables put back (undefined removes a variable), and no pagers, colours
 * or prompts, since nobody is at a terminal. Read when each command starts, so it follows
 * this process's environment.
 */
export function commandEnv(opts: CommandEnvOptions = {}): Record<string, string | undefined> {
  const from = opts.from ?? process.env;
  const env: Record<string, string | undefined> = {
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    TERM: 'dumb',
  };
  // The sandbox drops these from what it inherits; naming them brings them back.
  for (const name of opts.allow ?? []) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  // Last, so a name both allowed and secret stays out, and the agent's credentials always do.
  for (const name of [...ALWAYS_SECRET_ENV, ...(opts.secretNames ?? [])]) env[name] = undefined;
  return env;
}
