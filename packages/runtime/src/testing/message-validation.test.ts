import { describe, expect, it } from 'vitest';
import { validateMessagesRequest } from './message-validation.js';

const user = (...content: unknown[]) => ({ role: 'user', content });
const assistant = (...content: unknown[]) => ({ role: 'assistant', content });
const text = (t: string, marked = false) => ({ type: 'text', text: t, ...(marked && { cache_control: { type: 'ephemeral' } }) });
const call = (id: string) => ({ type: 'tool_use', id, name: 'read_file', input: { path: id } });
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: [text(`contents of ${id}`)] });

const check = (messages: unknown[], extra: Record<string, unknown> = {}) =>
  validateMessagesRequest({ model: 'claude-sonnet-5-5', max_tokens: 16, messages, ...extra });

describe('validateMessagesRequest', () => {
  it('accepts a history with parallel tool calls answered in order, text after the results', () => {
    const history = [
      user(text('read a, b and c')),
      assistant(text('Reading all three.'), call('toolu_a'), call('toolu_b'), text('and'), call('toolu_c')),
      user(result('toolu_a'), result('toolu_b'), result('toolu_c'), text('(the user typed this meanwhile)')),
      assistant(call('toolu_d')),
      user(result('toolu_d')),
      assistant(text('Done.')),
      user(text('thanks')),
    ];
    expect(check(history)).toBeUndefined();
    expect(check([{ role: 'user', content: 'a plain string' }], { system: 'a string system prompt' })).toBeUndefined();
  });

  // Whether the model takes a prefill at all is checkPrefill's question (model-rules.ts), asked after this one.
  it('finds a history ending in an assistant message well formed, even an empty one', () => {
    expect(check([user(text('hi')), assistant(text('Well,'))])).toBeUndefined();
    expect(check([user(text('hi')), { role: 'assistant', content: [] }])).toBeUndefined();
  });

  it('rejects an empty or missing message list', () => {
    expect(check([])).toBe('messages: at least one message is required');
    expect(validateMessagesRequest({ model: 'm' })).toBe('messages: Field required');
  });

  it('rejects a history that does not start with the user', () => {
    expect(check([assistant(text('hello')), user(text('hi'))])).toBe('messages.0.role: first message must use the "user" role');
  });

  it('rejects two messages of the same role in a row, naming the second', () => {
    expect(check([user(text('a')), assistant(text('b')), assistant(text('c'))])).toBe(
      'messages.2: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row',
    );
    expect(check([user(text('a')), user(text('b'))])).toMatch(/^messages\.1: .*multiple "user" roles in a row/);
  });

  it('rejects a message with empty content and an empty text block', () => {
    const empty = /^messages\.0: all messages must have non-empty content except for the optional final assistant message$/;
    expect(check([{ role: 'user', content: [] }])).toMatch(empty);
    expect(check([{ role: 'user', content: '' }])).toMatch(empty);
    expect(check([user(text('a')), assistant(text('b'), text(''))])).toBe('messages.1.content.1: text content blocks must be non-empty');
  });

  it('rejects a tool call reused: ids are unique in the whole request', () => {
    const history = [user(text('go')), assistant(call('toolu_a')), user(result('toolu_a')), assistant(call('toolu_a')), user(result('toolu_a'))];
    expect(check(history)).toBe('messages.3.content.0: `tool_use` ids must be unique');
  });

  it('rejects tool calls not answered by the next message, listing the ids', () => {
    const unanswered = [user(text('go')), assistant(call('toolu_a'), call('toolu_b')), user(text('never mind'))];
    expect(check(unanswered)).toBe(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a, toolu_b. ' +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message, before any other content.',
    );
    const half = [user(text('go')), assistant(call('toolu_a'), call('toolu_b')), user(result('toolu_a'))];
    expect(check(half)).toMatch(/^messages\.1: .* immediately after: toolu_b\. /);
    // A call as the last message is unanswered too (a prefill may not end in a tool call).
    expect(check([user(text('go')), assistant(call('toolu_a'))])).toMatch(/^messages\.1: .* immediately after: toolu_a\. /);
  });

  it('rejects a result answered later than two messages on', () => {
    const late = [user(text('go')), assistant(call('toolu_a')), user(text('wait')), assistant(text('ok')), user(result('toolu_a'))];
    expect(check(late)).toMatch(/^messages\.1: .* immediately after: toolu_a\. /);
  });

  it('rejects a result that comes after other content in the answering message', () => {
    const history = [user(text('go')), assistant(call('toolu_a')), user(text('first this'), result('toolu_a'))];
    expect(check(history)).toMatch(/^messages\.1: .* immediately after: toolu_a\. .*before any other content\.$/);
  });

  it('rejects results in another order than the calls', () => {
    const history = [user(text('go')), assistant(call('toolu_a'), call('toolu_b')), user(result('toolu_b'), result('toolu_a'))];
    expect(check(history)).toBe(
      'messages.2.content.0: `tool_result` blocks must follow the order of the `tool_use` blocks in messages.1: expected toolu_a, found toolu_b',
    );
  });

  it('rejects a result for an unknown call, or where no call precedes it', () => {
    const unknown = [user(text('go')), assistant(call('toolu_a')), user(result('toolu_a'), result('toolu_zz'))];
    expect(check(unknown)).toBe(
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zz. ' +
        'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
    expect(check([user(result('toolu_a'))])).toMatch(/^messages\.0\.content\.0: unexpected `tool_use_id` .*: toolu_a\. /);
    const stale = [user(text('go')), assistant(call('toolu_a')), user(result('toolu_a')), assistant(text('ok')), user(result('toolu_a'))];
    expect(check(stale)).toMatch(/^messages\.4\.content\.0: unexpected `tool_use_id`/);
  });

  it('rejects two results for one call', () => {
    const history = [user(text('go')), assistant(call('toolu_a')), user(result('toolu_a'), result('toolu_a'))];
    expect(check(history)).toMatch(/^messages\.2\.content\.1: each `tool_use` must have a single result.*: toolu_a$/);
  });

  it('allows four cache_control markers across tools, system and messages, not five', () => {
    const marker = { cache_control: { type: 'ephemeral' } };
    const tools = [{ name: 'read_file', input_schema: { type: 'object' } }, { name: 'grep', input_schema: { type: 'object' }, ...marker }];
    const system = [text('stable part', true), text('today is Monday')];
    const history = [user(text('go')), assistant(call('toolu_a')), user({ ...result('toolu_a'), ...marker }, text('more', true))];
    expect(check(history, { tools, system })).toBeUndefined();
    const nested = { ...result('toolu_a'), content: [text('deep', true)] };
    const five = [user(text('go')), assistant(call('toolu_a')), user({ ...nested, ...marker }, text('more', true))];
    expect(check(five, { tools, system })).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
  });

  it('rejects a system prompt that is neither a string nor text blocks', () => {
    expect(check([user(text('hi'))], { system: [text('ok'), { type: 'image' }] })).toBe('system.1: Input should be a text block');
    expect(check([user(text('hi'))], { system: 42 })).toMatch(/^system: /);
  });
});
