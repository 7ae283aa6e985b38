import { ToolInputError } from './errors.js';
import type { EventBus } from './events.js';
import { asResultContent } from './history.js';
import type { EventInput, InputMessage } from './input.js';
import { toolResult } from './input.js';
import type { PendingCall, RuntimeStore, ThreadRecord } from './store.js';
import type { AsyncToolContext, ToolEvent, ToolOutput } from './tool.js';
import type { ToolRegistry } from './tool-registry.js';

export interface DispatchDeps {
  store: RuntimeStore;
  tools: ToolRegistry;
  bus: EventBus;
  /** Where a tool's answer goes: the durable queue (local mode) or the host's (step mode). */
  deliver(input: InputMessage): Promise<unknown>;
}

/**
 * Step 6 of a slice. The dispatched mark is durable before the tool starts, so a restart never
 * runs a call twice: a call that was dispatched and never answered is reported as interrupted.
 */
export async function dispatchCall(
  deps: DispatchDeps,
  thread: ThreadRecord,
  call: PendingCall,
): Promise<void> {
  await deps.store.markDispatched(thread.id, call.id);
  call.dispatched = true;
  const ctx = asyncContext(deps, thread, call);
  const tool = deps.tools.get(call.name);
  try {
    if (tool?.kind !== 'async') throw new Error(`tool '${call.name}' is not an asynchronous tool`);
    await tool.dispatch(call.input, ctx);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const content = err instanceof ToolInputError ? `Error: ${message}` : `Error: Tool call failed: ${message}`;
    await ctx.respond({ content, isError: true });
  }
  deps.bus.emit({ type: 'tool-dispatched', threadId: thread.id, callId: call.id });
}

/** How a tool answers a call and emits its subscription's events. */
export function asyncContext(
  deps: Pick<DispatchDeps, 'deliver' | 'bus'>,
  thread: ThreadRecord,
  call: { id: string; name: string; input: Record<string, unknown> },
): AsyncToolContext {
  let seq = 0;
  return {
    threadId: thread.id,
    threadStack: thread.stack,
    call: { id: call.id, name: call.name, input: call.input },
    thread,
    respond: async (output: ToolOutput) => {
      await deps.deliver(
        toolResult(thread.id, call.id, asResultContent(output.content), {
          isError: output.isError === true,
          subscription: output.subscription === true,
          ...(output.display ? { display: output.display } : {}),
        }),
      );
    },
    emit: async (event: ToolEvent) => {
      const body: EventInput = { kind: 'event', toolUseId: call.id, content: asResultContent(event.content) };
      if (event.isError) body.isError = true;
      if (event.final) body.final = true;
      if (event.associative) body.associative = true;
      if (event.associative && event.quiet) body.quiet = true;
      if (event.display) body.display = event.display;
      await deps.deliver({ id: event.id ?? `${call.id}:event:${seq++}`, threadId: thread.id, body });
    },
    progress: (text: string, opts?: { final?: boolean }) => {
      if (text === '' && opts?.final !== true) return;
      deps.bus.emit({ type: 'tool-progress', threadId: thread.id, callId: call.id, text, ...(opts?.final ? { final: true } : {}) });
    },
  };
}
