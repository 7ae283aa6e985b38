import type { HistoryMessage, ResultContent, ToolResultBlock } from './messages.js';
import type { PendingCall } from './store.js';

// A reply's tool calls form one batch: each call gets its own result, and the results go to the
// model together, in call order, in one user message (the Messages API requires it). Pure
// functions over an immutable array, so a changed batch is a new array (cheap change detection).

export type Batch = readonly PendingCall[];

export function resultBlock(callId: string, content: ResultContent[], isError: boolean): ToolResultBlock {
  return isError
    ? { type: 'tool_result', tool_use_id: callId, content, is_error: true }
    : { type: 'tool_result', tool_use_id: callId, content };
}

/** The call with this id that still waits for its result, if any. */
export function unansweredCall(batch: Batch, callId: string): PendingCall | undefined {
  return batch.find((c) => c.id === callId && c.result === undefined);
}

export function unanswered(batch: Batch): PendingCall[] {
  return batch.filter((c) => c.result === undefined);
}

/** A copy of the batch with this call answered (the batch is unchanged if the call isn't waiting). */
export function answer(batch: Batch, callId: string, result: ToolResultBlock): PendingCall[] {
  return batch.map((c) => (c.id === callId && c.result === undefined ? { ...c, result } : c));
}

export function isComplete(batch: Batch): boolean {
  return batch.every((c) => c.result !== undefined);
}

/** The user message that hands a complete batch's results to the model, in call order. */
export function resultsMessage(batch: Batch): HistoryMessage {
  return { role: 'user', content: batch.map((c) => c.result!) };
}
