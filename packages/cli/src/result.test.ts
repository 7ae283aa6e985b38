import { describe, expect, it } from 'vitest';
import { EXIT, UserError } from './exit-codes.js';
import { newTally, tallyEvent } from './headless.js';
import { Pricing } from './pricing.js';
import { buildResult, failedResult, markResultPrinted, modelLimits, NO_CHANGES, resultPrinted, type Outcome } from './result.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const usage = { input_tokens: 1000, output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const outcome: Outcome = NO_CHANGES;

describe('the tally of a run', () => {
  it("sums every thread's API time, and keeps the stop reason of the root's last reply only", () => {
    const t = newTally();
    tallyEvent(t, { type: 'completion-finished', threadId: 'root', model: 'm', usage, stopReason: 'tool_use', durationMs: 120 }, 'root');
    tallyEvent(t, { type: 'completion-finished', threadId: 'child', model: 'm', usage, stopReason: 'end_turn', durationMs: 80 }, 'root');
    expect(t.apiMs).toBe(200);
    expect(t.stopReason).toBe('tool_use');
    // A cancelled reply has no stop reason.
    tallyEvent(t, { type: 'completion-finished', threadId: 'root', model: 'm', usage, stopReason: null }, 'root');
    expect(t.stopReason).toBeNull();
    expect(t.apiMs).toBe(200);
  });
});

describe('buildResult', () => {
  it("has Claude Code's fields: errors as messages (ours with their kinds beside), per-model usage with the config's context window", () => {
    const t = newTally();
    tallyEvent(t, { type: 'completion-finished', threadId: 'root', model: 'claude-opus-5-5', usage, stopReason: 'end_turn', durationMs: 10 }, 'root');
    tallyEvent(t, { type: 'completion-finished', threadId: 'c', model: 'local-llm', usage, stopReason: 'end_turn', durationMs: 5 }, 'root');
    tallyEvent(t, { type: 'error', threadId: 'c', kind: 'refusal', message: 'The model declined.' }, 'root');
    const r = buildResult('s1', 'claude-opus-5-5', t, outcome, new Pricing(), 1234.4, modelLimits({ contextWindow: 50_000 }));
    expect(r).toMatchObject({
      subtype: 'error_during_execution',
      is_error: true,
      duration_ms: 1234,
      duration_api_ms: 15,
      stop_reason: 'end_turn',
      errors: ['The model declined.'],
      error_details: [{ kind: 'refusal', message: 'The model declined.' }],
      permission_denials: [],
      uuid: expect.stringMatching(UUID),
      total_cost_usd: null,
    });
    // Opus 5.5 at $4 input, $20 output per million; a model with no price has no cost.
    expect(r.modelUsage['claude-opus-5-5']).toEqual({
      inputTokens: 1000,
      outputTokens: 100,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      webSearchRequests: 0,
      costUSD: 0.006,
      contextWindow: 50_000,
      maxOutputTokens: 128_000,
    });
    expect(r.modelUsage['local-llm']).toMatchObject({ costUSD: null, inputTokens: 1000, maxOutputTokens: 32_000 });
  });
});

describe('failedResult: the result of a run an exception ended', () => {
  it('before any session: the error is the result text, the code is the error own, the session id names nothing', () => {
    const r = failedResult(new UserError('Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set.', EXIT.config), { durationMs: 12 });
    expect(r).toMatchObject({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      result: 'Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set.',
      errors: ['Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set.'],
      error_details: [{ kind: 'config', message: 'Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set.' }],
      status: 'config_error',
      exit_code: EXIT.config,
      num_turns: 0,
      total_cost_usd: 0,
      modelUsage: {},
      session_id: expect.stringMatching(UUID),
    });
    expect(failedResult(new UserError('Unexpected argument', EXIT.usage), { durationMs: 1 })).toMatchObject({ status: 'usage_error', exit_code: 2 });
    expect(failedResult(Object.assign(new Error('git failed'), { name: 'GitError' }), { durationMs: 1 })).toMatchObject({
      status: 'failed',
      exit_code: 1,
      error_details: [{ kind: 'fatal', message: 'git failed' }],
    });
  });

  it('mid-run: keeps the session, what the run spent and the errors it met before', () => {
    const t = newTally();
    tallyEvent(t, { type: 'completion-finished', threadId: 's1', model: 'claude-opus-5-5', usage, stopReason: 'tool_use', durationMs: 30 }, 's1');
    tallyEvent(t, { type: 'error', threadId: 's1', kind: 'other', message: 'a tool failed' }, 's1');
    const r = failedResult(new Error('the store is gone'), { sessionId: 's1', model: 'claude-opus-5-5', tally: t, pricing: new Pricing(), durationMs: 99 });
    expect(r).toMatchObject({
      session_id: 's1',
      model: 'claude-opus-5-5',
      num_turns: 1,
      duration_api_ms: 30,
      stop_reason: 'tool_use',
      total_cost_usd: 0.006,
      errors: ['a tool failed', 'the store is gone'],
    });
    expect(Object.keys(r.modelUsage)).toEqual(['claude-opus-5-5']);
  });

  it('an error is marked once its result is printed, across copies of the module (a registered symbol)', () => {
    const err = new Error('x');
    expect(resultPrinted(err)).toBe(false);
    markResultPrinted(err);
    expect(resultPrinted(err)).toBe(true);
    expect((err as unknown as Record<symbol, unknown>)[Symbol.for('infinity-code.resultPrinted')]).toBe(true);
    expect(resultPrinted('not an object')).toBe(false);
  });
});
