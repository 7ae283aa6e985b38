import { ALWAYS_SECRET_ENV } from './options.js';

/**
 * The environment changes for every command: secrets removed (undefined removes a variable from
 * the inherited environment), and no pagers, colours or prompts, since nobody is at a terminal.
 */
export function commandEnv(secretNames: readonly string[]): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    TERM: 'dumb',
  };
  for (const name of [...ALWAYS_SECRET_ENV, ...secretNames]) env[name] = undefined;
  return env;
}
