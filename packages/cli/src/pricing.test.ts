import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZERO_USAGE, type Usage } from '@infinity-code/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, pricingOf } from './config.js';
import { UserError } from './exit-codes.js';
import { newTally, tallyEvent } from './headless.js';
import { BUILT_IN_PRICING, familyOf, Pricing } from './pricing.js';
import { totalCost } from './result.js';

const MTOK = 1_000_000;
const usage = (u: Partial<Usage>): Usage => ({ ...ZERO_USAGE, ...u });

describe('built-in prices', () => {
  it.each([
    // Current Opus (4.5) and any later Opus id, by family.
    ['claude-opus-4-5', 5, 25],
    ['claude-opus-4-5-20251101', 5, 25],
    ['claude-opus-4-7', 5, 25],
    ['claude-opus-5', 5, 25],
    // Opus 4 and 4.1 kept the old price, matched by prefix.
    ['claude-opus-4-1-20250805', 15, 75],
    ['claude-opus-4-0', 15, 75],
    ['claude-opus-4-20250514', 15, 75],
    ['claude-3-opus-20240229', 15, 75],
    ['claude-sonnet-4-5-20250929', 3, 15],
    ['claude-sonnet-5', 3, 15],
    ['claude-haiku-4-5', 1, 5],
    ['claude-3-5-haiku-20241022', 0.8, 4],
    // Other providers' spellings of the ids.
    ['anthropic.claude-haiku-4-5-20251001-v1:0', 1, 5],
    ['us.anthropic.claude-opus-4-1-20250805-v1:0', 15, 75],
    ['claude-opus-4@20250514', 15, 75],
    ['openrouter/anthropic/claude-opus-4.6', 5, 25],
  ])('%s: $%s in, $%s out per MTok, cache write 1.25x and read 0.1x input', (model, input, output) => {
    expect(BUILT_IN_PRICING.priceOf(model)).toEqual({ input, output, cacheWrite: input * 1.25, cacheRead: input * 0.1 });
  });

  it('prices each kind of token, and has no price for a model of no known family', () => {
    const u = usage({ input_tokens: MTOK, output_tokens: MTOK, cache_creation_input_tokens: MTOK, cache_read_input_tokens: MTOK });
    // Sonnet: 3 + 15 + 3.75 + 0.3.
    expect(BUILT_IN_PRICING.cost('claude-sonnet-4-5', u)).toBeCloseTo(22.05, 10);
    expect(BUILT_IN_PRICING.priceOf('llama-3-70b')).toBeUndefined();
    expect(BUILT_IN_PRICING.cost('llama-3-70b', u)).toBeUndefined();
    // A family must be a word of the id, not any substring.
    expect(familyOf('magnum-opusx')).toBeUndefined();
    expect(familyOf('claude-3-7-sonnet-latest')).toBe('sonnet');
  });
});

describe('prices from the config', () => {
  const dirs: string[] = [];
  const temp = () => {
    const d = mkdtempSync(join(tmpdir(), 'ic-prices-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const write = (file: string, value: unknown) => {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify(value));
  };
  const userFile = (home: string) => join(home, '.config', 'infinity-code', 'config.json');
  const projectFile = (project: string) => join(project, '.infinity', 'config.json');
  const load = (home: string, project: string) => loadConfig({ env: { HOME: home }, projectRoot: project });
  const configError = (home: string, project: string): UserError => {
    try {
      load(home, project);
    } catch (err) {
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).exitCode).toBe(3);
      return err as UserError;
    }
    return expect.unreachable('the config was accepted');
  };

  it("the user's prices win over the built-in ones, by prefix or by family; cache prices default from input", () => {
    const home = temp();
    write(userFile(home), {
      prices: {
        opus: { input: 4, output: 20 },
        'claude-sonnet-4-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.25 },
        'my-gateway/': { input: 1, output: 2 },
      },
    });
    const pricing = pricingOf(load(home, temp()));
    expect(pricing.priceOf('claude-opus-4-1')).toEqual({ input: 4, output: 20, cacheWrite: 5, cacheRead: 0.4 });
    expect(pricing.priceOf('claude-sonnet-4-5-20250929')).toEqual({ input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.25 });
    expect(pricing.priceOf('my-gateway/fast')).toMatchObject({ input: 1, output: 2 });
    // What the user didn't set keeps its built-in price.
    expect(pricing.priceOf('claude-haiku-4-5')).toMatchObject({ input: 1, output: 5 });
    expect(pricing.cost('claude-opus-4-5', usage({ input_tokens: MTOK, output_tokens: MTOK }))).toBeCloseTo(24, 10);
  });

  it("a project's config may price a model nothing prices, and only that", () => {
    const home = temp();
    const project = temp();
    write(projectFile(project), { prices: { 'team-proxy-': { input: 2, output: 8 } } });
    const pricing = pricingOf(load(home, project));
    expect(pricing.priceOf('team-proxy-large')).toMatchObject({ input: 2, output: 8 });
    expect(pricing.priceOf('claude-sonnet-4-5')).toMatchObject({ input: 3, output: 15 });

    write(projectFile(project), { prices: { sonnet: { input: 0, output: 0 } } });
    const err = configError(home, project);
    expect(err.message).toContain(projectFile(project));
    expect(err.message).toContain('"prices.sonnet" would change a price Infinity Code already knows');
    expect(err.message).toContain(userFile(home));

    // Nor one the user's own config sets.
    write(userFile(home), { prices: { 'team-proxy-': { input: 2, output: 8 } } });
    write(projectFile(project), { prices: { 'team-proxy-': { input: 1, output: 1 } } });
    expect(configError(home, project).message).toContain('"prices.team-proxy-" would change a price');
  });

  it.each([
    [[1, 2], /"prices" must be an object of model id prefixes or families/],
    [{ opus: 5 }, /"prices\.opus" must be an object like \{"input": 3, "output": 15\}/],
    [{ opus: { input: 5 } }, /"prices\.opus" needs both "input" and "output"/],
    [{ opus: { input: 5, output: -1 } }, /"prices\.opus\.output" must be a number of USD per million tokens \(0 or more\)/],
    [{ opus: { input: '5', output: 25 } }, /"prices\.opus\.input" must be a number/],
    [{ opus: { input: 5, output: 25, cache: 1 } }, /"prices\.opus" has an unknown key "cache"\. Known keys: input, output, cacheWrite, cacheRead/],
  ])('rejects prices %j with a config error naming the file and key', (prices, message) => {
    const home = temp();
    write(userFile(home), { prices });
    const err = configError(home, temp());
    expect(err.message).toMatch(message);
    expect(err.message).toContain(userFile(home));
  });
});

describe('the cost of a headless run', () => {
  it('prices each completion with its own model, across threads; null when one model has no price', () => {
    const tally = newTally();
    const done = (threadId: string, model: string, u: Partial<Usage>) =>
      tallyEvent(tally, { type: 'completion-finished', threadId, model, usage: usage(u) }, 'root');
    done('root', 'claude-opus-4-5', { input_tokens: 1000, cache_creation_input_tokens: 4000, output_tokens: 200 });
    done('child', 'claude-haiku-4-5', { input_tokens: 500, cache_read_input_tokens: 4000, output_tokens: 100 });
    done('root', 'claude-haiku-4-5', { input_tokens: 10, output_tokens: 10 });
    expect(tally.completions).toBe(3);
    expect(tally.usage).toEqual({ input_tokens: 1510, output_tokens: 310, cache_creation_input_tokens: 4000, cache_read_input_tokens: 4000 });
    // Opus 4.5: 1000*5 + 4000*6.25 + 200*25; Haiku 4.5: 510*1 + 4000*0.1 + 110*5 (per MTok).
    const expected = (5000 + 25_000 + 5000 + 510 + 400 + 550) / MTOK;
    expect(totalCost(tally, new Pricing())).toBeCloseTo(expected, 9);

    done('root', 'local-llm', { input_tokens: 1, output_tokens: 1 });
    expect(totalCost(tally, new Pricing())).toBeNull();
    expect(totalCost(tally, new Pricing({ user: { 'local-llm': { input: 0, output: 0 } } }))).toBeCloseTo(expected, 9);
  });
});
