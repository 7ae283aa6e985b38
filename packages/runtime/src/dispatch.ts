import type { EventBus } from './events.js';
import { asResultContent } from './history.js';
import type { InputMessage } from './input.js';
import { toolResult } from './input.js';
import type { PendingCall, RuntimeStore, ThreadRecord } from './store.js';
import type { AsyncToolContext, ToolOutput } from './tool.js';
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
  const respond = (output: ToolOutput): Promise<unknown> =>
    deps.deliver(
      toolResult(thread.id, call.id, asResultContent(output.content), {
        isError: output.isError === true,
        subscription: output.subscription === true,
      }),
    );
  const tool = deps.tools.get(call.name);
  try {
    if (tool?.kind !== 'async') throw new Error(`tool '${call.name}' is not an asynchronous tool`);
    const ctx: AsyncToolContext = {
      threadId: thread.id,
      threadStack: thread.stack,
      call: { id: call.id, name: call.name, input: call.input },
      respond: async (output) => {
        await respond(output);
      },
    };
    await tool.dispatch(call.input, ctx);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await respond({ content: `Error: Tool call failed: ${message}`, isError: true });
  }
  deps.bus.emit({ type: 'tool-dispatched', threadId: thread.id, callId: call.id });
}

export const INTERRUPTED_BY_RESTART =
  'Error: this tool call was interrupted because Infinity Code stopped while it ran; it may have ' +
  'partly run. Check its effects before running it again.';
