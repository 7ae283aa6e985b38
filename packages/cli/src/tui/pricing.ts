import type { Usage } from '@infinity-code/runtime';

/** USD per million tokens. */
export interface Price {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

const price = (input: number, output: number): Price => ({
  input,
  output,
  // Anthropic's list prices: 5-minute cache writes at 1.25x input, cache reads at 0.1x.
  cacheWrite: input * 1.25,
  cacheRead: input * 0.1,
});

/**
 * Published list prices of the models the CLI is likely to run, matched by prefix so dated ids
 * (claude-sonnet-4-5-20250929) resolve too. An estimate for the status line, not a bill.
 */
const PRICES: ReadonlyArray<readonly [prefix: string, price: Price]> = [
  ['claude-opus-4-5', price(5, 25)],
  ['claude-opus-4-1', price(15, 75)],
  ['claude-opus-4', price(15, 75)],
  ['claude-sonnet-4', price(3, 15)],
  ['claude-3-7-sonnet', price(3, 15)],
  ['claude-3-5-sonnet', price(3, 15)],
  ['claude-haiku-4', price(1, 5)],
  ['claude-3-5-haiku', price(0.8, 4)],
  ['claude-3-haiku', price(0.25, 1.25)],
];

export function priceOf(model: string): Price | undefined {
  return PRICES.find(([prefix]) => model.startsWith(prefix))?.[1];
}

/** Model id prefixes with a known price (offered by `/model` with no argument). */
export function pricedModels(): string[] {
  return PRICES.map(([prefix]) => prefix);
}

/** Estimated cost in USD, or undefined for a model with no known price. */
export function estimateCost(model: string, usage: Usage): number | undefined {
  const p = priceOf(model);
  if (!p) return undefined;
  return (
    (usage.input_tokens * p.input +
      usage.output_tokens * p.output +
      usage.cache_creation_input_tokens * p.cacheWrite +
      usage.cache_read_input_tokens * p.cacheRead) /
    1_000_000
  );
}
