// Prompt caching as the real service does it: a breakpoint (cache_control) writes the prefix up
// to it; a later request reads the longest live prefix found at a breakpoint or up to `lookback`
// blocks before one. Any change earlier in the prefix changes every later hash: a miss from there.
import { prefixBlocks, prefixHashes } from './prompt-prefix.js';

export interface PromptCacheOptions {
  /** Block positions checked before each breakpoint (default 20). */
  lookback?: number;
  /** Shorter prefixes are not written (default 1024, as for Sonnet-class models). */
  minCacheTokens?: number;
  /** Lifetime of an entry, refreshed when it is read (default 5 minutes). */
  ttlMs?: number;
}

/** How a request's input splits between cache reads, cache writes and uncached tokens. */
export interface CacheOutcome {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** Path of the last block read from cache (`messages.2.content.0`), if any. */
  readThrough?: string;
  /** Path of the last block written to cache, if any. */
  writtenThrough?: string;
}

export const DEFAULT_LOOKBACK = 20;
export const DEFAULT_MIN_CACHE_TOKENS = 1024;
export const DEFAULT_CACHE_TTL_MS = 5 * 60 * 1000;

export class PromptCache {
  readonly #lookback: number;
  readonly #minTokens: number;
  readonly #ttlMs: number;
  /** Prefix hash to expiry time. */
  readonly #entries = new Map<string, number>();

  constructor(opts: PromptCacheOptions = {}) {
    this.#lookback = opts.lookback ?? DEFAULT_LOOKBACK;
    this.#minTokens = opts.minCacheTokens ?? DEFAULT_MIN_CACHE_TOKENS;
    this.#ttlMs = opts.ttlMs ?? DEFAULT_CACHE_TTL_MS;
  }

  /** Accounts one request's input at time `now`, reading and writing the cache as it goes. */
  process(body: Record<string, unknown>, now: number): CacheOutcome {
    const blocks = prefixBlocks(body);
    const cumulative: number[] = [];
    blocks.reduce((sum, b, i) => (cumulative[i] = sum + b.tokens), 0);
    const total = cumulative.at(-1) ?? 0;
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    const last = breakpoints.at(-1);
    if (last === undefined) return { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

    const hashes = prefixHashes(typeof body.model === 'string' ? body.model : '', blocks, last);
    let readAt = -1;
    for (const bp of breakpoints) {
      for (let p = bp; p >= Math.max(0, bp - this.#lookback) && p > readAt; p--) {
        if (this.#live(hashes[p], now)) {
          readAt = p;
          break;
        }
      }
    }
    if (readAt >= 0) this.#entries.set(hashes[readAt], now + this.#ttlMs);
    const read = readAt >= 0 ? cumulative[readAt] : 0;

    let written = 0;
    let writtenAt = -1;
    for (const bp of breakpoints) {
      if (cumulative[bp] < this.#minTokens) continue;
      this.#entries.set(hashes[bp], now + this.#ttlMs);
      if (bp > readAt) {
        written = cumulative[bp] - read;
        writtenAt = bp;
      }
    }
    return {
      input_tokens: total - read - written,
      cache_creation_input_tokens: written,
      cache_read_input_tokens: read,
      ...(readAt >= 0 && { readThrough: blocks[readAt].path }),
      ...(writtenAt >= 0 && { writtenThrough: blocks[writtenAt].path }),
    };
  }

  #live(hash: string, now: number): boolean {
    const expires = this.#entries.get(hash);
    if (expires === undefined) return false;
    if (expires > now) return true;
    this.#entries.delete(hash);
    return false;
  }
}
