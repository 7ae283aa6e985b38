import type { AsyncTool, AsyncToolContext, ToolContext } from '../tool.js';

/** An async tool that answers on a later tick, like a real background tool. */
export function echoTool(log: string[] = []): AsyncTool & { log: string[] } {
  return {
    kind: 'async',
    name: 'echo',
    description: 'Echo text back, asynchronously.',
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    log,
    dispatch(input, ctx) {
      log.push(ctx.call.id);
      setImmediate(() => void ctx.respond({ content: `echo: ${String(input.text)}` }));
    },
  };
}

/** An async tool that never answers by itself; the test decides when (or whether) it does. */
export function heldTool(): AsyncTool & {
  held: Map<string, (text: string) => Promise<void>>;
  cancelled: ToolContext[];
} {
  const held = new Map<string, (text: string) => Promise<void>>();
  const cancelled: ToolContext[] = [];
  return {
    kind: 'async',
    name: 'hold',
    description: 'Start something slow.',
    input_schema: { type: 'object', properties: {} },
    held,
    cancelled,
    dispatch(_input, ctx) {
      held.set(ctx.call.id, (text) => ctx.respond({ content: text }));
    },
    cancel(ctx) {
      cancelled.push(ctx);
    },
  };
}

/** A subscription tool: answers "watching" (flagged subscription); the test emits its events. */
export function watchTool(): AsyncTool & { ctxs: Map<string, AsyncToolContext>; cancelled: string[] } {
  const ctxs = new Map<string, AsyncToolContext>();
  const cancelled: string[] = [];
  return {
    kind: 'async',
    name: 'watch',
    description: 'Watch something; events follow.',
    input_schema: { type: 'object', properties: { what: { type: 'string' } } },
    ctxs,
    cancelled,
    dispatch(_input, ctx) {
      ctxs.set(ctx.call.id, ctx);
      setImmediate(() => void ctx.respond({ content: 'watching', subscription: true }));
    },
    cancel(ctx) {
      cancelled.push(ctx.call.id);
    },
  };
}

/**
 * Like heldTool, but a running call goes on in the background when the user writes (as a
 * command does): the test emits its events through `ctxs`.
 */
export function backgroundTool(): AsyncTool & {
  ctxs: Map<string, AsyncToolContext>;
  backgrounded: string[];
  cancelled: string[];
} {
  const ctxs = new Map<string, AsyncToolContext>();
  const backgrounded: string[] = [];
  const cancelled: string[] = [];
  return {
    kind: 'async',
    name: 'job',
    description: 'Run a job that may outlast the wait.',
    input_schema: { type: 'object', properties: {} },
    ctxs,
    backgrounded,
    cancelled,
    dispatch(_input, ctx) {
      ctxs.set(ctx.call.id, ctx);
    },
    cancel(ctx) {
      cancelled.push(ctx.call.id);
    },
    background(ctx) {
      backgrounded.push(ctx.call.id);
    },
  };
}
