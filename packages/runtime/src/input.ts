import type { ResultContent } from './messages.js';

/**
 * Everything that can wake a thread arrives as one InputMessage on its queue. `id` is the stable
 * dedup key: delivering the same id twice has the effect of delivering it once.
 */
export interface InputMessage {
  id: string;
  threadId: string;
  body: InputBody;
}

export type InputBody = UserTextInput | ToolResultInput;

export interface UserTextInput {
  kind: 'user_text';
  text: string;
}

export interface ToolResultInput {
  kind: 'tool_result';
  toolUseId: string;
  content: ResultContent[];
  isError?: boolean;
  /** The result starts a subscription owned by the thread (its events follow later). */
  subscription?: boolean;
}

export function userText(threadId: string, textValue: string, id: string): InputMessage {
  return { id, threadId, body: { kind: 'user_text', text: textValue } };
}

/** A tool result's dedup id is its call id: one call has one result. */
export function toolResult(
  threadId: string,
  toolUseId: string,
  content: ResultContent[],
  opts: { isError?: boolean; subscription?: boolean; id?: string } = {},
): InputMessage {
  const body: ToolResultInput = { kind: 'tool_result', toolUseId, content };
  if (opts.isError) body.isError = true;
  if (opts.subscription) body.subscription = true;
  return { id: opts.id ?? toolUseId, threadId, body };
}
