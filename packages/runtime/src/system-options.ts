import { builtinTools } from './builtin-tools.js';
import { DEFAULT_RETRY, type RetryPolicy } from './completion.js';
import { dispatchCall } from './dispatch.js';
import type { EventBus } from './events.js';
import type { InputMessage } from './input.js';
import { maxTokensFor, type Effort } from './models.js';
import type { ModelProvider, ThinkingDisplay } from './provider.js';
import type { Limits, ReportReviewer } from './services.js';
import type { SliceDeps } from './slice.js';
import type { RuntimeStore, ThreadRecord } from './store.js';
import { buildSystemPrompt, DEFAULT_BASE_PROMPT } from './system-prompt.js';
import type { Tool, ToolCall } from './tool.js';
import type { ToolChecks } from './tool-checks.js';
import { ToolRegistry } from './tool-registry.js';

/** Options shared by local and step mode. */
export interface SystemOptions {
  store: RuntimeStore;
  provider: ModelProvider;
  /** Tools besides the runtime's built-ins (spawn_thread, sleep, ...). */
  tools?: readonly Tool[];
  /** A model id, or a function picking one per thread and round. */
  model: string | ((thread: ThreadRecord) => string);
  /** The base system prompt (how threads know who they are is appended), or a function building it all. */
  systemPrompt?: string | ((thread: ThreadRecord) => string);
  retry?: Partial<RetryPolicy>;
  /** Output tokens per reply; default: the model's maximum from the model table (models.ts). */
  maxTokens?: number;
  /** `output_config.effort`, fixed or read per completion (`/effort`); unset: the model's default. */
  effort?: Effort | ((thread: ThreadRecord) => Effort | undefined);
  /** Thinking text asked of models that think (default 'summarized': progress notes between calls). */
  thinkingDisplay?: ThinkingDisplay;
  limits?: Partial<Limits>;
  /**
   * The context window in tokens, or a function of the thread's current model; compaction starts
   * at 75% of it (0: never). Default: none (no automatic compaction).
   */
  contextWindow?: number | ((model: string) => number);
  /** Reviews a child's report before the parent gets it (the CLI attaches and reviews the diff). */
  reviewReport?: ReportReviewer;
  /** The clock (tests move it). */
  now?: () => number;
  /**
   * Input checks made ahead of time (tool-checks.ts) by tool name: a tool with one made from its
   * schema as it is is checked without loading Ajv (see ToolRegistry).
   */
  validators?: ToolChecks;
  /**
   * Tools never offered nor run, by name (the built-ins too, and tools added later): as if they
   * did not exist. For a host whose user turned tools off.
   */
  withhold?: (name: string) => boolean;
  /**
   * Checked for every call whose arguments are valid, before it runs: `{ deny }` answers it with
   * that error (the model reads it and can adapt) instead of running it, and emits `tool-denied`.
   */
  permit?: ToolPermit;
}

/** A host's decision on one call (see SystemOptions.permit); undefined lets it run. */
export type ToolPermit = (threadId: string, call: ToolCall) => { deny: string } | undefined;

export const DEFAULT_LIMITS: Limits = {
  // An idle thread is a few KB of rows; the bound stops a runaway fan-out, not a planned one
  // (200 children at once is a supported load: e2e/load.test.ts).
  maxLiveThreads: 256,
  maxCompletionsPerThread: 500,
  maxCompletionsPerSlice: 50,
  maxCallsPerReply: 16,
};

/** Builds the slice dependencies both modes share; `deliver` and timers are what differ. */
export function sliceDeps(
  opts: SystemOptions,
  bus: EventBus,
  deliver: (input: InputMessage) => Promise<unknown>,
  timerAdded: (dueAt: number) => void,
  closing: AbortSignal = new AbortController().signal,
): SliceDeps {
  const model = opts.model;
  const prompt = opts.systemPrompt ?? DEFAULT_BASE_PROMPT;
  const effort = opts.effort;
  // Built-in tools need the registry that contains them; it's filled in right below.
  const deps = {
    store: opts.store,
    bus,
    limits: { ...DEFAULT_LIMITS, ...opts.limits },
    deliver,
    timerAdded,
    closing,
    now: opts.now ?? Date.now,
    provider: opts.provider,
    model: typeof model === 'string' ? () => model : model,
    systemPrompt: typeof prompt === 'string' ? (t: ThreadRecord) => buildSystemPrompt(prompt, t) : prompt,
    retry: { ...DEFAULT_RETRY, ...opts.retry },
    maxTokens: opts.maxTokens === undefined ? maxTokensFor : () => opts.maxTokens!,
    effort: typeof effort === 'function' ? effort : () => effort,
    thinkingDisplay: opts.thinkingDisplay ?? 'summarized',
    ...(opts.reviewReport ? { reviewReport: opts.reviewReport } : {}),
    ...(opts.permit ? { permit: opts.permit } : {}),
  } as Omit<SliceDeps, 'tools' | 'dispatch'> & Partial<Pick<SliceDeps, 'tools' | 'dispatch'>>;
  const tools = new ToolRegistry([...builtinTools(deps as SliceDeps), ...(opts.tools ?? [])], opts.validators, opts.withhold);
  deps.tools = tools;
  deps.dispatch = (thread, call) => dispatchCall({ store: opts.store, tools, bus, deliver }, thread, call);
  return deps as SliceDeps;
}
