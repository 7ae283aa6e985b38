// A command that outlasts its wait goes on in the background and wakes the model once, at its
// exit, with all its output: its output in between is stored but starts no request. The built
// CLI, headless, against the strict fake Messages API.
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, runCli } from './support/cli.js';

type Block = { type: string; text?: string; name?: string; input?: Record<string, unknown>; content?: unknown };
const blocks = (body: FakeRequestBody): Block[] => (body.messages ?? []).flatMap((m) => (m as { content: Block[] }).content);
const TICKS = 12;
const COMMAND = `for i in $(seq 1 ${TICKS}); do echo "tick $i"; sleep 0.25; done`;

/** Runs the ticker with a 0.5 s wait; sleeps once it went to the background; answers when woken. */
const brain: FakeBrain = (body) => {
  const all = blocks(body);
  const calls = all.filter((b) => b.type === 'tool_use' && b.name !== 'receive_event__injected');
  if (calls.length === 0) return { content: [{ type: 'tool_use', name: 'execute_command', input: { command: COMMAND, timeout: 500 } }] };
  if (!all.some((b) => b.type === 'tool_use' && b.name === 'receive_event__injected')) {
    return { content: [{ type: 'tool_use', name: 'sleep_until_event_or_input', input: {} }] };
  }
  return { content: [{ type: 'text', text: 'The ticker finished.' }] };
};

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('a long command, headless', () => {
  it('costs three requests (the call, the sleep, the exit), and its one injected event holds every line in order', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const r = await runCli(['-p', 'Run the ticker.', '--yes', '--output-format', 'json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url },
    });
    expect(r.code, r.stderr).toBe(0);
    const requests = api.requests.filter((q) => q.path === '/v1/messages');
    // Every line of output was an event of its own before: ten and more requests for this run.
    expect(requests).toHaveLength(3);
    const last = blocks(requests.at(-1)!.body);
    const injected = last.filter((b) => b.type === 'tool_use' && b.name === 'receive_event__injected');
    expect(injected).toHaveLength(1);
    expect(injected[0].input).toMatchObject({ original_tool_name: 'execute_command' });
    const texts = JSON.stringify(last.filter((b) => b.type === 'tool_result'));
    const ticks = [...texts.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));
    expect(ticks).toEqual(Array.from({ length: TICKS }, (_, i) => i + 1));
    expect(texts).toContain('[exit code: 0]');
  });
});
