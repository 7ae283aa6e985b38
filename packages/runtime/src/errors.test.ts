import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_RETRY, runCompletion } from './completion.js';
import { ModelError } from './errors.js';
import type { CompletionRequest, ModelProvider, StreamEvent } from './provider.js';

const request: CompletionRequest = { model: 'm', system: '', messages: [], tools: [], maxTokens: 10 };

describe('ModelError', () => {
  it("is recognised when another copy of the runtime made it: a provider's failure keeps its kind", async () => {
    // The CLI's demo hands a provider from one build to the headless run of another.
    vi.resetModules();
    const copy = await import('./errors.js');
    expect(copy.ModelError).not.toBe(ModelError);
    expect(new copy.ModelError('rate_limit', 'slow down') instanceof ModelError).toBe(true);
    const provider: ModelProvider = {
      name: 'failing',
      // eslint-disable-next-line require-yield -- a provider that fails before its first event
      async *stream(): AsyncGenerator<StreamEvent> {
        throw new copy.ModelError('invalid_request', 'the request was refused');
      },
    };
    const hooks = { onText: () => undefined, onRetry: () => undefined };
    const err = await runCompletion(provider, request, { ...DEFAULT_RETRY, maxRetries: 0 }, new AbortController().signal, hooks).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Not wrapped as an 'other' failure of the provider.
    expect(err).toMatchObject({ kind: 'invalid_request', retryable: false, message: 'the request was refused' });
  });

  it('is not any error, nor one merely named like it', () => {
    const named = Object.assign(new Error('x'), { name: 'ModelError', kind: 'server' });
    expect(named instanceof ModelError).toBe(false);
    const notObjects: unknown[] = [null, 'ModelError', 2];
    for (const v of notObjects) expect(v instanceof ModelError).toBe(false);
  });
});
