// Dispatches the calls of one model reply the way the runtime does once it runs them all: each
// tool's dispatch in the reply's order, back to back, none waiting for another's answer. (The
// runtime still runs one call per reply, so these tests speak to the tools directly.)
import { randomUUID } from 'node:crypto';
import { ZERO_USAGE, type AsyncToolContext, type ThreadRecord, type Tool, type ToolEvent, type ToolOutput } from '@infinity-code/runtime';
import { textOf } from './agent.js';

export interface ReplyCall {
  name: string;
  input: Record<string, unknown>;
}

export interface ReplyAnswer {
  text: string;
  isError: boolean;
}

export interface DispatchedCall {
  readonly id: string;
  /** The call's tool result. */
  readonly answer: Promise<ReplyAnswer>;
  /** Events of the subscription it started, if it did. */
  readonly events: ToolEvent[];
  /** Cancels the call, as the runtime does when the user interrupts it. */
  cancel(): void;
}

export function dispatchReply(tools: readonly Tool[], threadId: string, calls: readonly ReplyCall[]): DispatchedCall[] {
  const thread = threadRecord(threadId);
  return calls.map(({ name, input }) => {
    const tool = tools.find((t) => t.name === name);
    if (tool?.kind !== 'async') throw new Error(`no asynchronous tool ${name}`);
    const id = `toolu_${randomUUID()}`;
    const events: ToolEvent[] = [];
    let deliver!: (answer: ReplyAnswer) => void;
    const answer = new Promise<ReplyAnswer>((resolve) => (deliver = resolve));
    const ctx: AsyncToolContext = {
      threadId,
      threadStack: thread.stack,
      call: { id, name, input },
      thread,
      respond: async (output: ToolOutput) => deliver(asAnswer(output)),
      emit: async (event: ToolEvent) => {
        events.push(event);
      },
      progress: () => undefined,
    };
    void Promise.resolve(tool.dispatch(input, ctx)).catch((err: unknown) => deliver({ text: String(err), isError: true }));
    return { id, answer, events, cancel: () => tool.cancel?.(ctx) };
  });
}

function asAnswer(output: ToolOutput): ReplyAnswer {
  const text = typeof output.content === 'string' ? output.content : textOf(output.content);
  return { text, isError: output.isError === true };
}

function threadRecord(id: string): ThreadRecord {
  return {
    id,
    stack: [id],
    kind: 'root',
    parentId: null,
    spawnCallId: null,
    cutoff: 0,
    status: 'open',
    subscriptions: [],
    hasDeferred: false,
    compacting: false,
    batch: [],
    completions: 0,
    usage: { ...ZERO_USAGE },
    contextTokens: 0,
    messageCount: 0,
  };
}
