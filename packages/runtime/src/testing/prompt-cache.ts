// Prompt caching as the real service does it: a breakpoint (cache_control) writes the prefix up
// to it; a later request reads the longest live prefix found at a breakpoint or up to `lookback`
// blocks before one. Any change earlier in the prefix changes every later hash: a miss from there.
import { modelInfo } from '../models.js';
import { prefixBlocks, prefixHashes } from './prompt-prefix.js';

export interface PromptCacheOptions {
  /** Block positions checked before each breakpoint (default 20). */
  lookback?: number;
  /**
   * Shorter prefixes are not written. Default: the request model's minimum from the model table
   * (512 on the 5.5 models), or 1024 for ids outside it.
   */
  minCacheTokens?: number;
  /** Lifetime of an entry written or read at a default (5-minute) marker (default 5 minutes). */
  ttlMs?: number;
  /** Lifetime of an entry written or read at a `ttl: '1h'` marker (default 1 hour). */
  ttl1hMs?: number;
}

/** How a request's input splits between cache reads, cache writes and uncached tokens. */
export interface CacheOutcome {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** cache_creation_input_tokens by lifetime: each written span counts at the marker that ends it. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /** Path of the last block read from cache (`messages.2.content.0`), if any. */
  readThrough?: string;
  /** Path of the last block written to cache, if any. */
  writtenThrough?: string;
}

export const DEFAULT_LOOKBACK = 20;
export const DEFAULT_MIN_CACHE_TOKENS = 1024;
export const DEFAULT_CACHE_TTL_MS = 5 * 60 * 1000;
export const DEFAULT_CACHE_TTL_1H_MS = 60 * 60 * 1000;

export class PromptCache {
  readonly #lookback: number;
  readonly #minTokens: number | undefined;
  readonly #ttlMs: Record<'5m' | '1h', number>;
  /** Prefix hash to expiry time. */
  readonly #entries = new Map<string, number>();

  constructor(opts: PromptCacheOptions = {}) {
    this.#lookback = opts.lookback ?? DEFAULT_LOOKBACK;
    this.#minTokens = opts.minCacheTokens;
    this.#ttlMs = { '5m': opts.ttlMs ?? DEFAULT_CACHE_TTL_MS, '1h': opts.ttl1hMs ?? DEFAULT_CACHE_TTL_1H_MS };
  }

  /** Accounts one request's input at time `now`, reading and writing the cache as it goes. */
  process(body: Record<string, unknown>, now: number): CacheOutcome {
    const blocks = prefixBlocks(body);
    const cumulative: number[] = [];
    blocks.reduce((sum, b, i) => (cumulative[i] = sum + b.tokens), 0);
    const total = cumulative.at(-1) ?? 0;
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    const last = breakpoints.at(-1);
    const creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    if (last === undefined) return { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: creation };

    const model = typeof body.model === 'string' ? body.model : '';
    const minTokens = this.#minTokens ?? modelInfo(model)?.minCacheTokens ?? DEFAULT_MIN_CACHE_TOKENS;
    const hashes = prefixHashes(model, blocks, last);
    let readAt = -1;
    for (const bp of breakpoints) {
      for (let p = bp; p >= Math.max(0, bp - this.#lookback) && p > readAt; p--) {
        if (this.#live(hashes[p], now)) {
          readAt = p;
          break;
        }
      }
    }
    // A read refreshes the entry for the lifetime of the marker it was found from.
    const readFor = breakpoints.find((bp) => bp >= readAt);
    if (readAt >= 0 && readFor !== undefined) this.#keep(hashes[readAt], now + this.#ttlMs[blocks[readFor].ttl]);
    const read = readAt >= 0 ? cumulative[readAt] : 0;

    let writtenTo = read;
    let writtenAt = -1;
    for (const bp of breakpoints) {
      if (cumulative[bp] < minTokens) continue;
      const ttl = blocks[bp].ttl;
      this.#keep(hashes[bp], now + this.#ttlMs[ttl]);
      if (bp > readAt) {
        creation[ttl === '1h' ? 'ephemeral_1h_input_tokens' : 'ephemeral_5m_input_tokens'] += cumulative[bp] - writtenTo;
        writtenTo = cumulative[bp];
        writtenAt = bp;
      }
    }
    const written = writtenTo - read;
    return {
      input_tokens: total - read - written,
      cache_creation_input_tokens: written,
      cache_read_input_tokens: read,
      cache_creation: creation,
      ...(readAt >= 0 && { readThrough: blocks[readAt].path }),
      ...(writtenAt >= 0 && { writtenThrough: blocks[writtenAt].path }),
    };
  }

  /** A 5-minute touch never shortens what a 1-hour marker keeps. */
  #keep(hash: string, until: number): void {
    this.#entries.set(hash, Math.max(until, this.#entries.get(hash) ?? 0));
  }

  #live(hash: string, now: number): boolean {
    const expires = this.#entries.get(hash);
    if (expires === undefined) return false;
    if (expires > now) return true;
    this.#entries.delete(hash);
    return false;
  }
}
