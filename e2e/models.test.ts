// Issue 32, the model table in the CLI, through the built CLI run headless against the fake
// Messages API: which model requests carry (--model, ANTHROPIC_MODEL, the config, aliases), a
// retired model refused before any request, --effort reaching the request, and a bearer token
// (ANTHROPIC_AUTH_TOKEN) in place of an API key.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type RecordedRequest } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, runCli, tempDir, type CliRun } from './support/cli.js';
import { STACK_TRACE } from './support/run.js';

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: () => ({ text: 'Hello.' }) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

/**
 * Runs `-p hello` (json output) with `env` (an API key unless it says otherwise) and returns the
 * run with the requests the fake received from it. Runs one at a time: requests are told apart
 * by when they came.
 */
async function headless(args: string[], env: Record<string, string> = {}, home?: string): Promise<CliRun & { requests: RecordedRequest[] }> {
  const before = api.requests.length;
  const r = await runCli(['-p', 'hello', '--output-format', 'json', ...args], {
    cwd: gitRepo({ 'a.txt': 'a\n' }),
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, ...env },
    ...(home ? { home } : {}),
  });
  return { ...r, requests: api.requests.slice(before) };
}

/** A home whose user config holds `config`. */
function homeWith(config: object): string {
  const home = tempDir();
  mkdirSync(join(home, '.config', 'infinity-code'), { recursive: true });
  writeFileSync(join(home, '.config', 'infinity-code', 'config.json'), JSON.stringify(config));
  return home;
}

describe('the model requests carry', () => {
  it('is the default, a current Sonnet, when nothing names one', async () => {
    const r = await headless([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.requests.map((q) => q.body.model)).toEqual(['claude-sonnet-5-5']);
    expect(JSON.parse(r.stdout)).toMatchObject({ model: 'claude-sonnet-5-5', status: 'success' });
  });

  it('ANTHROPIC_MODEL=opus: the alias becomes claude-opus-5-5, over the config; --model wins over both', async () => {
    const home = homeWith({ model: 'fable' });
    const fromEnv = await headless([], { ANTHROPIC_MODEL: 'opus' }, home);
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.requests.map((q) => q.body.model)).toEqual(['claude-opus-5-5']);
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ model: 'claude-opus-5-5' });

    const fromConfig = await headless([], {}, home);
    expect(fromConfig.requests.map((q) => q.body.model)).toEqual(['claude-fable-5-2']);

    const fromFlag = await headless(['--model', 'haiku'], { ANTHROPIC_MODEL: 'opus' }, home);
    expect(fromFlag.requests.map((q) => q.body.model)).toEqual(['claude-haiku-5-5']);
  });
});

describe('a retired model is refused before any request (exit 3)', () => {
  it.each([
    ['--model', ['--model', 'claude-sonnet-4-5'], {}, /^infinity-code: --model claude-sonnet-4-5 names Claude Sonnet 4\.5, retired on 2026-11-30: .*run with --model claude-sonnet-5-5 \(or --model sonnet\)\.$/m],
    ['ANTHROPIC_MODEL', [], { ANTHROPIC_MODEL: 'claude-opus-4-20250514' }, /^infinity-code: ANTHROPIC_MODEL=claude-opus-4-20250514 names Claude Opus 4, retired on 2026-06-15: .*export ANTHROPIC_MODEL=claude-opus-5-5 \(or opus\)/m],
  ])('named by %s', async (_label, args, env, message) => {
    const r = await headless(args, env);
    expect(r.code, r.stderr).toBe(3);
    expect(r.requests).toEqual([]);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    // Refused before the run began: the result (json prints one on every exit path) says why, and nothing ran.
    expect(JSON.parse(r.stdout)).toMatchObject({ is_error: true, status: 'config_error', exit_code: 3, num_turns: 0, result: expect.stringMatching(/retired on/) });
  });

  it("named by the config: the message names the file", async () => {
    const home = homeWith({ model: 'claude-sonnet-4-5-20250929' });
    const r = await headless([], {}, home);
    expect(r.code, r.stderr).toBe(3);
    expect(r.requests).toEqual([]);
    expect(r.stderr).toContain(`In ${join(home, '.config', 'infinity-code', 'config.json')}, "model": "claude-sonnet-4-5-20250929" names Claude Sonnet 4.5, retired on 2026-11-30`);
    expect(r.stderr).not.toMatch(STACK_TRACE);
  });
});

describe('--effort', () => {
  it('low reaches the request as output_config.effort; unset, none is sent', async () => {
    const low = await headless(['--effort', 'low']);
    expect(low.code, low.stderr).toBe(0);
    expect(low.requests.map((q) => (q.body.output_config as { effort?: string } | undefined)?.effort)).toEqual(['low']);

    const unset = await headless([]);
    expect(unset.code, unset.stderr).toBe(0);
    expect(unset.requests.map((q) => (q.body.output_config as { effort?: string } | undefined)?.effort)).toEqual([undefined]);
  });

  it('a level the model does not accept is a usage error (exit 2) naming what it accepts; no request is sent', async () => {
    const r = await headless(['--effort', 'high', '--model', 'claude-opus-4-8']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.requests).toEqual([]);
    expect(r.stderr).toContain('infinity-code: --effort high: claude-opus-4-8 does not accept effort high: it accepts no effort level.');
    const unknown = await headless(['--effort', 'turbo']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Allowed choices are low, medium, high, xhigh, max/);
  });
});

describe('ANTHROPIC_AUTH_TOKEN', () => {
  it('alone reaches the API as a bearer token, and no API key is sent', async () => {
    const before = api.requests.length;
    const r = await runCli(['-p', 'hello', '--output-format', 'json'], {
      cwd: gitRepo({ 'a.txt': 'a\n' }),
      env: { ANTHROPIC_AUTH_TOKEN: 'gateway-token', ANTHROPIC_BASE_URL: api.url },
    });
    expect(r.code, r.stderr).toBe(0);
    const requests = api.requests.slice(before);
    expect(requests).toHaveLength(1);
    expect(requests[0].headers.authorization).toBe('Bearer gateway-token');
    expect(requests[0].headers).not.toHaveProperty('x-api-key');
  });
});
