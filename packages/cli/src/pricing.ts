// Token prices, to estimate what a session costs: an estimate for displays, not a bill. The list
// prices are the model table's (@infinity-code/runtime/models, a light module: the TUI's first
// frame needs them for the status line); the user's config may set others.
import type { Usage } from '@infinity-code/runtime/messages';
import { modelInfo, resolveModelId, type ModelInfo, type ModelPrice } from '@infinity-code/runtime/models';

/**
 * USD per million tokens. `cacheWrite` is the price of a 5-minute cache write: the runtime marks
 * its cache breakpoints with the default lifetime, never the 1-hour one.
 */
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

/**
 * Config `prices`: keyed by a model id, an id prefix (`my-gateway/`, `claude-sonnet-5-5` for its
 * dated ids too), or an alias (`opus`, `sonnet`, `haiku`, `fable`: the model it stands for).
 */
export type PriceSettings = Readonly<Record<string, PriceSetting>>;

/**
 * A model's prices: one, or (Haiku 5.5) a cheaper one for requests whose whole prompt (input,
 * cache writes and cache reads) is at most `upToPromptTokens`.
 */
export interface ModelPricing {
  price: Price;
  shortPrompt?: { upToPromptTokens: number; price: Price };
}

export function toPrice(s: PriceSetting): Price {
  return {
    input: s.input,
    output: s.output,
    // Anthropic's usual multipliers: 5-minute cache writes at 1.25x input, cache reads at 0.1x
    // (some models read for less, e.g. Sonnet 5.5 at 0.05x: a setting for one states it).
    cacheWrite: s.cacheWrite ?? s.input * 1.25,
    cacheRead: s.cacheRead ?? s.input * 0.1,
  };
}

const fromTable = (p: ModelPrice): Price => ({ input: p.input, output: p.output, cacheWrite: p.cacheWrite5m, cacheRead: p.cacheRead });

function tablePricing(info: ModelInfo): ModelPricing {
  const tier = info.shortPromptPrice;
  return {
    price: fromTable(info.price),
    ...(tier ? { shortPrompt: { upToPromptTokens: tier.upToInputTokens, price: fromTable(tier.price) } } : {}),
  };
}

/** Every token of a completion's prompt: what Haiku 5.5's price tier is chosen by. */
export function promptTokens(u: Usage): number {
  return u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
}

/** The price for one request whose prompt has `prompt` tokens. */
function priceAt(p: ModelPricing, prompt: number): Price {
  return p.shortPrompt && prompt <= p.shortPrompt.upToPromptTokens ? p.shortPrompt.price : p.price;
}

function usd(p: Price, u: Usage): number {
  return (
    (u.input_tokens * p.input + u.output_tokens * p.output + u.cache_creation_input_tokens * p.cacheWrite + u.cache_read_input_tokens * p.cacheRead) /
    1_000_000
  );
}

type Settings = ReadonlyArray<readonly [key: string, price: Price]>;

const settingsOf = (s: PriceSettings | undefined): Settings => Object.entries(s ?? {}).map(([key, p]) => [key, toPrice(p)] as const);

/**
 * The id starts with the key, itself or after a provider's namespace
 * (anthropic.claude-sonnet-5-5-... on Bedrock, anthropic/claude-... on gateways).
 */
function startsWithKey(model: string, key: string): boolean {
  return model.startsWith(key) || model.includes(`.${key}`) || model.includes(`/${key}`);
}

/**
 * The setting that names `model`: its own id, then an alias that stands for it (`opus` for
 * claude-opus-5-5 and its dated ids), then the longest id prefix. No family guess: `opus`
 * names today's Opus, not every id with "opus" in it.
 */
function settingFor(settings: Settings, model: string): Price | undefined {
  const exact = settings.find(([key]) => key === model);
  if (exact) return exact[1];
  const id = modelInfo(model)?.id;
  const alias = id === undefined ? undefined : settings.find(([key]) => resolveModelId(key) !== key && resolveModelId(key) === id);
  if (alias) return alias[1];
  let best: Settings[number] | undefined;
  for (const entry of settings) {
    if (startsWithKey(model, entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  return best?.[1];
}

export interface PricingOptions {
  /** The user's config: wins over the model table. */
  user?: PriceSettings;
  /**
   * The project's config: prices only models nothing else prices (a cloned repository must not
   * be able to make a session look cheaper than it is).
   */
  project?: PriceSettings;
}

/**
 * Prices per model: the user's settings, then the model table, then the project's settings. An
 * id none of them knows (a newer model, a gateway's name) has no price: its cost is unknown
 * rather than guessed from a similar name.
 */
export class Pricing {
  private readonly user: Settings;
  private readonly project: Settings;

  constructor(o: PricingOptions = {}) {
    this.user = settingsOf(o.user);
    this.project = settingsOf(o.project);
  }

  pricingOf(model: string): ModelPricing | undefined {
    const user = settingFor(this.user, model);
    if (user) return { price: user };
    const info = modelInfo(model);
    if (info) return tablePricing(info);
    const project = settingFor(this.project, model);
    return project ? { price: project } : undefined;
  }

  /** Whether `model` has a price at all. */
  has(model: string): boolean {
    return this.pricingOf(model) !== undefined;
  }

  /** The price of one request to `model` whose prompt has `prompt` tokens (see ModelPricing). */
  priceOf(model: string, prompt: number): Price | undefined {
    const p = this.pricingOf(model);
    return p && priceAt(p, prompt);
  }

  /**
   * Estimated USD of ONE completion (its price tier chosen by its own prompt), or undefined for a
   * model with no known price. For sums of several completions, see costOfTotals.
   */
  cost(model: string, usage: Usage): number | undefined {
    const p = this.pricingOf(model);
    return p && usd(priceAt(p, promptTokens(usage)), usage);
  }

  /**
   * Estimated USD of `completions` completions known only by their summed usage. A tiered price
   * (Haiku 5.5) is chosen by their average prompt: an estimate, since a sum can't say which
   * completions were short. Where each completion's usage is seen (the status line, a headless
   * run's total), cost() prices each by its own prompt instead.
   */
  costOfTotals(model: string, usage: Usage, completions: number): number | undefined {
    const p = this.pricingOf(model);
    return p && usd(priceAt(p, promptTokens(usage) / Math.max(1, completions)), usage);
  }
}

/** The model table's prices alone (no config). */
export const BUILT_IN_PRICING = new Pricing();
