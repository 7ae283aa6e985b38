// completion-finished carries the time the reply spent on the API (a headless run's
// duration_api_ms sums it): every attempt's, not the backoff waits between them.
import { setTimeout as wait } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ModelError } from './errors.js';
import { userText } from './input.js';
import type { ScriptedReply } from './scripted-provider.js';
import { makeHarness } from './test-support/harness.js';

const BACKOFF_MS = 300;
const ANSWER_MS = 100;

/** A model slow to answer: its text streams only after ANSWER_MS. */
async function* slowAnswer(): AsyncIterable<string> {
  await wait(ANSWER_MS);
  yield 'Done.';
}

describe('completion-finished durationMs', () => {
  it("counts the model's time, and leaves out the wait before a retry", async () => {
    const replies: ScriptedReply[] = [
      { error: new ModelError('rate_limit', 'Slow down', { retryAfterMs: BACKOFF_MS }) },
      { textStream: slowAnswer() },
    ];
    const h = makeHarness('local', 'memory', {
      brain: () => replies.shift()!,
      system: { retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1000, initTimeoutMs: 5_000, stallTimeoutMs: 5_000 } },
    });
    const started = performance.now();
    await h.send(userText('t1', 'hi', 'u1'));
    await h.settle();
    const wall = performance.now() - started;
    const finished = h.events.flatMap((e) => (e.type === 'completion-finished' ? [e] : []));
    expect(finished).toHaveLength(1);
    const ms = finished[0].durationMs!;
    // Timers may fire a millisecond early by performance.now()'s clock.
    expect(ms).toBeGreaterThanOrEqual(ANSWER_MS - 2);
    // The whole run held the backoff once: counted in durationMs too, it would not fit.
    expect(ms + BACKOFF_MS).toBeLessThanOrEqual(Math.ceil(wall) + 1);
    await h.close();
  });
});
