import { EXIT, UserError } from './exit-codes.js';

/** The Anthropic credentials from the environment, or a config error saying what to do. */
export function anthropicEnv(env: NodeJS.ProcessEnv): { apiKey: string; baseURL?: string } {
  const apiKey = env.ANTHROPIC_API_KEY;
  if (!apiKey) {
    throw new UserError(
      'ANTHROPIC_API_KEY is not set. Export your Anthropic API key (export ANTHROPIC_API_KEY=...) ' +
        'and run again, or try `infinity-code --demo`, which needs no key.',
      EXIT.config,
    );
  }
  const baseURL = env.ANTHROPIC_BASE_URL;
  return baseURL ? { apiKey, baseURL } : { apiKey };
}
