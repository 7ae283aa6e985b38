import type { ResultContent } from './messages.js';
import type { ThreadRecord } from './store.js';

export type JsonSchema = {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: readonly string[];
  additionalProperties?: boolean;
  [key: string]: unknown;
};

/** What the model is offered. */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/**
 * What a UI shows of a call's outcome, beside the content the model reads: never stored in
 * history, never seen by the model. Every field is optional; a UI falls back to the call's display
 * line and the content's first line (a tool server's tools give none).
 */
export interface ToolDisplay {
  /** The call's line once it ran, e.g. `Edit src/a.ts` (replaces its `display` line). */
  title?: string;
  /** The outcome in a few words, e.g. `+3 -1`, `12 matches in 4 files`, `exit code 1`. */
  summary?: string;
  /** What the call changed, as a unified diff (file edits). */
  diff?: string;
  /** A few lines worth showing under the summary (the end of a command's output). */
  output?: string[];
}

export interface ToolOutput {
  content: string | ResultContent[];
  /** For UIs only (see ToolDisplay). */
  display?: ToolDisplay;
  isError?: boolean;
  /** The call keeps going: events for it follow (docs/architecture.md, *Events and subscriptions*). */
  subscription?: boolean;
  /** Synchronous tools only: the thread's turn ends with this result (close_thread). */
  stop?: boolean;
  /** Synchronous tools only: subscriptions of the thread that end now (cancel_subscription). */
  unsubscribe?: string[];
  /**
   * Synchronous tools only: the call created this child thread (spawn_thread). The child starts
   * once the reply's other synchronous calls have run, so it can be told what its siblings are.
   */
  spawned?: string;
}

/** Identity of the calling thread, given to every tool. */
export interface ToolContext {
  readonly threadId: string;
  /** Root first, the calling thread last. */
  readonly threadStack: readonly string[];
  readonly call: ToolCall;
  /** The calling thread's state when the call was made. */
  readonly thread: Readonly<ThreadRecord>;
}

/** One event of a subscription (after a result flagged `subscription`). */
export interface ToolEvent {
  content: string | ResultContent[];
  /** For UIs only (see ToolDisplay), e.g. a command's exit status on its final event. */
  display?: ToolDisplay;
  /** Stable id (dedup key); give one when events may be re-emitted after a restart. */
  id?: string;
  isError?: boolean;
  /** The subscription's last event. */
  final?: boolean;
  /** Append to the thread's history (command output); otherwise an ephemeral thread handles it. */
  associative?: boolean;
  /**
   * Associative events only: doesn't wake the thread. It waits in the queue and reaches history
   * with whatever wakes the thread next (another event, a result, user text), coalesced with the
   * subscription's neighbouring events: output the model did not ask to be woken for.
   */
  quiet?: boolean;
}

/** An async tool answers later through `respond`; the runtime turns that into a queued input. */
export interface AsyncToolContext extends ToolContext {
  respond(output: ToolOutput): Promise<void>;
  /** Send an event of the subscription this call started. */
  emit(event: ToolEvent): Promise<void>;
  /**
   * Output as it happens, for UIs only (a live tail of a running command): not stored, not seen
   * by the model, lost if nobody watches. What the model sees goes through `respond` and `emit`.
   * `final`: the work is over (a background command exited), even if its events are still queued.
   */
  progress(text: string, opts?: { final?: boolean }): void;
}

interface ToolBase extends ToolDefinition {
  /** A short line for UIs, e.g. `$ npm test`. */
  display?(input: Record<string, unknown>): string;
}

/**
 * Runs inline inside the slice, once the reply holding the call is committed; when every call of
 * the reply has its result, the slice loops to another completion.
 */
export interface SyncTool extends ToolBase {
  kind: 'sync';
  /**
   * Runs only after every asynchronous call of the same reply has its result: a report, a close
   * or a spawn must see the effects of the edits the model asked for alongside it.
   */
  runsLast?: boolean;
  execute(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> | ToolOutput;
}

/**
 * Dispatched after the turn holding its call is committed; the slice then ends. The result comes
 * back as an input. Dispatch should only start the work: anything slow belongs after it returns.
 */
export interface AsyncTool extends ToolBase {
  kind: 'async';
  /** Waiting tools (sleep): a pending call to one doesn't hold back events. */
  passive?: boolean;
  /**
   * The call runs outside this process (a tool server), so its result can still arrive after a
   * restart. Calls of other tools die with the process and are reported as interrupted.
   */
  survivesRestart?: boolean;
  dispatch(input: Record<string, unknown>, ctx: AsyncToolContext): void | Promise<void>;
  /** Stop a running call (user interrupted it, or it was cancelled). Best effort. */
  cancel?(ctx: ToolContext, how?: CancelOptions): void;
  /**
   * Present when a running call may go on in the background instead of being cancelled when the
   * user's message reaches its thread: the runtime then answers the call for it (saying so) and
   * starts its subscription, and the tool delivers what follows as events, never a result.
   */
  background?(ctx: ToolContext): void;
  /** With `background`: whether this call can go on now (false, say, before it started); it is cancelled otherwise. */
  canBackground?(ctx: ToolContext): boolean;
  /** After a restart, pick up a subscription of this tool that is still active. */
  resume?(ctx: AsyncToolContext): void;
}

/** How a call is stopped (see AsyncTool.cancel). */
export interface CancelOptions {
  /**
   * The user stopped it from a UI while its thread was waiting on nothing else (a command in the
   * background): the subscription's last event says the user stopped it and is quiet, so the
   * thread reads it when something else wakes it rather than being woken to carry on.
   */
  byUser?: boolean;
}

export type Tool = SyncTool | AsyncTool;

export function toolDefinition(tool: Tool): ToolDefinition {
  return { name: tool.name, description: tool.description, input_schema: tool.input_schema };
}
