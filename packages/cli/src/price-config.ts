import { EXIT, UserError } from './exit-codes.js';
import { Pricing, type PriceSetting, type PriceSettings } from './pricing.js';

const PRICE_KEYS = ['input', 'output', 'cacheWrite', 'cacheRead'] as const;
const EXAMPLE = '{"my-gateway/": {"input": 2, "output": 10}}';

/** Reads the `prices` value of `file`; wrong values are config errors naming the file and key. */
export function parsePriceSettings(value: unknown, file: string): PriceSettings {
  const fix = 'Fix the value or remove the key.';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UserError(
      `In ${file}, "prices" must be an object of model ids, id prefixes or aliases (opus, sonnet, haiku, fable) to ` +
        `prices in USD per million tokens, like ${EXAMPLE}. ${fix}`,
      EXIT.config,
    );
  }
  const out: Record<string, PriceSetting> = {};
  for (const [model, spec] of Object.entries(value as Record<string, unknown>)) {
    const where = `"prices.${model}"`;
    if (model.trim() === '') throw new UserError(`In ${file}, "prices" has an empty model name. ${fix}`, EXIT.config);
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      throw new UserError(`In ${file}, ${where} must be an object like {"input": 3, "output": 15} (USD per million tokens). ${fix}`, EXIT.config);
    }
    const p: Partial<Record<(typeof PRICE_KEYS)[number], number>> = {};
    for (const [key, v] of Object.entries(spec)) {
      if (!(PRICE_KEYS as readonly string[]).includes(key)) {
        throw new UserError(`In ${file}, ${where} has an unknown key "${key}". Known keys: ${PRICE_KEYS.join(', ')}.`, EXIT.config);
      }
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
        throw new UserError(`In ${file}, "prices.${model}.${key}" must be a number of USD per million tokens (0 or more). ${fix}`, EXIT.config);
      }
      p[key as (typeof PRICE_KEYS)[number]] = v;
    }
    if (p.input === undefined || p.output === undefined) {
      throw new UserError(
        `In ${file}, ${where} needs both "input" and "output" (USD per million tokens); "cacheWrite" and "cacheRead" ` +
          `default to 1.25x and 0.1x the input price. ${fix}`,
        EXIT.config,
      );
    }
    const setting: PriceSetting = { input: p.input, output: p.output };
    if (p.cacheWrite !== undefined) setting.cacheWrite = p.cacheWrite;
    if (p.cacheRead !== undefined) setting.cacheRead = p.cacheRead;
    out[model] = setting;
  }
  return out;
}

/**
 * A repository's config may price models nothing else prices (its gateway's ids, say), not change
 * a price the model table or the user's config knows: a cloned repository could otherwise make a
 * session look cheaper than it is.
 */
export function checkProjectPrices(project: PriceSettings, user: PriceSettings, projectFile: string, userFile: string): void {
  const known = new Pricing({ user });
  for (const model of Object.keys(project)) {
    if (!known.has(model)) continue;
    throw new UserError(
      `In ${projectFile}, "prices.${model}" would change a price Infinity Code already knows. A repository's config ` +
        'may only price models that have no price yet (a cloned repository could carry one that hides what a session ' +
        `costs). Put the setting in your own config, ${userFile}, or remove it here.`,
      EXIT.config,
    );
  }
}
