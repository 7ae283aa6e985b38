import type { ThreadRecord } from './store.js';

export const DEFAULT_BASE_PROMPT =
  'You are Infinity Code, a coding agent working in threads. Each reply may call at most one ' +
  'tool; asynchronous tools answer later, and you continue when their result arrives.';

/** The system prompt of one round: the base prompt, then who this thread is. */
export function buildSystemPrompt(base: string, thread: ThreadRecord): string {
  return (
    `${base}\n\nYour current thread ID is ${thread.id}. The root thread ID is ${thread.stack[0]}.\n` +
    `Thread stack: ${JSON.stringify(thread.stack)}`
  );
}
