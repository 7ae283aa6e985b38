// Helpers for scripted brains driving the fake Messages API, and checks of what the model was sent.
import { threadStackOf, type ContentBlock, type HistoryMessage } from '@infinity-code/runtime';

export type Msg = HistoryMessage;

/** The thread a request is for: its last identity line (system prompt, then messages). */
export function threadOf(body: { system?: unknown; messages?: readonly unknown[] }): { id: string; stack: string[] } {
  const stack = threadStackOf(body) ?? [];
  return { id: stack.at(-1) ?? 'unknown', stack };
}

export function blocks(messages: readonly Msg[]): ContentBlock[] {
  return messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
}

/** The tool calls in the history, in order. */
export function toolCalls(messages: readonly Msg[]): Array<{ id: string; name: string; input: Record<string, unknown> }> {
  return blocks(messages).flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : []));
}

/** Text of every tool result in the history, by the id of the call it answers. */
export function toolResults(messages: readonly Msg[]): Map<string, { text: string; isError: boolean }> {
  const out = new Map<string, { text: string; isError: boolean }>();
  for (const b of blocks(messages)) {
    if (b.type !== 'tool_result') continue;
    const text = (Array.isArray(b.content) ? b.content : [])
      .map((c) => (c.type === 'text' ? c.text : `[${c.type}]`))
      .join('\n');
    out.set(b.tool_use_id, { text, isError: b.is_error === true });
  }
  return out;
}

/** The result of the last tool call, if it has one. */
export function lastResult(messages: readonly Msg[]): { name: string; text: string; isError: boolean } | undefined {
  const calls = toolCalls(messages);
  const last = calls.at(-1);
  if (!last) return undefined;
  const r = toolResults(messages).get(last.id);
  return r && { name: last.name, ...r };
}

/** All text (assistant text and tool results) in the history. */
export function allText(messages: readonly Msg[]): string {
  return blocks(messages)
    .map((b) => {
      if (b.type === 'text') return b.text;
      if (b.type === 'tool_result') return (Array.isArray(b.content) ? b.content : []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      return '';
    })
    .join('\n');
}

/**
 * What the Messages API requires of a conversation, checked the way it would reject one: roles
 * alternate starting with the user; every tool_use is answered by exactly one tool_result, in the
 * next message; every tool_result answers a tool_use of the message just before; no call id twice.
 * `final` allows the history to end with the assistant's answer (a stored history, not a request).
 */
export function historyProblems(messages: readonly Msg[], opts: { final?: boolean } = {}): string[] {
  const problems: string[] = [];
  const seenCalls = new Set<string>();
  messages.forEach((m, i) => {
    const want = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role !== want) problems.push(`message ${i} is ${m.role}, expected ${want}`);
    if (!Array.isArray(m.content) || m.content.length === 0) problems.push(`message ${i} has no content`);
    const content = Array.isArray(m.content) ? m.content : [];
    const uses = content.filter((b) => b.type === 'tool_use');
    for (const u of uses) {
      if (seenCalls.has(u.id)) problems.push(`tool_use ${u.id} appears twice`);
      seenCalls.add(u.id);
    }
    if (m.role === 'assistant' && uses.length > 0) {
      const next = messages[i + 1];
      if (!next) {
        if (!opts.final) problems.push(`tool_use ${uses.map((u) => u.id).join(',')} at the end has no result`);
        // A stored history may end on a call still waiting for its result only if it is the last row.
        return;
      }
      const answers = (Array.isArray(next.content) ? next.content : []).filter((b) => b.type === 'tool_result');
      for (const u of uses) {
        const n = answers.filter((a) => a.tool_use_id === u.id).length;
        if (n !== 1) problems.push(`tool_use ${u.id} (${u.name}) has ${n} results in the next message`);
      }
    }
    if (m.role === 'user') {
      const prev = messages[i - 1];
      const prevUses = new Set(
        (prev && Array.isArray(prev.content) ? prev.content : []).flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])),
      );
      for (const b of content) {
        if (b.type === 'tool_result' && !prevUses.has(b.tool_use_id)) {
          problems.push(`message ${i}: tool_result for ${b.tool_use_id} does not answer the message before`);
        }
      }
    }
  });
  if (!opts.final && messages.at(-1)?.role !== 'user') problems.push('the request does not end with a user message');
  return problems;
}
