import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, runCompletion } from './completion.js';
import { ModelError } from './errors.js';
import type { CompletionRequest, ModelProvider, StreamEvent } from './provider.js';

const request: CompletionRequest = { model: 'm', system: '', messages: [], tools: [], maxTokens: 10 };
const usage = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** First attempt: some text, then silence until aborted. Later attempts: a whole reply. */
function stallingOnce(): ModelProvider & { attempts: number } {
  return {
    name: 'stalling',
    attempts: 0,
    async *stream(_r: CompletionRequest, signal: AbortSignal): AsyncGenerator<StreamEvent> {
      if (this.attempts++ === 0) {
        yield { type: 'text', text: 'half a rep' };
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
      }
      yield { type: 'text', text: 'the whole reply' };
      yield { type: 'done', stopReason: 'end_turn', usage };
    },
  };
}

describe('runCompletion', () => {
  it('abandons a stream that goes silent, discards its text, and says so once (no "retrying" in the error)', async () => {
    const provider = stallingOnce();
    const retries: Array<{ attempt: number; error: ModelError }> = [];
    const policy = { ...DEFAULT_RETRY, initTimeoutMs: 40, stallTimeoutMs: 40, baseDelayMs: 1, maxDelayMs: 2 };
    const out = await runCompletion(provider, request, policy, new AbortController().signal, {
      onText: () => undefined,
      onRetry: (info) => retries.push(info),
    });
    expect(out).toMatchObject({ cancelled: false, content: [{ type: 'text', text: 'the whole reply' }] });
    expect(provider.attempts).toBe(2);
    expect(retries).toHaveLength(1);
    expect(retries[0].error.kind).toBe('timeout');
    expect(retries[0].error.message).toBe('The model API stream stalled: nothing arrived for 40 ms.');
    expect(retries[0].error.message).not.toMatch(/retrying/i);
  });

  it('gives an unreachable API a few quick retries, then fails with its error; transient errors get the long budget', async () => {
    const failing = (kind: 'unreachable' | 'server'): ModelProvider & { attempts: number } => ({
      name: 'failing',
      attempts: 0,
      // eslint-disable-next-line require-yield -- a provider that fails before its first event
      async *stream(): AsyncGenerator<StreamEvent> {
        this.attempts++;
        throw new ModelError(kind, `${kind} failure`);
      },
    });
    const policy = { ...DEFAULT_RETRY, baseDelayMs: 4, maxDelayMs: 8, maxRetries: 8, unreachableRetries: 3, unreachableBudgetMs: 60_000 };
    const run = async (p: ModelProvider, pol = policy) => {
      const delays: number[] = [];
      const err = await runCompletion(p, request, pol, new AbortController().signal, {
        onText: () => undefined,
        onRetry: ({ delayMs }) => delays.push(delayMs),
      }).then(() => undefined, (e: unknown) => e);
      return { err, delays };
    };

    const unreachable = failing('unreachable');
    const quick = await run(unreachable);
    expect(quick.err).toMatchObject({ kind: 'unreachable', message: 'unreachable failure' });
    expect(unreachable.attempts).toBe(4);
    // A quarter of the base delay, doubling.
    expect(quick.delays).toEqual([1, 2, 4]);

    const server = failing('server');
    await run(server);
    expect(server.attempts).toBe(9);

    // The budget bounds the quick retries by time too: none fits in a budget of 1 ms.
    const slow = failing('unreachable');
    const none = await run(slow, { ...policy, baseDelayMs: 40, unreachableBudgetMs: 1 });
    expect(none.delays).toEqual([]);
    expect(slow.attempts).toBe(1);
  });

  it('a retry goes to the model the host switched to: at once when it switched on the failure, after the wait otherwise', async () => {
    // Overloaded for "m", whole replies for the others: the host's fallback is what answers.
    const provider = {
      name: 'overloaded-m',
      seen: [] as Array<{ model: string; maxTokens: number }>,
      async *stream(r: CompletionRequest): AsyncGenerator<StreamEvent> {
        this.seen.push({ model: r.model, maxTokens: r.maxTokens });
        if (r.model === 'm') throw new ModelError('overloaded', 'overloaded', { status: 529 });
        yield { type: 'text', text: `from ${r.model}` };
        yield { type: 'done', stopReason: 'end_turn', usage };
      },
    };
    const policy = { ...DEFAULT_RETRY, baseDelayMs: 1, maxDelayMs: 2 };
    let model = 'm';
    const delays: number[] = [];
    const hooks = {
      onText: () => undefined,
      onRetry: ({ delayMs }: { delayMs: number }) => delays.push(delayMs),
      retryRequest: (failed: CompletionRequest) => (failed.model === model ? failed : { ...failed, model, maxTokens: 5 }),
    };
    // Switched as the failure is seen (a provider wrapper does): no wait.
    const switching: ModelProvider = {
      name: 'switching',
      async *stream(r, signal) {
        try {
          yield* provider.stream(r);
        } catch (err) {
          if (!signal.aborted) model = 'fallback';
          throw err;
        }
      },
    };
    const out = await runCompletion(switching, request, policy, new AbortController().signal, hooks);
    expect(out).toMatchObject({ cancelled: false, model: 'fallback', content: [{ type: 'text', text: 'from fallback' }] });
    expect(provider.seen).toEqual([
      { model: 'm', maxTokens: 10 },
      { model: 'fallback', maxTokens: 5 },
    ]);
    expect(delays).toEqual([0]);

    // Switched by an observer of the retry (during the wait): the retry after the wait goes there.
    provider.seen.length = 0;
    delays.length = 0;
    model = 'm';
    const later = await runCompletion(provider, request, policy, new AbortController().signal, {
      ...hooks,
      onRetry: (info) => {
        hooks.onRetry(info);
        model = 'other';
      },
    });
    expect(later.model).toBe('other');
    expect(provider.seen.map((s) => s.model)).toEqual(['m', 'other']);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThan(0);

    // Nobody switches: the same model, retried until the budget is spent.
    provider.seen.length = 0;
    model = 'm';
    const err = await runCompletion(provider, request, { ...policy, maxRetries: 2 }, new AbortController().signal, hooks).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ kind: 'overloaded' });
    expect(provider.seen.map((s) => s.model)).toEqual(['m', 'm', 'm']);
  });
});
