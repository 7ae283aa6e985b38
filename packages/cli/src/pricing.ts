// Token prices, to estimate what a session costs: an estimate for displays, not a bill.
import type { Usage } from '@infinity-code/runtime/messages';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

/** A price as a config file states it: the cache prices default from the input price. */
export interface PriceSetting {
  input: number;
  output: number;
  cacheWrite?: number;
  cacheRead?: number;
}

/** Config `prices`: keyed by a model id prefix or a family name (opus, sonnet, haiku). */
export type PriceSettings = Readonly<Record<string, PriceSetting>>;

export const FAMILIES = ['opus', 'sonnet', 'haiku'] as const;
export type Family = (typeof FAMILIES)[number];

export function toPrice(s: PriceSetting): Price {
  return {
    input: s.input,
    output: s.output,
    // Anthropic's list prices: 5-minute cache writes at 1.25x input, cache reads at 0.1x.
    cacheWrite: s.cacheWrite ?? s.input * 1.25,
    cacheRead: s.cacheRead ?? s.input * 0.1,
  };
}

const price = (input: number, output: number): Price => toPrice({ input, output });

/** Keys (id prefixes or family names) and their prices. */
type Table = ReadonlyArray<readonly [key: string, price: Price]>;

/**
 * Published list prices. Prefixes resolve dated ids (claude-sonnet-4-5-20250929); the family
 * names after them resolve ids newer than this table (and other spellings, such as Bedrock's) at
 * the family's current price.
 */
const BUILT_IN: Table = [
  ['claude-opus-4-5', price(5, 25)],
  // Opus 4 (claude-opus-4-0, claude-opus-4-20250514, Vertex's claude-opus-4@20250514) and 4.1
  // kept the old Opus price; later Opus ids fall through to the family's.
  ['claude-opus-4-1', price(15, 75)],
  ['claude-opus-4-0', price(15, 75)],
  ['claude-opus-4-2025', price(15, 75)],
  ['claude-opus-4@', price(15, 75)],
  ['claude-3-opus', price(15, 75)],
  ['claude-sonnet-4', price(3, 15)],
  ['claude-3-7-sonnet', price(3, 15)],
  ['claude-3-5-sonnet', price(3, 15)],
  ['claude-haiku-4', price(1, 5)],
  ['claude-3-5-haiku', price(0.8, 4)],
  ['claude-3-haiku', price(0.25, 1.25)],
  ['opus', price(5, 25)],
  ['sonnet', price(3, 15)],
  ['haiku', price(1, 5)],
];

/** The family a model id names, as a word of it (claude-opus-4-5, anthropic.claude-3-haiku-...). */
export function familyOf(model: string): Family | undefined {
  const words = model.toLowerCase().split(/[^a-z]+/);
  return FAMILIES.find((f) => words.includes(f));
}

/**
 * The id starts with the key, itself or after a provider's namespace
 * (anthropic.claude-opus-4-1-... on Bedrock, anthropic/claude-... on gateways).
 */
function startsWithKey(model: string, key: string): boolean {
  return model.startsWith(key) || model.includes(`.${key}`) || model.includes(`/${key}`);
}

/** The longest key the id starts with, else a family key the id names. */
function lookup(table: Table, model: string): Price | undefined {
  let best: (typeof table)[number] | undefined;
  for (const entry of table) {
    if (startsWithKey(model, entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  if (best) return best[1];
  const family = familyOf(model);
  return family ? table.find(([key]) => key === family)?.[1] : undefined;
}

const tableOf = (settings: PriceSettings | undefined): Table =>
  Object.entries(settings ?? {}).map(([key, s]) => [key, toPrice(s)] as const);

export interface PricingOptions {
  /** The user's config: wins over the built-in prices. */
  user?: PriceSettings;
  /**
   * The project's config: prices only models nothing else prices (a cloned repository must not
   * be able to make a session look cheaper than it is).
   */
  project?: PriceSettings;
}

/** Prices per model: the user's settings, then the built-in table, then the project's settings. */
export class Pricing {
  private readonly tables: Table[];

  constructor(o: PricingOptions = {}) {
    this.tables = [tableOf(o.user), BUILT_IN, tableOf(o.project)];
  }

  priceOf(model: string): Price | undefined {
    for (const t of this.tables) {
      const p = lookup(t, model);
      if (p) return p;
    }
    return undefined;
  }

  /** Estimated cost in USD, or undefined for a model with no known price. */
  cost(model: string, usage: Usage): number | undefined {
    const p = this.priceOf(model);
    if (!p) return undefined;
    return (
      (usage.input_tokens * p.input +
        usage.output_tokens * p.output +
        usage.cache_creation_input_tokens * p.cacheWrite +
        usage.cache_read_input_tokens * p.cacheRead) /
      1_000_000
    );
  }
}

/** The built-in prices alone (no config). */
export const BUILT_IN_PRICING = new Pricing();

/** Current models of each family (offered by `/model` with no argument). */
export const SUGGESTED_MODELS: readonly string[] = ['claude-opus-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5'];
