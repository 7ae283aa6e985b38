// The request headers that change what the API accepts: the API version and the beta flags.

/** The API version the SDK 1.x sends; under it sampling parameters are refused outright. */
export const API_VERSION_2026_10_21 = '2026-10-21';
export const BETA_THINKING_DISPLAY_UPDATES = 'thinking-display-updates-2026-08-18';
export const BETA_THINKING_BINDING_CONTROLS = 'thinking-binding-controls-2026-08-01';

/** Header names as node gives them: lower case. */
export type RequestHeaders = Readonly<Record<string, string>>;

/** `anthropic-beta` is a comma-separated list, and the SDK may send several headers joined. */
export function hasBeta(headers: RequestHeaders, flag: string): boolean {
  return (headers['anthropic-beta'] ?? '').split(',').some((b) => b.trim() === flag);
}

export function apiVersion(headers: RequestHeaders): string | undefined {
  return headers['anthropic-version'];
}
