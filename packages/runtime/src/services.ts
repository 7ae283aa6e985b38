import type { EventBus } from './events.js';
import type { InputMessage } from './input.js';
import type { RuntimeStore, ThreadRecord } from './store.js';
import type { ToolRegistry } from './tool-registry.js';

/**
 * Looks at a child's report before its parent gets it: may attach structured data for UIs (the
 * child's diff) and a note the parent's model reads (e.g. the human's verdict on the diff). The
 * child waits while this runs. `signal` aborts when the system closes: a review nobody will
 * finish now should reject, and the report is reviewed again after the next start. `closed`: the
 * child closes with this report (its last), so its work area will not be used again.
 */
export type ReportReviewer = (
  thread: ThreadRecord,
  report: string,
  ctx: { signal: AbortSignal; closed: boolean },
) => Promise<{ attachment?: unknown; note?: string }>;

export interface Limits {
  /** Open threads under one root, the root included. */
  maxLiveThreads: number;
  /** Completions one thread may run over its life. */
  maxCompletionsPerThread: number;
  /**
   * Bounds a loop of corrections inside one slice: the thread stops after this many completions
   * in a row whose tool call failed at once (unknown tool, bad arguments, a synchronous call that
   * returned an error). Successful synchronous calls (a root spawning its children one after the
   * other) are progress and reset the count; maxCompletionsPerThread bounds those.
   */
  maxCompletionsPerSlice: number;
  /**
   * Tool calls run from one reply; the calls past it are answered with an error asking the model
   * to make them again in a later reply.
   */
  maxCallsPerReply: number;
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
  /** Runs before a child's report is delivered (the CLI reviews the child's diff here). */
  reviewReport?: ReportReviewer;
  /** Aborted when the system closes (local mode): waits inside slices give up. */
  closing: AbortSignal;
}
