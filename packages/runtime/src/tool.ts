import type { ResultContent } from './messages.js';

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

export interface ToolOutput {
  content: string | ResultContent[];
  isError?: boolean;
  /** The call keeps going: events for it follow (DESIGN §2, subscriptions). */
  subscription?: boolean;
}

/** Identity of the calling thread, given to every tool. */
export interface ToolContext {
  readonly threadId: string;
  /** Root first, the calling thread last. */
  readonly threadStack: readonly string[];
  readonly call: ToolCall;
}

/** An async tool answers later through `respond`; the runtime turns that into a queued input. */
export interface AsyncToolContext extends ToolContext {
  respond(output: ToolOutput): Promise<void>;
}

interface ToolBase extends ToolDefinition {
  /** A short line for UIs, e.g. `$ npm test`. */
  display?(input: Record<string, unknown>): string;
}

/** Runs inline inside the slice; the slice loops to another completion with its result. */
export interface SyncTool extends ToolBase {
  kind: 'sync';
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
  cancel?(ctx: ToolContext): void;
}

export type Tool = SyncTool | AsyncTool;

export function toolDefinition(tool: Tool): ToolDefinition {
  return { name: tool.name, description: tool.description, input_schema: tool.input_schema };
}
