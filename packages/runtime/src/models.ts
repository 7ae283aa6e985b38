// The one table of Claude models: ids, aliases, limits, prices and what each accepts. Facts as of
// December 2026 (the Messages API's model pages, deprecations and pricing); the CLI prices with it,
// the provider shapes requests with it, and the test API enforces it.

export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type Effort = (typeof EFFORTS)[number];

/** What thinking the provider asks for: adaptive (the 5.x default, always on) or none at all. */
export type ThinkingRequest = 'adaptive' | 'none';

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Cache writes with the default 5-minute lifetime. */
  cacheWrite5m: number;
  /** Cache writes with a 1-hour lifetime. */
  cacheWrite1h: number;
  cacheRead: number;
}

export type ModelStatus =
  | { kind: 'current' }
  /** Still served; `retiresNotBefore` when a date is announced. */
  | { kind: 'legacy'; retiresNotBefore?: string }
  /** Requests fail (404 not_found_error) since `retired`. */
  | { kind: 'retired'; retired: string; replacement: string };

export interface ModelInfo {
  /** The API id (the 5.x ids have no date suffix). */
  id: string;
  /** Other names that mean this model: a short alias, dated ids. */
  aliases: readonly string[];
  /** Display name. */
  name: string;
  contextWindow: number;
  /** The most output (thinking included) one reply may have. */
  maxOutput: number;
  price: ModelPrice;
  /**
   * Haiku 5.5 is cheaper for short prompts: this price applies to requests whose whole prompt
   * (uncached, written and read) is at most `upToInputTokens`; `price` applies above it.
   */
  shortPromptPrice?: { upToInputTokens: number; price: ModelPrice };
  /** Shorter prompt prefixes are not cached (no error, no write). */
  minCacheTokens: number;
  /** What the provider sends as `thinking`. */
  thinking: ThinkingRequest;
  /** Thinking types the API accepts for this model (what the test API enforces). */
  thinkingTypes: readonly ('adaptive' | 'between_tools' | 'disabled' | 'enabled')[];
  /** Effort levels `output_config.effort` accepts; empty: the field is refused. */
  efforts: readonly Effort[];
  defaultEffort?: Effort;
  /** Thinking blocks are bound to the model and to the conversation before them (prefix check). */
  preservedThinking: boolean;
  /** `tool_choice` `any`/`tool` is accepted. */
  forcedToolChoice: boolean;
  status: ModelStatus;
}

const ALL_EFFORTS: readonly Effort[] = EFFORTS;
const M = 1_000_000;
const K = 1000;

function price(input: number, output: number, cacheWrite5m: number, cacheWrite1h: number, cacheRead: number): ModelPrice {
  return { input, output, cacheWrite5m, cacheWrite1h, cacheRead };
}

/** The usual multipliers: 5-minute writes 1.25x input, 1-hour writes 2x, reads 0.1x. */
function standard(input: number, output: number): ModelPrice {
  return price(input, output, input * 1.25, input * 2, input * 0.1);
}

/** A legacy or retired model whose limits no longer matter to a request we send. */
function older(
  id: string,
  name: string,
  aliases: readonly string[],
  p: ModelPrice,
  status: ModelStatus,
  limits: { contextWindow?: number; maxOutput?: number; efforts?: readonly Effort[]; thinking?: ThinkingRequest } = {},
): ModelInfo {
  return {
    id,
    aliases,
    name,
    contextWindow: limits.contextWindow ?? 200 * K,
    maxOutput: limits.maxOutput ?? 64 * K,
    price: p,
    minCacheTokens: 1024,
    thinking: limits.thinking ?? 'none',
    thinkingTypes: limits.thinking === 'adaptive' ? ['adaptive', 'disabled'] : ['enabled', 'disabled'],
    efforts: limits.efforts ?? [],
    preservedThinking: false,
    forcedToolChoice: true,
    status,
  };
}

export const MODELS: readonly ModelInfo[] = [
  {
    id: 'claude-sonnet-5-5',
    aliases: ['sonnet'],
    name: 'Claude Sonnet 5.5',
    contextWindow: M,
    maxOutput: 128 * K,
    // Cache reads at 0.05x input since 2026-10-07.
    price: price(2, 10, 2.5, 4, 0.1),
    minCacheTokens: 512,
    thinking: 'adaptive',
    thinkingTypes: ['adaptive', 'between_tools'],
    efforts: ALL_EFFORTS,
    defaultEffort: 'high',
    preservedThinking: true,
    forcedToolChoice: false,
    status: { kind: 'current' },
  },
  {
    id: 'claude-opus-5-5',
    aliases: ['opus'],
    name: 'Claude Opus 5.5',
    contextWindow: M,
    maxOutput: 128 * K,
    price: price(4, 20, 5, 8, 0.2),
    minCacheTokens: 512,
    thinking: 'adaptive',
    thinkingTypes: ['adaptive'],
    efforts: ALL_EFFORTS,
    defaultEffort: 'medium',
    preservedThinking: true,
    forcedToolChoice: false,
    status: { kind: 'current' },
  },
  {
    id: 'claude-haiku-5-5',
    aliases: ['haiku'],
    name: 'Claude Haiku 5.5',
    contextWindow: M,
    maxOutput: 128 * K,
    price: price(0.5, 2.5, 0.625, 1, 0.05),
    shortPromptPrice: { upToInputTokens: 100 * K, price: price(0.1, 0.5, 0.125, 0.2, 0.01) },
    minCacheTokens: 512,
    thinking: 'adaptive',
    thinkingTypes: ['adaptive', 'disabled'],
    efforts: ALL_EFFORTS,
    defaultEffort: 'medium',
    preservedThinking: true,
    forcedToolChoice: true,
    status: { kind: 'current' },
  },
  {
    id: 'claude-fable-5-2',
    aliases: ['fable'],
    name: 'Claude Fable 5.2',
    contextWindow: M,
    maxOutput: 128 * K,
    price: price(8, 40, 10, 16, 0.2),
    minCacheTokens: 512,
    thinking: 'adaptive',
    thinkingTypes: ['adaptive'],
    efforts: ALL_EFFORTS,
    defaultEffort: 'high',
    preservedThinking: true,
    forcedToolChoice: false,
    status: { kind: 'current' },
  },
  {
    ...older('claude-fable-5-1', 'Claude Fable 5.1', [], price(10, 50, 12.5, 20, 0.25), { kind: 'legacy' }, {
      contextWindow: M,
      maxOutput: 128 * K,
      efforts: ALL_EFFORTS,
      thinking: 'adaptive',
    }),
    thinkingTypes: ['adaptive'],
    preservedThinking: true,
    forcedToolChoice: false,
  },
  older('claude-opus-5', 'Claude Opus 5', [], price(5, 25, 6.25, 10, 0.5), { kind: 'legacy', retiresNotBefore: '2027-07-24' }, {
    contextWindow: M,
    maxOutput: 128 * K,
    efforts: ALL_EFFORTS,
    thinking: 'adaptive',
  }),
  older('claude-sonnet-5', 'Claude Sonnet 5', [], price(2, 10, 2.5, 4, 0.2), { kind: 'legacy' }, {
    contextWindow: M,
    maxOutput: 128 * K,
    efforts: ALL_EFFORTS,
    thinking: 'adaptive',
  }),
  older('claude-sonnet-4-6', 'Claude Sonnet 4.6', [], standard(3, 15), { kind: 'legacy' }, { contextWindow: M, maxOutput: 128 * K }),
  older('claude-opus-4-8', 'Claude Opus 4.8', [], standard(5, 25), { kind: 'legacy' }),
  older('claude-opus-4-7', 'Claude Opus 4.7', [], standard(5, 25), { kind: 'legacy' }),
  older('claude-opus-4-6', 'Claude Opus 4.6', [], standard(5, 25), { kind: 'legacy' }),
  older('claude-opus-4-5', 'Claude Opus 4.5', ['claude-opus-4-5-20251101'], standard(5, 25), { kind: 'legacy', retiresNotBefore: '2026-11-24' }),
  older('claude-haiku-4-5', 'Claude Haiku 4.5', ['claude-haiku-4-5-20251001'], standard(1, 5), { kind: 'legacy' }),
  older('claude-sonnet-4-5', 'Claude Sonnet 4.5', ['claude-sonnet-4-5-20250929'], standard(3, 15), {
    kind: 'retired',
    retired: '2026-11-30',
    replacement: 'claude-sonnet-5-5',
  }),
  older('claude-sonnet-4-0', 'Claude Sonnet 4', ['claude-sonnet-4-20250514'], standard(3, 15), {
    kind: 'retired',
    retired: '2026-06-15',
    replacement: 'claude-sonnet-5-5',
  }),
  older('claude-opus-4-0', 'Claude Opus 4', ['claude-opus-4-20250514'], standard(15, 75), {
    kind: 'retired',
    retired: '2026-06-15',
    replacement: 'claude-opus-5-5',
  }),
  older('claude-opus-4-1', 'Claude Opus 4.1', ['claude-opus-4-1-20250805'], standard(15, 75), {
    kind: 'retired',
    retired: '2026-06-15',
    replacement: 'claude-opus-5-5',
  }),
];

/** The model a session uses when nothing names one. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';

const BY_NAME: ReadonlyMap<string, ModelInfo> = new Map(
  MODELS.flatMap((m) => [[m.id, m] as const, ...m.aliases.map((a) => [a, m] as const)]),
);

/**
 * The table's entry for an id or alias, case as written (`sonnet`, `claude-sonnet-5-5`,
 * `claude-haiku-4-5-20251001`). A dated id the table doesn't list resolves to its undated
 * model (`claude-opus-4-5-20990101` is Opus 4.5). Unknown ids (newer models, gateways' names)
 * give undefined.
 */
export function modelInfo(name: string): ModelInfo | undefined {
  const exact = BY_NAME.get(name);
  if (exact) return exact;
  const undated = /^(.*)-\d{8}$/.exec(name)?.[1];
  return undated === undefined ? undefined : BY_NAME.get(undated);
}

/** The id to send for what the user wrote: an alias becomes its id, anything else is kept. */
export function resolveModelId(name: string): string {
  const info = BY_NAME.get(name);
  // A dated id stays as written: the user asked for that snapshot.
  return info && info.aliases.includes(name) && !/-\d{8}$/.test(name) ? info.id : name;
}

/** The model's retirement, when requests to it can only fail. */
export function retirement(name: string): { retired: string; replacement: string } | undefined {
  const s = modelInfo(name)?.status;
  return s?.kind === 'retired' ? { retired: s.retired, replacement: s.replacement } : undefined;
}

/** Output tokens asked for per reply: the model's limit (thinking counts toward it), or 32K unknown. */
export function maxTokensFor(name: string): number {
  return modelInfo(name)?.maxOutput ?? 32 * K;
}

/** The price that applies to one request of `promptTokens` (Haiku 5.5's short-prompt tier). */
export function priceFor(info: ModelInfo, promptTokens: number): ModelPrice {
  const tier = info.shortPromptPrice;
  return tier && promptTokens <= tier.upToInputTokens ? tier.price : info.price;
}

/** Effort levels a model accepts, for messages that list them. */
export function effortsOf(name: string): readonly Effort[] {
  return modelInfo(name)?.efforts ?? [];
}

export function isEffort(v: string): v is Effort {
  return (EFFORTS as readonly string[]).includes(v);
}
