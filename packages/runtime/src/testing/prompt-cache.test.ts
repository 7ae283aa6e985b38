import { describe, expect, it } from 'vitest';
import { PromptCache, type CacheOutcome } from './prompt-cache.js';

const MARK = { cache_control: { type: 'ephemeral' } };
/** A text block of exactly `tokens` estimated tokens (four characters each). */
const block = (tokens: number, marked = false, fill = 'a') => ({ type: 'text', text: fill.repeat(tokens * 4), ...(marked && MARK) });
const tiny = (name: string, marked = false) => ({ type: 'text', text: name, ...(marked && MARK) });
/** An id outside the model table, so the minimum is the 1024 default these numbers are built on. */
const request = (system: unknown[], messages: unknown[], tools?: unknown[]) => ({
  model: 'claude-test',
  system,
  messages,
  ...(tools && { tools }),
});
const usage = (o: CacheOutcome) => [o.input_tokens, o.cache_creation_input_tokens, o.cache_read_input_tokens];

describe('PromptCache', () => {
  it('writes up to the last breakpoint; the next turn reads that prefix and writes only its new part', () => {
    const cache = new PromptCache();
    const system = [block(1000, true)];
    const first = cache.process(request(system, [{ role: 'user', content: [block(100, true)] }]), 0);
    // Input, write, read: the system alone (1000) is below the minimum, so it is written as part of 1100.
    expect(usage(first)).toEqual([0, 1100, 0]);
    expect(first.writtenThrough).toBe('messages.0.content.0');

    const next = request(system, [
      { role: 'user', content: [block(100)] },
      { role: 'assistant', content: [block(10)] },
      { role: 'user', content: [block(20, true), block(5)] },
    ]);
    const second = cache.process(next, 1000);
    expect(usage(second)).toEqual([5, 30, 1100]);
    expect(second.readThrough).toBe('messages.0.content.0');
    expect(second.writtenThrough).toBe('messages.2.content.0');
  });

  it('counts tool definitions first, by their JSON, and a string system prompt as one block', () => {
    const cache = new PromptCache({ minCacheTokens: 1 });
    const tool = { name: 'read_file', input_schema: { type: 'object' }, ...MARK };
    const toolTokens = Math.ceil(JSON.stringify({ name: 'read_file', input_schema: { type: 'object' } }).length / 4);
    const body = { model: 'claude-test', tools: [tool], system: 'x'.repeat(40), messages: [{ role: 'user', content: 'y'.repeat(8) }] };
    expect(usage(cache.process(body, 0))).toEqual([10 + 2, toolTokens, 0]);
    expect(usage(cache.process(body, 1))).toEqual([12, 0, toolTokens]);
  });

  it('misses from the first changed byte on: a one-character change in the system prompt voids it all', () => {
    const cache = new PromptCache();
    const messages = [{ role: 'user', content: [block(100, true)] }];
    cache.process(request([block(1000)], messages), 0);
    const changed = request([{ type: 'text', text: `${'a'.repeat(3999)}b` }], messages);
    expect(usage(cache.process(changed, 1))).toEqual([0, 1100, 0]);
    expect(usage(cache.process(request([block(1000)], messages), 2))).toEqual([0, 0, 1100]);
  });

  it('keys on content, not markers: moving or rewording cache_control still hits', () => {
    const cache = new PromptCache();
    cache.process(request([block(1100, true)], [{ role: 'user', content: [tiny('hi')] }]), 0);
    const unmarked = request([{ type: 'text', text: 'a'.repeat(4400), cache_control: { type: 'ephemeral', ttl: '5m' } }], [
      { role: 'user', content: [tiny('hi')] },
    ]);
    expect(usage(cache.process(unmarked, 1))).toEqual([1, 0, 1100]);
    const markedLater = request([block(1100)], [{ role: 'user', content: [tiny('hi', true)] }]);
    expect(usage(cache.process(markedLater, 2))).toEqual([0, 1, 1100]);
  });

  it('keys on place too: the same text as another role is another prefix', () => {
    const cache = new PromptCache();
    cache.process(request([tiny('s')], [{ role: 'user', content: [block(1100, true)] }]), 0);
    const asAssistant = request([tiny('s')], [{ role: 'user', content: [tiny('q')] }, { role: 'assistant', content: [block(1100, true)] }]);
    expect(cache.process(asAssistant, 1).cache_read_input_tokens).toBe(0);
  });

  it('looks back 20 blocks before a breakpoint for an entry, and no further', () => {
    /** Reads after caching a 1025-token system prompt, with a breakpoint `distance` blocks later. */
    const readAt = (distance: number): number => {
      const cache = new PromptCache();
      cache.process(request([block(1025, true)], [{ role: 'user', content: [tiny('x')] }]), 0);
      const blocks = Array.from({ length: distance }, (_, i) => tiny(`b${i}`, i === distance - 1));
      return cache.process(request([block(1025)], [{ role: 'user', content: blocks }]), 1).cache_read_input_tokens;
    };
    expect(readAt(5)).toBe(1025);
    expect(readAt(20)).toBe(1025);
    expect(readAt(21)).toBe(0);
    expect(readAt(25)).toBe(0);
    const narrow = new PromptCache({ lookback: 2 });
    narrow.process(request([block(1025, true)], [{ role: 'user', content: [tiny('x')] }]), 0);
    const three = [tiny('b0'), tiny('b1'), tiny('b2', true)];
    expect(narrow.process(request([block(1025)], [{ role: 'user', content: three }]), 1).cache_read_input_tokens).toBe(0);
  });

  it('stores the prefix at every qualifying breakpoint and reads the longest one in reach', () => {
    const cache = new PromptCache();
    const system = [block(1100, true)];
    cache.process(request(system, [{ role: 'user', content: [block(50, true)] }]), 0);
    // Diverging after the system prompt still reads the system prompt's entry.
    const other = cache.process(request(system, [{ role: 'user', content: [block(60, true, 'z')] }]), 1);
    expect(usage(other)).toEqual([0, 60, 1100]);
    // Both entries are within reach of this breakpoint; the longer wins.
    const longer = request(system, [{ role: 'user', content: [block(50), tiny('more', true)] }]);
    expect(usage(cache.process(longer, 2))).toEqual([0, 1, 1150]);
  });

  it('caches nothing below the minimum: no write, and the next request reads nothing', () => {
    const cache = new PromptCache();
    const body = request([block(1000, true)], [{ role: 'user', content: [block(23, true)] }]);
    expect(usage(cache.process(body, 0))).toEqual([1023, 0, 0]);
    expect(usage(cache.process(body, 1))).toEqual([1023, 0, 0]);
    const low = new PromptCache({ minCacheTokens: 100 });
    expect(usage(low.process(body, 0))).toEqual([0, 1023, 0]);
  });

  it('forgets an entry after its lifetime unless a read refreshed it', () => {
    const min = 60_000;
    const body = request([block(1100, true)], [{ role: 'user', content: [tiny('q')] }]);
    const idle = new PromptCache();
    idle.process(body, 0);
    expect(idle.process(body, 6 * min).cache_read_input_tokens).toBe(0);

    const busy = new PromptCache();
    busy.process(body, 0);
    expect(busy.process(body, 4 * min).cache_read_input_tokens).toBe(1100);
    expect(busy.process(body, 8 * min).cache_read_input_tokens).toBe(1100);
    const shortLived = new PromptCache({ ttlMs: 1000 });
    shortLived.process(body, 0);
    expect(shortLived.process(body, 1000).cache_read_input_tokens).toBe(0);
  });

  it('keeps models apart', () => {
    const cache = new PromptCache();
    const body = request([block(1100, true)], [{ role: 'user', content: [tiny('q')] }]);
    cache.process(body, 0);
    expect(cache.process({ ...body, model: 'claude-other' }, 1).cache_read_input_tokens).toBe(0);
  });

  it("takes the minimum from the model table (512 on the 5.5 models) unless the option sets one", () => {
    const body = (model: string) => ({ ...request([block(600, true)], [{ role: 'user', content: [tiny('q')] }]), model });
    expect(usage(new PromptCache().process(body('claude-sonnet-5-5'), 0))).toEqual([1, 600, 0]);
    expect(usage(new PromptCache().process(body('claude-opus-4-8'), 0))).toEqual([601, 0, 0]);
    expect(usage(new PromptCache().process(body('claude-test'), 0))).toEqual([601, 0, 0]);
    expect(usage(new PromptCache({ minCacheTokens: 1024 }).process(body('claude-sonnet-5-5'), 0))).toEqual([601, 0, 0]);
  });

  it('splits writes by the ttl of the marker that ends each span, and keeps 1-hour entries an hour', () => {
    const min = 60_000;
    const hour = { cache_control: { type: 'ephemeral', ttl: '1h' } };
    const system = [{ ...block(1100), ...hour }];
    const body = request(system, [{ role: 'user', content: [block(200, true), tiny('q')] }]);
    const cache = new PromptCache();
    const first = cache.process(body, 0);
    expect(usage(first)).toEqual([1, 1300, 0]);
    expect(first.cache_creation).toEqual({ ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 1100 });
    // Half an hour on, the 5-minute entry is gone and the 1-hour one still read.
    const later = cache.process(body, 30 * min);
    expect(usage(later)).toEqual([1, 200, 1100]);
    expect(later.cache_creation).toEqual({ ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 0 });
    expect(cache.process(body, 30 * min + 61 * min).cache_read_input_tokens).toBe(0);
    expect(new PromptCache().process(request([block(1100, true)], []), 0).cache_creation).toEqual({
      ephemeral_5m_input_tokens: 1100,
      ephemeral_1h_input_tokens: 0,
    });
  });
});
