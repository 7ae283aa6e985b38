// --include-partial-messages: the replies as they stream, as the Messages API's own stream events
// (message_start, content_block_start/delta/stop, message_delta, message_stop), which Claude Code
// passes on in its `stream_event` lines. Built from the runtime's events: a reply's text and
// thinking as they come, and its tool calls as they begin (their input comes whole, in the
// assistant line).
import type { RuntimeEvent } from '@infinity-code/runtime';

/** One raw stream event of the Messages API, for a thread's reply. */
export type StreamEvent = { type: string; [k: string]: unknown };

interface Open {
  /** The message_start is out (a retried attempt starts another). */
  started: boolean;
  model: string;
  /** The index of the block being streamed; -1 before the first. */
  index: number;
  block: 'text' | 'thinking' | 'tool_use' | undefined;
}

export class PartialMessages {
  private readonly open = new Map<string, Open>();
  private messages = 0;

  constructor(
    private readonly emit: (threadId: string, event: StreamEvent) => void,
    private readonly sessionId: string,
  ) {}

  event(e: RuntimeEvent): void {
    switch (e.type) {
      case 'completion-started':
        this.open.set(e.threadId, { started: false, model: e.model, index: -1, block: undefined });
        return;
      case 'completion-retry': {
        // The failed attempt's stream ended there; the retry's is a message of its own.
        const o = this.open.get(e.threadId);
        if (o?.started) {
          this.closeBlock(e.threadId, o);
          this.emit(e.threadId, { type: 'message_stop' });
          Object.assign(o, { started: false, index: -1, block: undefined });
        }
        return;
      }
      case 'thinking-delta':
        // '' starts a thinking block (under the `omitted` display it stays empty).
        if (e.text === '') this.startBlock(e.threadId, 'thinking', { type: 'thinking', thinking: '' });
        else this.delta(e.threadId, 'thinking', { type: 'thinking_delta', thinking: e.text });
        return;
      case 'text-delta':
        this.delta(e.threadId, 'text', { type: 'text_delta', text: e.text });
        return;
      case 'tool-call-streaming':
        this.startBlock(e.threadId, 'tool_use', { type: 'tool_use', id: e.callId, name: e.name, input: {} });
        return;
      case 'completion-finished': {
        const o = this.open.get(e.threadId);
        this.open.delete(e.threadId);
        if (!o) return;
        this.begin(e.threadId, o);
        this.closeBlock(e.threadId, o);
        this.emit(e.threadId, {
          type: 'message_delta',
          delta: { stop_reason: e.stopReason, stop_sequence: null },
          usage: { output_tokens: e.usage.output_tokens },
        });
        this.emit(e.threadId, { type: 'message_stop' });
        return;
      }
      case 'compaction-applied':
      case 'compaction-started':
      case 'completion-silence':
      case 'error':
      case 'event-injected':
      case 'input-accepted':
      case 'input-deferred':
      case 'input-dropped':
      case 'slice-finished':
      case 'slice-started':
      case 'thread-closed':
      case 'thread-spawned':
      case 'tool-call':
      case 'tool-denied':
      case 'tool-dispatched':
      case 'tool-interrupted':
      case 'tool-progress':
      case 'tool-result':
      case 'turn-committed':
        return;
    }
  }

  private begin(threadId: string, o: Open): void {
    if (o.started) return;
    o.started = true;
    this.emit(threadId, {
      type: 'message_start',
      message: {
        id: `msg_${this.sessionId}_partial_${++this.messages}`,
        type: 'message',
        role: 'assistant',
        model: o.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
  }

  private startBlock(threadId: string, kind: NonNullable<Open['block']>, contentBlock: object): void {
    const o = this.open.get(threadId);
    if (!o) return;
    this.begin(threadId, o);
    this.closeBlock(threadId, o);
    o.index++;
    o.block = kind;
    this.emit(threadId, { type: 'content_block_start', index: o.index, content_block: contentBlock });
  }

  private delta(threadId: string, kind: 'text' | 'thinking', delta: object): void {
    const o = this.open.get(threadId);
    if (!o) return;
    if (o.block !== kind) this.startBlock(threadId, kind, kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' });
    this.emit(threadId, { type: 'content_block_delta', index: o.index, delta });
  }

  private closeBlock(threadId: string, o: Open): void {
    if (o.block === undefined) return;
    this.emit(threadId, { type: 'content_block_stop', index: o.index });
    o.block = undefined;
  }
}
