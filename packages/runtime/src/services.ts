import type { EventBus } from './events.js';
import type { InputMessage } from './input.js';
import type { RuntimeStore, ThreadRecord } from './store.js';
import type { ToolRegistry } from './tool-registry.js';

export interface Limits {
  /** Open threads under one root, the root included. */
  maxLiveThreads: number;
  /** Completions one thread may run over its life. */
  maxCompletionsPerThread: number;
  /** Bounds loops of synchronous calls and corrections inside one slice. */
  maxCompletionsPerSlice: number;
}

/** What built-in tools and thread lifecycle code reach: the same in local and step mode. */
export interface RuntimeServices {
  store: RuntimeStore;
  bus: EventBus;
  tools: ToolRegistry;
  limits: Limits;
  /** Local mode: durable enqueue, then route. Step mode: the host's queue. */
  deliver(input: InputMessage): Promise<unknown>;
  /** A durable timer was added; the scheduler (if any) re-arms. */
  timerAdded(dueAt: number): void;
  now(): number;
  /** Structured data attached to a child's report (the CLI attaches the child's diff). */
  attachReport?: (thread: ThreadRecord) => Promise<unknown>;
}
