import { EXIT, UserError } from './exit-codes.js';

/**
 * How the CLI reaches the Messages API: an API key (sent as `x-api-key`) or a bearer token (sent
 * as `Authorization: Bearer`, what gateways and proxies issue), or both when both are set, as the
 * SDK and Claude Code do; and the API's address when it is not Anthropic's.
 */
export interface AnthropicCredentials {
  apiKey?: string;
  authToken?: string;
  baseURL?: string;
}

/** The Anthropic credentials from the environment, or a config error saying what to do. */
export function anthropicEnv(env: NodeJS.ProcessEnv): AnthropicCredentials {
  const apiKey = env.ANTHROPIC_API_KEY || undefined;
  const authToken = env.ANTHROPIC_AUTH_TOKEN || undefined;
  if (!apiKey && !authToken) {
    throw new UserError(
      'Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set. Export your Anthropic API key ' +
        '(export ANTHROPIC_API_KEY=...), or the bearer token your gateway issued (export ANTHROPIC_AUTH_TOKEN=...), ' +
        'and run again, or try `infinity-code --demo`, which needs no key.',
      EXIT.config,
    );
  }
  const baseURL = env.ANTHROPIC_BASE_URL;
  if (baseURL) checkBaseURL(baseURL);
  return { ...(apiKey ? { apiKey } : {}), ...(authToken ? { authToken } : {}), ...(baseURL ? { baseURL } : {}) };
}

/**
 * A base URL that is no http(s) URL at all fails here, before anything starts: the SDK would
 * otherwise send the request somewhere unexpected (`localhost:8080` parses as the scheme
 * "localhost:") or fail with fetch's jargon.
 */
function checkBaseURL(value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '') return;
  throw new UserError(
    `ANTHROPIC_BASE_URL is set to "${value}", which is not an http:// or https:// address. Set it to the address ` +
      'of the Messages API you use (like https://api.anthropic.com or http://127.0.0.1:8080), or unset it to use the Anthropic API.',
    EXIT.config,
  );
}
