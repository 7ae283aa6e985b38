import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { newTally, tallyEvent } from './headless.js';
import { BUILT_IN_PRICING } from './pricing.js';
import { buildResult, failedResult, NO_CHANGES, type Outcome } from './result.js';
import { StreamJsonWriter } from './stream-json.js';

const init = { model: 'm', cwd: '/repo', tools: ['read_file'], permissionMode: 'acceptEdits' as const, sandbox: 'overlay-root', contained: true };

// The published schema: what the writer prints must pass it, as scripts validate against it.
const schema = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/stream-json.schema.json', import.meta.url)), 'utf8')) as object;
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const outcome: Outcome = NO_CHANGES;

type Line = { type?: string; subtype?: string; [k: string]: unknown };

/** A run of one tool call and an answer, through the writer, with its result line. */
function aRun(): Line[] {
  const out: Line[] = [];
  const w = new StreamJsonWriter((o) => out.push(o as Line), 's1');
  const tally = newTally();
  const emit = (e: Parameters<StreamJsonWriter['event']>[0]) => {
    tallyEvent(tally, e, 's1');
    w.event(e);
  };
  w.init({ ...init, model: 'claude-sonnet-5-5', slashCommands: ['review'], apiKeySource: 'ANTHROPIC_API_KEY', mcpServers: [{ name: 'files', status: 'ready' }] });
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  emit({ type: 'completion-started', threadId: 's1', model: 'claude-sonnet-5-5' });
  emit({ type: 'tool-call', threadId: 's1', call: { id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } }, sync: false });
  emit({ type: 'completion-finished', threadId: 's1', model: 'claude-sonnet-5-5', usage, stopReason: 'tool_use', durationMs: 40 });
  emit({ type: 'turn-committed', threadId: 's1', messages: 1 });
  emit({
    type: 'tool-result',
    threadId: 's1',
    toolUseId: 'toolu_1',
    content: [
      { type: 'text', text: '1\thello' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
    ],
    isError: false,
  });
  emit({ type: 'completion-started', threadId: 's1', model: 'claude-sonnet-5-5' });
  emit({ type: 'text-delta', threadId: 's1', text: 'It says hello.' });
  emit({ type: 'completion-finished', threadId: 's1', model: 'claude-sonnet-5-5', usage, stopReason: 'end_turn', durationMs: 60 });
  emit({ type: 'slice-finished', threadId: 's1', outcome: 'completed', usage, completions: 1, contextTokens: 10 });
  w.changes({ subtype: 'none', files: [], conflicts: [], patch_file: null });
  w.result(buildResult('s1', 'claude-sonnet-5-5', tally, outcome, BUILT_IN_PRICING, 500));
  return out;
}

describe('StreamJsonWriter', () => {
  it('holds what happens before the init line (the task goes out before the sandbox is known) and writes it after init', () => {
    const out: Array<{ type?: string; subtype?: string }> = [];
    const w = new StreamJsonWriter((o) => out.push(o), 's1');
    w.event({ type: 'tool-result', threadId: 's1', toolUseId: 'toolu_1', content: [{ type: 'text', text: 'ok' }], isError: false });
    w.mcpServer({ name: 'files', state: 'ready', tools: [] });
    expect(out).toEqual([]);
    w.init(init);
    expect(out.map((o) => `${o.type}/${o.subtype ?? ''}`)).toEqual(['system/init', 'user/', 'mcp_server/']);
    w.event({ type: 'tool-result', threadId: 's1', toolUseId: 'toolu_2', content: [{ type: 'text', text: 'ok' }], isError: false });
    expect(out).toHaveLength(4);
  });

  it("gives every line Claude Code's type, session_id, a uuid of its own and an ISO timestamp, and every line passes the schema", () => {
    const out = aRun();
    expect(out.map((o) => o.type)).toEqual(['system', 'assistant', 'user', 'assistant', 'changes', 'result']);
    for (const line of out) {
      expect(line).toMatchObject({ session_id: 's1', uuid: expect.stringMatching(UUID) });
      expect(new Date(line.timestamp as string).toISOString()).toBe(line.timestamp);
      expect(validate(line), JSON.stringify(validate.errors)).toBe(true);
    }
    expect(new Set(out.map((o) => o.uuid)).size).toBe(out.length);
  });

  it("writes init with Claude Code's fields, and tool results as strings", () => {
    const out = aRun();
    expect(out[0]).toMatchObject({
      type: 'system',
      subtype: 'init',
      cwd: '/repo',
      session_id: 's1',
      tools: ['read_file'],
      mcp_servers: [{ name: 'files', status: 'ready' }],
      model: 'claude-sonnet-5-5',
      permissionMode: 'acceptEdits',
      slash_commands: ['review'],
      apiKeySource: 'ANTHROPIC_API_KEY',
      output_style: 'default',
    });
    expect(out[2]).toMatchObject({
      type: 'user',
      parent_tool_use_id: null,
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '1\thello\n[image image/png]', is_error: false }] },
    });
  });

  it("ends with Claude Code's result: API time, the root's stop reason, per-model usage", () => {
    const result = aRun().at(-1)!;
    expect(result).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      duration_ms: 500,
      duration_api_ms: 100,
      num_turns: 2,
      result: 'It says hello.',
      stop_reason: 'end_turn',
      permission_denials: [],
      errors: [],
    });
    // Sonnet 5.5 at $2 input, $10 output per million: 20 and 10 tokens.
    expect(result.modelUsage).toEqual({
      'claude-sonnet-5-5': {
        inputTokens: 20,
        outputTokens: 10,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        webSearchRequests: 0,
        costUSD: 0.00014,
        contextWindow: 1_000_000,
        maxOutputTokens: 128_000,
      },
    });
    expect(result.total_cost_usd).toBe(0.00014);
  });

  it('a run that fails before init still ends with a result line, after what was held', () => {
    const out: Line[] = [];
    const w = new StreamJsonWriter((o) => out.push(o as Line), 's1');
    w.event({ type: 'error', threadId: 's1', kind: 'other', message: 'boom' });
    expect(out).toEqual([]);
    w.result(failedResult(new Error('the sandbox could not open'), { sessionId: 's1', durationMs: 3 }));
    expect(out.map((o) => o.type)).toEqual(['error', 'result']);
    for (const line of out) expect(validate(line), JSON.stringify(validate.errors)).toBe(true);
  });
});
