/**
 * The line that tells a model which thread it is in. Every thread of a session reads the same
 * system prompt (one shared cached prefix), so identity lives in the messages: the root's line in
 * the system prompt, a child's in its spawn result, an owner's in its compaction summary; the last
 * such line a thread's request holds is that thread's own stack.
 */
export function stackLine(stack: readonly string[]): string {
  return `Thread stack: ${JSON.stringify(stack)}`;
}

const STACK_LINE = /Thread stack: (\[[^\]\n]*\])/g;

/** `text` without the identity line that ends it (a summary's owner line, for UIs). */
export function withoutStackLine(text: string): string {
  return text.replace(/\n*Thread stack: \[[^\]\n]*\]\s*$/, '');
}

/**
 * The stack of the thread a Messages API request is for: the last identity line in it, reading
 * the system prompt first, then the messages in order (text blocks and tool results). Takes the
 * wire shape loosely (system as a string or blocks), so a scripted model can read raw requests.
 */
export function threadStackOf(request: { system?: unknown; messages?: readonly unknown[] }): string[] | undefined {
  let last: string | undefined;
  const scan = (value: string): void => {
    for (const m of value.matchAll(STACK_LINE)) last = m[1];
  };
  for (const t of texts(request.system)) scan(t);
  for (const message of request.messages ?? []) {
    for (const t of texts((message as { content?: unknown }).content)) scan(t);
  }
  if (last === undefined) return undefined;
  try {
    const stack: unknown = JSON.parse(last);
    return Array.isArray(stack) && stack.every((s) => typeof s === 'string') ? stack : undefined;
  } catch {
    return undefined;
  }
}

function texts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block: unknown) => {
    const b = block as { type?: unknown; text?: unknown; content?: unknown };
    if (b.type === 'text' && typeof b.text === 'string') return [b.text];
    if (b.type === 'tool_result') return texts(b.content);
    return [];
  });
}
