// The history rules the real Messages API enforces with HTTP 400, so a client bug that would only
// show against the real service (a tool call left unanswered, a result out of place, a fifth cache
// marker) fails a local test too. Messages name the place the way the real ones do (`messages.3`).
import { isRecord } from './token-estimate.js';

export const MAX_CACHE_MARKERS = 4;

type Block = Record<string, unknown>;

/** The first problem with a request body, worded like the real API's 400 message; undefined if valid. */
export function validateMessagesRequest(body: unknown): string | undefined {
  if (!isRecord(body)) return 'request body must be a JSON object';
  return checkSystem(body.system) ?? checkTools(body.tools) ?? checkMessages(body.messages) ?? checkMarkers(body);
}

function checkSystem(system: unknown): string | undefined {
  if (system === undefined || typeof system === 'string') return undefined;
  if (!Array.isArray(system)) return 'system: Input should be a valid string or a list of text blocks';
  const bad = system.findIndex((b) => !isRecord(b) || b.type !== 'text' || typeof b.text !== 'string');
  if (bad >= 0) return `system.${bad}: Input should be a text block`;
  const empty = system.findIndex((b: Block) => b.text === '');
  return empty >= 0 ? `system.${empty}: text content blocks must be non-empty` : undefined;
}

function checkTools(tools: unknown): string | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return 'tools: Input should be a valid list';
  const bad = tools.findIndex((t) => !isRecord(t) || typeof t.name !== 'string');
  return bad >= 0 ? `tools.${bad}.name: Field required` : undefined;
}

function checkMessages(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return 'messages: Field required';
  if (messages.length === 0) return 'messages: at least one message is required';
  const contents: Block[][] = [];
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m)) return `messages.${i}: Input should be an object`;
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (i === 0 && m.role !== 'user') return 'messages.0.role: first message must use the "user" role';
    const prev = messages[i - 1] as Block | undefined;
    if (prev && prev.role === m.role) {
      return `messages.${i}: roles must alternate between "user" and "assistant", but found multiple "${m.role}" roles in a row`;
    }
    const content = asBlocks(m.content);
    if (typeof content === 'string') return `messages.${i}.${content}`;
    // The real API lets only a final assistant message (a prefill) be empty.
    const isPrefill = i === messages.length - 1 && m.role === 'assistant';
    if (content.length === 0 && !isPrefill) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
    const emptyText = content.findIndex((b) => b.type === 'text' && b.text === '');
    if (emptyText >= 0) return `messages.${i}.content.${emptyText}: text content blocks must be non-empty`;
    contents.push(content);
  }
  return checkToolPairing(contents);
}

/** The content as blocks (a string is one text block), or what is wrong with it. */
function asBlocks(content: unknown): Block[] | string {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return 'content: Input should be a valid string or a list of content blocks';
  const bad = content.findIndex((b) => !isRecord(b) || typeof b.type !== 'string');
  if (bad >= 0) return `content.${bad}: Input should be a content block with a "type"`;
  return content as Block[];
}

/**
 * Every tool_use of an assistant message is answered at the very start of the next (user)
 * message, one tool_result each, in the calls' order; no tool_result stands anywhere else.
 */
function checkToolPairing(messages: readonly Block[][]): string | undefined {
  const seen = new Set<string>();
  for (const [i, content] of messages.entries()) {
    const calls: string[] = [];
    for (const [k, b] of content.entries()) {
      if (b.type !== 'tool_use') continue;
      const id = String(b.id);
      if (seen.has(id)) return `messages.${i}.content.${k}: \`tool_use\` ids must be unique`;
      seen.add(id);
      calls.push(id);
    }
    const answered = i > 0 ? callsOf(messages[i - 1]) : [];
    const problem = checkResults(i, content, answered) ?? checkOrder(i, leadingResults(content), answered);
    if (problem) return problem;
    const next = leadingResults(messages[i + 1] ?? []);
    const missing = calls.filter((id) => !next.some((b) => b.tool_use_id === id));
    if (missing.length > 0) {
      return (
        `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message, before any other content.'
      );
    }
  }
  return undefined;
}

/** The tool_result blocks a message starts with. */
function leadingResults(content: readonly Block[]): readonly Block[] {
  const end = content.findIndex((b) => b.type !== 'tool_result');
  return end < 0 ? content : content.slice(0, end);
}

/** Run after checkResults, so the results are exactly the calls, possibly reordered. */
function checkOrder(i: number, results: readonly Block[], calls: readonly string[]): string | undefined {
  const k = results.findIndex((b, n) => b.tool_use_id !== calls[n]);
  if (k < 0 || results.length !== calls.length) return undefined;
  return (
    `messages.${i}.content.${k}: \`tool_result\` blocks must follow the order of the \`tool_use\` blocks ` +
    `in messages.${i - 1}: expected ${calls[k]}, found ${String(results[k].tool_use_id)}`
  );
}

function callsOf(content: readonly Block[]): string[] {
  return content.flatMap((b) => (b.type === 'tool_use' ? [String(b.id)] : []));
}

/** The tool_result blocks of message i, against the calls of the message before it. */
function checkResults(i: number, content: readonly Block[], calls: readonly string[]): string | undefined {
  const found = new Set<string>();
  for (const [k, b] of content.entries()) {
    if (b.type !== 'tool_result') continue;
    const id = String(b.tool_use_id);
    if (!calls.includes(id)) {
      return (
        `messages.${i}.content.${k}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
        'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.'
      );
    }
    if (found.has(id)) return `messages.${i}.content.${k}: each \`tool_use\` must have a single result; found multiple \`tool_result\` blocks with id: ${id}`;
    found.add(id);
  }
  return undefined;
}

/** Markers anywhere: tool definitions, system blocks, message blocks and blocks inside tool results. */
function checkMarkers(body: Block): string | undefined {
  const blocks: unknown[] = [...listOf(body.tools), ...listOf(body.system)];
  for (const m of listOf(body.messages)) {
    for (const b of listOf(isRecord(m) ? m.content : undefined)) {
      blocks.push(b, ...listOf(isRecord(b) && b.type === 'tool_result' ? b.content : undefined));
    }
  }
  const found = blocks.filter((b) => isRecord(b) && b.cache_control != null).length;
  return found > MAX_CACHE_MARKERS
    ? `A maximum of ${MAX_CACHE_MARKERS} blocks with cache_control may be provided. Found ${found}.`
    : undefined;
}

function listOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
