// Issue 32 through the built CLI, headless, against the fake Messages API that signs and checks
// thinking: the model's notes in stream-json (thinking blocks with their signatures, the API's
// stop_reason) and on stderr, a refusal's exit code and words, a call cut by the output limit
// never run, a cut answer printed whole.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, runCli, type CliRun } from './support/cli.js';
import { toolResults, type Msg } from './support/model.js';
import { STACK_TRACE } from './support/run.js';

let api: FakeMessagesApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  cleanupTemps();
});

async function headless(brain: FakeBrain, args: string[]): Promise<CliRun & { repo: string }> {
  api = await startFakeMessagesApi({ brain });
  const repo = gitRepo({ 'a.txt': 'alpha\n' });
  const r = await runCli(args, { cwd: repo, env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url } });
  return { ...r, repo };
}

const lines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
const messagesOf = (body: { messages?: unknown[] }) => (body.messages ?? []) as Msg[];

describe('thinking and stop reasons, headless', () => {
  it("stream-json carries the model's thinking blocks with their signatures and the API's stop_reason; every request passes the checks", async () => {
    const brain: FakeBrain = (body) =>
      toolResults(messagesOf(body)).size === 0
        ? { text: 'Reading a.txt first.', toolUse: { name: 'read_file', input: { path: 'a.txt' } } }
        : { text: 'It says alpha.', thinking: 'The file holds one word.' };
    const r = await headless(brain, ['-p', 'what is in a.txt?', '--output-format', 'stream-json']);
    expect(r.code, r.stderr).toBe(0);
    const assistant = lines(r.stdout).filter((l) => l.type === 'assistant') as Array<{ message: { content: Array<Record<string, unknown>>; stop_reason: string } }>;
    expect(assistant.map((a) => a.message.stop_reason)).toEqual(['tool_use', 'end_turn']);
    expect(assistant[0].message.content).toEqual([
      { type: 'thinking', thinking: 'Reading a.txt first.', signature: expect.stringMatching(/.{20}/) },
      expect.objectContaining({ type: 'tool_use', name: 'read_file' }),
    ]);
    expect(assistant[1].message.content).toEqual([
      { type: 'thinking', thinking: 'The file holds one word.', signature: expect.any(String) },
      { type: 'text', text: 'It says alpha.' },
    ]);
    expect(lines(r.stdout).at(-1)).toMatchObject({ type: 'result', result: 'It says alpha.', is_error: false });
    // The request after the call sent the reply back as it was given (the fake refuses anything else).
    expect(api!.requests.map((q) => q.status)).toEqual([200, 200]);
    expect(api!.requests[0].body.thinking).toEqual({ type: 'adaptive', display: 'summarized' });
  });

  it('text output: the notes go to stderr with --verbose, the answer alone to stdout', async () => {
    const brain: FakeBrain = (body) =>
      toolResults(messagesOf(body)).size === 0
        ? { text: 'Checking the file.', toolUse: { name: 'read_file', input: { path: 'a.txt' } } }
        : { text: 'alpha' };
    const r = await headless(brain, ['-p', 'read it', '--verbose']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('alpha\n');
    expect(r.stderr).toContain('✻ Checking the file.');
    // Without --verbose, stderr keeps what the user must see only.
    const quiet = await runCli(['-p', 'read it'], { cwd: gitRepo({ 'a.txt': 'alpha\n' }), env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api!.url } });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toBe('alpha\n');
    expect(quiet.stderr).toBe('');
  });

  it('a refusal ends the run with exit 1, its category and explanation, and no stack trace', async () => {
    const brain: FakeBrain = () => ({ text: 'I can’t help with that.', stopReason: 'refusal', stopDetails: { category: 'cyber', explanation: 'It asks for working malware.' } });
    const r = await headless(brain, ['-p', 'write malware', '--output-format', 'stream-json']);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    const out = lines(r.stdout);
    expect(out.find((l) => l.type === 'assistant')).toMatchObject({ message: { stop_reason: 'refusal' } });
    expect(out.find((l) => l.type === 'error')).toMatchObject({ kind: 'refusal', message: expect.stringContaining('It asks for working malware.') });
    expect(out.at(-1)).toMatchObject({ type: 'result', is_error: true, exit_code: 1 });
    expect(api!.requests).toHaveLength(1);
  });

  it('a call cut by the output limit never runs; the model is told to split it, and its next try is applied', async () => {
    let told: { text: string; isError: boolean } | undefined;
    const brain: FakeBrain = (body) => {
      const results = [...toolResults(messagesOf(body)).values()];
      if (results.length === 0) {
        // Cut mid-arguments: the whole file would have been far longer than what fits.
        return { content: [{ type: 'tool_use', name: 'create_file', input: { path: 'big.txt', content: 'x'.repeat(4000) } }], cutAtOutputTokens: 100 };
      }
      if (results.length === 1) {
        told = results[0];
        return { text: 'Writing it in parts.', toolUse: { name: 'create_file', input: { path: 'big.txt', content: 'part one\n' } } };
      }
      return { text: 'Done.' };
    };
    const r = await headless(brain, ['-p', 'write big.txt', '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(told).toMatchObject({ isError: true, text: expect.stringContaining('output limit') });
    expect(told?.text).toContain('split');
    expect(readFileSync(join(r.repo, 'big.txt'), 'utf8')).toBe('part one\n');
    expect(api!.requests.map((q) => q.status)).toEqual([200, 200, 200]);
  });

  it('an answer cut by the output limit is continued and printed whole, once', async () => {
    const brain: FakeBrain = (body) =>
      JSON.stringify(messagesOf(body).at(-1)).includes('Continue exactly') ? { text: 'second half.' } : { text: 'First half, ', stopReason: 'max_tokens' };
    const r = await headless(brain, ['-p', 'explain', '--output-format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ result: 'First half, second half.', status: 'success' });
    expect(existsSync(join(r.repo, '.infinity', 'state.db'))).toBe(true);
  });
});
