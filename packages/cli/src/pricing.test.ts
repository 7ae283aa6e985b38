import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZERO_USAGE, type Usage } from '@infinity-code/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, pricingOf } from './config.js';
import { UserError } from './exit-codes.js';
import { newTally, tallyEvent } from './headless.js';
import { BUILT_IN_PRICING, Pricing } from './pricing.js';
import { totalCost } from './result.js';

const MTOK = 1_000_000;
const usage = (u: Partial<Usage>): Usage => ({ ...ZERO_USAGE, ...u });

describe('prices from the model table', () => {
  it.each([
    // USD per MTok: input, output, 5-minute cache write, cache read (Sonnet 5.5 reads at 0.05x input).
    ['claude-sonnet-5-5', { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1 }],
    ['claude-opus-5-5', { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 }],
    ['claude-fable-5-2', { input: 8, output: 40, cacheWrite: 10, cacheRead: 0.2 }],
    // Legacy models keep their prices: stored sessions that ran on them are still priced.
    ['claude-opus-5', { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5 }],
    // Aliases and dated ids are the model they stand for.
    ['sonnet', { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1 }],
    ['claude-opus-5-5-20261101', { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 }],
  ])('%s', (model, price) => {
    expect(BUILT_IN_PRICING.priceOf(model, 1000)).toEqual(price);
    expect(BUILT_IN_PRICING.has(model)).toBe(true);
  });

  it('prices each kind of token of a completion', () => {
    const u = usage({ input_tokens: MTOK, output_tokens: MTOK, cache_creation_input_tokens: MTOK, cache_read_input_tokens: MTOK });
    // Sonnet 5.5: 2 + 10 + 2.5 + 0.10.
    expect(BUILT_IN_PRICING.cost('claude-sonnet-5-5', u)).toBeCloseTo(14.6, 10);
    // Opus 5.5: 4 + 20 + 5 + 0.20.
    expect(BUILT_IN_PRICING.cost('claude-opus-5-5', u)).toBeCloseTo(29.2, 10);
  });

  it("Haiku 5.5: a completion whose whole prompt (input, cache write, cache read) is at most 100K tokens is priced at the short-prompt tier", () => {
    const short = usage({ input_tokens: 60_000, cache_creation_input_tokens: 20_000, cache_read_input_tokens: 20_000, output_tokens: 10_000 });
    const long = usage({ ...short, input_tokens: 60_001 });
    // <= 100K: $0.10 in, $0.50 out, $0.125 write, $0.01 read per MTok.
    expect(BUILT_IN_PRICING.cost('claude-haiku-5-5', short)).toBeCloseTo((60_000 * 0.1 + 10_000 * 0.5 + 20_000 * 0.125 + 20_000 * 0.01) / MTOK, 12);
    // One token more: $0.50 in, $2.50 out, $0.625 write, $0.05 read.
    expect(BUILT_IN_PRICING.cost('claude-haiku-5-5', long)).toBeCloseTo((60_001 * 0.5 + 10_000 * 2.5 + 20_000 * 0.625 + 20_000 * 0.05) / MTOK, 12);
    expect(BUILT_IN_PRICING.priceOf('haiku', 100_000)).toEqual({ input: 0.1, output: 0.5, cacheWrite: 0.125, cacheRead: 0.01 });
    expect(BUILT_IN_PRICING.priceOf('haiku', 100_001)).toEqual({ input: 0.5, output: 2.5, cacheWrite: 0.625, cacheRead: 0.05 });
  });

  it('sums of several completions (/cost) choose the tier by their average prompt', () => {
    // Three completions of 50K-token prompts: short tier; the same tokens over one completion: long.
    const sum = usage({ input_tokens: 150_000, output_tokens: 3000 });
    expect(BUILT_IN_PRICING.costOfTotals('claude-haiku-5-5', sum, 3)).toBeCloseTo((150_000 * 0.1 + 3000 * 0.5) / MTOK, 12);
    expect(BUILT_IN_PRICING.costOfTotals('claude-haiku-5-5', sum, 1)).toBeCloseTo((150_000 * 0.5 + 3000 * 2.5) / MTOK, 12);
    // One price for other models, however the tokens are spread.
    expect(BUILT_IN_PRICING.costOfTotals('claude-sonnet-5-5', sum, 1)).toBeCloseTo(BUILT_IN_PRICING.costOfTotals('claude-sonnet-5-5', sum, 3)!, 12);
  });

  it('has no price for an id the table does not know: no guess from a family name', () => {
    const u = usage({ input_tokens: MTOK, output_tokens: MTOK });
    for (const model of ['llama-3-70b', 'claude-opus-9', 'anthropic.claude-sonnet-5-5-v1:0', 'my-sonnet']) {
      expect(BUILT_IN_PRICING.has(model)).toBe(false);
      expect(BUILT_IN_PRICING.priceOf(model, 0)).toBeUndefined();
      expect(BUILT_IN_PRICING.cost(model, u)).toBeUndefined();
    }
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

  it("the user's prices win over the table's, by id, alias or id prefix; cache prices default from input", () => {
    const home = temp();
    write(userFile(home), {
      prices: {
        opus: { input: 4, output: 16 },
        'claude-sonnet-5-5': { input: 1, output: 5, cacheWrite: 1.5, cacheRead: 0.05 },
        'claude-haiku-5-5': { input: 0.2, output: 1 },
        'my-gateway/': { input: 1, output: 2 },
      },
    });
    const pricing = pricingOf(load(home, temp()));
    // An alias names the model it stands for, dated ids too; not other ids with the word in them.
    expect(pricing.priceOf('claude-opus-5-5', 0)).toEqual({ input: 4, output: 16, cacheWrite: 5, cacheRead: 0.4 });
    expect(pricing.priceOf('claude-opus-5-5-20261101', 0)).toMatchObject({ input: 4, output: 16 });
    expect(pricing.priceOf('claude-opus-5', 0)).toMatchObject({ input: 5, output: 25 });
    expect(pricing.has('claude-opus-9')).toBe(false);
    // An id is a prefix too: a provider's spelling of it is priced by the same setting.
    expect(pricing.priceOf('claude-sonnet-5-5', 0)).toEqual({ input: 1, output: 5, cacheWrite: 1.5, cacheRead: 0.05 });
    expect(pricing.priceOf('anthropic.claude-sonnet-5-5-v1:0', 0)).toMatchObject({ input: 1, output: 5 });
    expect(pricing.priceOf('my-gateway/fast', 0)).toMatchObject({ input: 1, output: 2 });
    // The user's price for Haiku 5.5 is flat: no short-prompt tier any more.
    expect(pricing.priceOf('claude-haiku-5-5', 10)).toEqual(pricing.priceOf('claude-haiku-5-5', 500_000));
    expect(pricing.priceOf('claude-haiku-5-5', 10)).toMatchObject({ input: 0.2, output: 1 });
    // What the user didn't set keeps the table's price.
    expect(pricing.priceOf('claude-fable-5-2', 0)).toMatchObject({ input: 8, output: 40 });
    expect(pricing.cost('claude-opus-5-5', usage({ input_tokens: MTOK, output_tokens: MTOK }))).toBeCloseTo(20, 10);
  });

  it("a project's config may price a model nothing prices, and only that", () => {
    const home = temp();
    const project = temp();
    write(projectFile(project), { prices: { 'team-proxy-': { input: 2, output: 8 } } });
    const pricing = pricingOf(load(home, project));
    expect(pricing.priceOf('team-proxy-large', 0)).toMatchObject({ input: 2, output: 8 });
    expect(pricing.priceOf('claude-sonnet-5-5', 0)).toMatchObject({ input: 2, output: 10 });

    for (const model of ['sonnet', 'claude-haiku-5-5']) {
      write(projectFile(project), { prices: { [model]: { input: 0, output: 0 } } });
      const err = configError(home, project);
      expect(err.message).toContain(projectFile(project));
      expect(err.message).toContain(`"prices.${model}" would change a price Infinity Code already knows`);
      expect(err.message).toContain(userFile(home));
    }

    // Nor one the user's own config sets.
    write(userFile(home), { prices: { 'team-proxy-': { input: 2, output: 8 } } });
    write(projectFile(project), { prices: { 'team-proxy-': { input: 1, output: 1 } } });
    expect(configError(home, project).message).toContain('"prices.team-proxy-" would change a price');
  });

  it.each([
    [[1, 2], /"prices" must be an object of model ids, id prefixes or aliases \(opus, sonnet, haiku, fable\)/],
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
  it('prices each completion with its own model and prompt, across threads; null when one model has no price', () => {
    const tally = newTally();
    const done = (threadId: string, model: string, u: Partial<Usage>) =>
      tallyEvent(tally, { type: 'completion-finished', threadId, model, usage: usage(u) }, 'root');
    done('root', 'claude-opus-5-5', { input_tokens: 1000, cache_creation_input_tokens: 4000, output_tokens: 200 });
    done('child', 'claude-haiku-5-5', { input_tokens: 500, cache_read_input_tokens: 4000, output_tokens: 100 });
    done('root', 'claude-haiku-5-5', { input_tokens: 150_000, output_tokens: 10 });
    expect(tally.completions).toBe(3);
    expect(tally.usage).toEqual({ input_tokens: 151_500, output_tokens: 310, cache_creation_input_tokens: 4000, cache_read_input_tokens: 4000 });
    // Opus 5.5: 1000*4 + 4000*5 + 200*20. Haiku 5.5's short completion (4,500-token prompt):
    // 500*0.1 + 4000*0.01 + 100*0.5; its long one (150K): 150,000*0.5 + 10*2.5 (per MTok).
    const expected = (4000 + 20_000 + 4000 + (50 + 40 + 50) + (75_000 + 25)) / MTOK;
    expect(totalCost(tally, new Pricing())).toBeCloseTo(expected, 9);

    done('root', 'local-llm', { input_tokens: 1, output_tokens: 1 });
    expect(totalCost(tally, new Pricing())).toBeNull();
    expect(totalCost(tally, new Pricing({ user: { 'local-llm': { input: 0, output: 0 } } }))).toBeCloseTo(expected, 9);
  });
});
