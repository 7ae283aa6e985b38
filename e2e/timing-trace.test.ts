// INFINITY_CODE_TRACE: where a run's time goes, one `[timing]` line per step, from the built CLI.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { demoBrain, DEMO_FILES, DEMO_TASK } from 'infinity-code/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, fakeBrain, gitRepo, runCli, tempDir } from './support/cli.js';

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: fakeBrain(demoBrain) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

const env = (extra: Record<string, string> = {}) => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, DEMO_TEST_STEPS: '1', ...extra });

interface Step {
  at: number;
  what: string;
  ms: number | undefined;
  detail: string;
}

function steps(text: string): Step[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('[timing] '))
    .map((l) => {
      const m = /^\[timing\] (\d+\.\d) (\S+)(?: (\d+\.\d)ms)?(?: (.*))?$/.exec(l);
      if (!m) throw new Error(`not a timing line: ${l}`);
      return { at: Number(m[1]), what: m[2], ms: m[3] === undefined ? undefined : Number(m[3]), detail: m[4] ?? '' };
    });
}

describe('INFINITY_CODE_TRACE', () => {
  it('=1: a headless run prints each step on stderr, in the order they happened, with how long each took', async () => {
    const repo = gitRepo(DEMO_FILES);
    const r = await runCli(['-p', DEMO_TASK, '--yes'], { cwd: repo, env: env({ INFINITY_CODE_TRACE: '1' }) });
    expect(r.code, r.stderr).toBe(0);
    const trace = steps(r.stderr);
    const kinds = trace.map((s) => s.what);
    for (const k of ['model-request', 'model-reply', 'session-open', 'git', 'sandbox-mount', 'command', 'diff', 'quiescent', 'root-diff', 'apply', 'close']) {
      expect(kinds, k).toContain(k);
    }
    // Lines come as the steps end: their clocks only go forward, and a step ends after it began.
    for (let i = 1; i < trace.length; i++) expect(trace[i].at).toBeGreaterThanOrEqual(trace[i - 1].at);
    for (const s of trace) if (s.ms !== undefined) expect(s.ms).toBeLessThanOrEqual(s.at);
    // The first request precedes the first reply; the run ends after the last reply: its diff,
    // the apply, then the teardown.
    expect(kinds.indexOf('model-request')).toBeLessThan(kinds.indexOf('model-reply'));
    expect(kinds.indexOf('quiescent')).toBeGreaterThan(kinds.lastIndexOf('model-reply'));
    expect(kinds.lastIndexOf('root-diff')).toBeGreaterThan(kinds.indexOf('quiescent'));
    expect(kinds.indexOf('apply')).toBeGreaterThan(kinds.lastIndexOf('root-diff'));
    expect(kinds.at(-1)).toBe('close');
    expect(trace.find((s) => s.what === 'apply')?.detail).toBe('2 files');
    expect(trace.find((s) => s.what === 'command')?.detail).toBe('node test.js');
    expect(trace.find((s) => s.what === 'git' && s.detail.startsWith('snapshot'))).toBeDefined();
  });

  it('a file name: the lines go there, stderr has none; unset: no line anywhere', async () => {
    const file = join(tempDir(), 'timing.log');
    const traced = await runCli(['-p', DEMO_TASK, '--yes'], { cwd: gitRepo(DEMO_FILES), env: env({ INFINITY_CODE_TRACE: file }) });
    expect(traced.code, traced.stderr).toBe(0);
    expect(traced.stderr).not.toContain('[timing]');
    expect(steps(readFileSync(file, 'utf8')).map((s) => s.what)).toEqual(expect.arrayContaining(['model-request', 'root-diff', 'apply', 'close']));

    const plain = await runCli(['-p', DEMO_TASK, '--yes'], { cwd: gitRepo(DEMO_FILES), env: env() });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toContain('[timing]');
  });

  it('a file that cannot be written: exit 3 with what to do, before anything runs', async () => {
    const repo = gitRepo(DEMO_FILES);
    const before = api.requests.length;
    const r = await runCli(['-p', DEMO_TASK, '--yes'], { cwd: repo, env: env({ INFINITY_CODE_TRACE: join(tempDir(), 'missing', 'timing.log') }) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('INFINITY_CODE_TRACE names');
    expect(r.stderr).toContain('set it to 1 for stderr, or to a writable file');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(api.requests.length).toBe(before);
  });
});
