// What the fake refuses for the models in the table, seen through the real SDK: each refusal next
// to a variant the same model accepts, so a rule that refuses everything fails here too.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { BETA_THINKING_DISPLAY_UPDATES, startFakeMessagesApi, type FakeMessagesApi, type FakeMessagesApiOptions } from './index.js';

const servers: FakeMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(opts: Omit<FakeMessagesApiOptions, 'brain'> = {}, headers: Record<string, string> = {}) {
  let asked = 0;
  const api = await startFakeMessagesApi({
    ...opts,
    brain: () => {
      asked++;
      return { text: 'ok' };
    },
  });
  servers.push(api);
  const client = new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0, defaultHeaders: headers });
  return { api, client, asked: () => asked };
}

const ask = { role: 'user' as const, content: 'hello' };
/** Parameters the SDK's types no longer allow (the point is to send them anyway). */
type Loose = Record<string, unknown>;

/**
 * Sends a request (streamed for a large max_tokens, as the SDK insists); the reply's stop_reason,
 * or the API error.
 */
async function send(client: Anthropic, params: Loose): Promise<string | InstanceType<typeof Anthropic.APIError>> {
  const body = { max_tokens: 64, messages: [ask], ...params } as unknown as Anthropic.MessageCreateParamsNonStreaming;
  try {
    const msg = body.max_tokens > 16_000 ? await client.messages.stream(body).finalMessage() : await client.messages.create(body);
    return msg.stop_reason ?? 'null';
  } catch (err) {
    if (err instanceof Anthropic.APIError) return err;
    throw err;
  }
}

/** Expects a 400 invalid_request_error with exactly `message`, recorded, and the brain never asked. */
async function expect400(params: Loose, message: string, headers: Record<string, string> = {}): Promise<void> {
  const { api, client, asked } = await fake({}, headers);
  const err = await send(client, params);
  expect(err).toBeInstanceOf(Anthropic.BadRequestError);
  expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', apiMessage: message });
  expect(api.requests[0]).toMatchObject({ status: 400, error: message });
  expect(api.requests[0]?.usage).toBeUndefined();
  expect(asked()).toBe(0);
}

async function expectOk(params: Loose, headers: Record<string, string> = {}): Promise<void> {
  const { api, client } = await fake({}, headers);
  expect(await send(client, params)).toBe('end_turn');
  expect(api.requests[0]?.status).toBe(200);
}

const OPUS_DISABLED =
  '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
const OPUS_ENABLED =
  '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';

describe('fake Messages API: retired models', () => {
  it('answers a retired id with 404 not_found_error naming the model as sent, without asking the brain', async () => {
    const { api, client, asked } = await fake();
    for (const model of ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-opus-4-1']) {
      const err = await send(client, { model });
      expect(err).toBeInstanceOf(Anthropic.NotFoundError);
      expect(err).toMatchObject({ status: 404, type: 'not_found_error', apiMessage: `model: ${model}` });
    }
    expect(api.requests.map((r) => [r.status, r.error])).toEqual([
      [404, 'model: claude-sonnet-4-5'],
      [404, 'model: claude-sonnet-4-5-20250929'],
      [404, 'model: claude-opus-4-1'],
    ]);
    expect(asked()).toBe(0);
  });

  it('still serves legacy ids and ids it has never heard of', async () => {
    await expectOk({ model: 'claude-haiku-4-5' });
    await expectOk({ model: 'claude-opus-5' });
    await expectOk({ model: 'claude-nova-7' });
  });
});

describe('fake Messages API: thinking settings', () => {
  it('refuses thinking disabled on Opus and Sonnet 5.5 with the published wording; Haiku 5.5 accepts it', async () => {
    await expect400({ model: 'claude-opus-5-5', thinking: { type: 'disabled' } }, OPUS_DISABLED);
    await expect400({ model: 'claude-sonnet-5-5', thinking: { type: 'disabled' } }, OPUS_DISABLED);
    await expectOk({ model: 'claude-haiku-5-5', thinking: { type: 'disabled' } });
    await expectOk({ model: 'claude-opus-5-5', thinking: { type: 'adaptive' } });
  });

  it('refuses budgeted thinking on the 5.x models, as a type or as a stray budget_tokens', async () => {
    await expect400({ model: 'claude-opus-5-5', thinking: { type: 'enabled', budget_tokens: 2048 } }, OPUS_ENABLED);
    await expect400(
      { model: 'claude-haiku-5-5', thinking: { type: 'adaptive', budget_tokens: 2048 } },
      'thinking.budget_tokens: Extra inputs are not permitted. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    );
    await expectOk({ model: 'claude-opus-4-8', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } });
  });

  it('takes between_tools on Sonnet 5.5 only, up to effort high, with no other thinking field', async () => {
    await expectOk({ model: 'claude-sonnet-5-5', thinking: { type: 'between_tools' }, output_config: { effort: 'high' } });
    await expectOk({ model: 'claude-sonnet-5-5', thinking: { type: 'between_tools' } });
    for (const effort of ['xhigh', 'max']) {
      await expect400(
        { model: 'claude-sonnet-5-5', thinking: { type: 'between_tools' }, output_config: { effort } },
        `"thinking.type.between_tools" cannot be used with "output_config.effort" "${effort}". Use effort "low", "medium" or "high", or "thinking.type.adaptive".`,
      );
    }
    await expect400(
      { model: 'claude-sonnet-5-5', thinking: { type: 'between_tools', display: 'summarized' } },
      'thinking.between_tools.display: Extra inputs are not permitted',
    );
    await expect400(
      { model: 'claude-sonnet-5-5', thinking: { type: 'between_tools', block_binding: { prefix_mismatch_behavior: 'drop_block' } } },
      'thinking.between_tools.block_binding: Extra inputs are not permitted',
    );
    await expect400(
      { model: 'claude-opus-5-5', thinking: { type: 'between_tools' } },
      '"thinking.type.between_tools" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    );
  });

  it('takes display summarized and omitted; updates only with its beta header', async () => {
    await expectOk({ model: 'claude-sonnet-5-5', thinking: { type: 'adaptive', display: 'summarized' } });
    await expectOk({ model: 'claude-sonnet-5-5', thinking: { type: 'adaptive', display: 'omitted' } });
    await expect400(
      { model: 'claude-sonnet-5-5', thinking: { type: 'adaptive', display: 'updates' } },
      `thinking.display: "updates" requires the beta header "anthropic-beta: ${BETA_THINKING_DISPLAY_UPDATES}"`,
    );
    await expect400({ model: 'claude-sonnet-5-5', thinking: { type: 'adaptive', display: 'verbose' } }, "thinking.display: Input should be 'summarized' or 'omitted'");

    // The SDK's own beta route sets the header from `betas`.
    const { api, client } = await fake();
    const msg = await client.beta.messages.create({
      model: 'claude-opus-5-5',
      max_tokens: 64,
      messages: [ask],
      thinking: { type: 'adaptive', display: 'updates' },
      betas: [BETA_THINKING_DISPLAY_UPDATES],
    });
    expect(msg.stop_reason).toBe('end_turn');
    expect(api.requests[0]?.headers['anthropic-beta']).toContain(BETA_THINKING_DISPLAY_UPDATES);
  });
});

describe('fake Messages API: other parameters', () => {
  it('checks output_config.effort against the model: unknown levels, and any level where effort is refused', async () => {
    await expectOk({ model: 'claude-sonnet-5-5', output_config: { effort: 'max' } });
    await expect400(
      { model: 'claude-sonnet-5-5', output_config: { effort: 'ultra' } },
      "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh', 'max'",
    );
    await expect400(
      { model: 'claude-haiku-4-5', output_config: { effort: 'low' } },
      'output_config.effort: Extra inputs are not permitted; claude-haiku-4-5 does not support effort',
    );
  });

  it('refuses temperature, top_p and top_k at any value under API version 2026-10-21 (what the SDK sends)', async () => {
    await expect400({ model: 'claude-sonnet-5-5', temperature: 1 }, 'temperature: Extra inputs are not permitted');
    await expect400({ model: 'claude-haiku-4-5', top_p: 0.9 }, 'top_p: Extra inputs are not permitted');
    await expect400({ model: 'claude-opus-5-5', top_k: 5 }, 'top_k: Extra inputs are not permitted');
    const { api, client } = await fake();
    expect(await send(client, { model: 'claude-sonnet-5-5' })).toBe('end_turn');
    expect(api.requests[0]?.headers['anthropic-version']).toBe('2026-10-21');
    // An id outside the table is not held to it.
    await expectOk({ model: 'claude-nova-7', temperature: 0.2 });
  });

  it('under an older API version refuses only non-default sampling values, and only on the 5.x models', async () => {
    const old = { 'anthropic-version': '2023-06-01' };
    await expectOk({ model: 'claude-sonnet-5-5', temperature: 1 }, old);
    await expect400({ model: 'claude-sonnet-5-5', temperature: 0.2 }, 'temperature: this model only supports the default value 1', old);
    await expect400({ model: 'claude-sonnet-5-5', top_k: 40 }, 'top_k: this model does not support top_k', old);
    await expectOk({ model: 'claude-haiku-4-5', temperature: 0.2, top_k: 40 }, old);
  });

  it('refuses forced tool_choice where the model has none; auto always, and Haiku 5.5 still forces', async () => {
    const tools = [{ name: 'read_file', input_schema: { type: 'object' } }];
    for (const choice of [{ type: 'any' }, { type: 'tool', name: 'read_file' }]) {
      await expect400(
        { model: 'claude-sonnet-5-5', tools, tool_choice: choice },
        `tool_choice: "${choice.type}" is not supported for this model. Use "auto" or "none", and say in the prompt when a tool must be used.`,
      );
    }
    await expectOk({ model: 'claude-sonnet-5-5', tools, tool_choice: { type: 'auto' } });
    await expectOk({ model: 'claude-haiku-5-5', tools, tool_choice: { type: 'any' } });
  });

  it("refuses max_tokens above the model's maximum output", async () => {
    await expect400(
      { model: 'claude-sonnet-5-5', max_tokens: 128_001 },
      'max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens for claude-sonnet-5-5',
    );
    await expect400(
      { model: 'claude-opus-4-8', max_tokens: 100_000 },
      'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-opus-4-8',
    );
    await expectOk({ model: 'claude-sonnet-5-5', max_tokens: 128_000 });
  });

  it('refuses an assistant prefill on the models in the table, not on unknown ids', async () => {
    const messages = [ask, { role: 'assistant', content: 'Well,' }];
    await expect400(
      { model: 'claude-sonnet-5-5', messages },
      'messages.1: This model does not support assistant message prefill. The conversation must end with a user message.',
    );
    await expectOk({ model: 'claude-nova-7', messages });
  });

  it('lets every one of these through with strict: false', async () => {
    const { api, client } = await fake({ strict: false });
    const params: Loose[] = [
      { model: 'claude-sonnet-4-5' },
      { model: 'claude-opus-5-5', thinking: { type: 'disabled' } },
      { model: 'claude-sonnet-5-5', temperature: 0.3, tool_choice: { type: 'any' }, max_tokens: 200_000 },
      { model: 'claude-sonnet-5-5', messages: [ask, { role: 'assistant', content: 'Well,' }] },
    ];
    for (const p of params) expect(await send(client, p)).toBe('end_turn');
    expect(api.requests.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  });
});
