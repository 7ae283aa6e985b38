import type { ThreadRecord } from './store.js';
import { stackLine } from './thread-identity.js';

export const DEFAULT_BASE_PROMPT =
  'You are Infinity Code, a coding agent working in threads. When several tool calls are ' +
  'independent, make them all in one reply: they run together, and their results come back ' +
  'together. Asynchronous tools answer later, and you continue when every result is in.';

/**
 * The system prompt: the base prompt, then the session's root thread. It is the same, byte for
 * byte, for every thread of a session, so all threads share one cached prompt prefix; a child
 * learns its own identity from its spawn result, which carries its own (later) stack line.
 */
export function buildSystemPrompt(base: string, thread: Pick<ThreadRecord, 'stack'>): string {
  const root = thread.stack[0];
  return (
    `${base}\n\nThe root thread ID is ${root}. A child thread is told its own ID and stack when it ` +
    'starts; the last "Thread stack:" line you have read is your own.\n' +
    stackLine([root])
  );
}
