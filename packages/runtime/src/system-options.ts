import { DEFAULT_RETRY, type RetryPolicy } from './completion.js';
import { dispatchCall } from './dispatch.js';
import { EventBus } from './events.js';
import type { InputMessage } from './input.js';
import type { ModelProvider } from './provider.js';
import type { SliceDeps } from './slice.js';
import type { RuntimeStore, ThreadRecord } from './store.js';
import { buildSystemPrompt, DEFAULT_BASE_PROMPT } from './system-prompt.js';
import type { Tool } from './tool.js';
import { ToolRegistry } from './tool-registry.js';

/** Options shared by local and step mode. */
export interface SystemOptions {
  store: RuntimeStore;
  provider: ModelProvider;
  tools?: readonly Tool[];
  /** A model id, or a function picking one per thread and round. */
  model: string | ((thread: ThreadRecord) => string);
  /** The base system prompt (thread identity is appended), or a function building it all. */
  systemPrompt?: string | ((thread: ThreadRecord) => string);
  retry?: Partial<RetryPolicy>;
  maxTokens?: number;
  maxCompletionsPerSlice?: number;
}

/** Builds the slice dependencies both modes share; `deliver` is what differs between them. */
export function sliceDeps(
  opts: SystemOptions,
  bus: EventBus,
  deliver: (input: InputMessage) => Promise<unknown>,
): SliceDeps {
  const tools = new ToolRegistry(opts.tools ?? []);
  const model = opts.model;
  const prompt = opts.systemPrompt ?? DEFAULT_BASE_PROMPT;
  const deps: SliceDeps = {
    store: opts.store,
    provider: opts.provider,
    tools,
    bus,
    model: typeof model === 'string' ? () => model : model,
    systemPrompt: typeof prompt === 'string' ? (t) => buildSystemPrompt(prompt, t) : prompt,
    retry: { ...DEFAULT_RETRY, ...opts.retry },
    maxTokens: opts.maxTokens ?? 8192,
    maxCompletionsPerSlice: opts.maxCompletionsPerSlice ?? 50,
    dispatch: (thread, call) => dispatchCall({ store: opts.store, tools, bus, deliver }, thread, call),
  };
  return deps;
}
