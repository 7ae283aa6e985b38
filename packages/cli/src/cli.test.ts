import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startFakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = resolve(here, '../../..');
const main = join(here, 'main.ts');
// Absolute, because the CLI runs with its cwd in temp repositories that have no node_modules.
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const env = { ...process.env, ...opts.env };
  // The developer's own settings must not leak in: credentials, and the model they chose.
  for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_MODEL']) if (!opts.env?.[name]) delete env[name];
  return new Promise((res) => {
    execFile(
      process.execPath,
      ['--conditions=@infinity-code/source', '--import', tsx, main, ...args],
      { cwd: opts.cwd ?? repoRoot, env, timeout: 60_000 },
      (err, stdout, stderr) => {
        res({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

function gitRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ic-cli-'));
  dirs.push(dir);
  execFileSync('git', ['init', '-q', dir]);
  return dir;
}

describe('infinity-code command line', () => {
  it('--demo runs the whole flow in a throwaway repository with no API key', async () => {
    const r = await cli(['--demo'], { env: { DEMO_TEST_STEPS: '2' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Demo repository: \S+/);
    expect(r.stderr).toMatch(/Applied changes to 2 file\(s\) in the working tree:\n {2}\S+\n {2}\S+\n/);
    expect(r.stderr).toContain('return `Hello, ${name}!`;');
    expect(r.stdout).toContain('Done.');
  });

  it('a headless task without an API key is a config error with a clear message', async () => {
    const r = await cli(['-p', 'hello']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set/);
    expect(r.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });

  it('an unknown flag is a usage error', async () => {
    const r = await cli(['--no-such-flag']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option/);
  });

  it('--timeout and --network take only valid values (usage error otherwise); --help explains them', async () => {
    const [unit, zero, network, help] = await Promise.all([
      cli(['-p', 'x', '--timeout', '5x']),
      cli(['-p', 'x', '--timeout', '0']),
      cli(['-p', 'x', '--network', 'https://example.com']),
      cli(['--help']),
    ]);
    for (const r of [unit, zero]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/--timeout <duration>.*must be a duration like 90s, 5m, 1h, or a number of seconds/);
    }
    expect(network.code, network.stderr).toBe(2);
    expect(network.stderr).toMatch(/--network: "https:\/\/example.com" is a URL; give the domain alone/);
    expect(network.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--timeout <duration>[\s\S]*exit code 5/);
    expect(help.stdout).toContain('--network <mode>');
    expect(help.stdout).toContain('--unsandboxed');
  });

  it('--effort takes a level (usage error otherwise); --help names the default model, the aliases and the model variables', async () => {
    const [bad, help] = await Promise.all([cli(['-p', 'x', '--effort', 'turbo']), cli(['--help'])]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(/--effort <level>.*Allowed choices are low, medium, high, xhigh, max/);
    expect(help.code).toBe(0);
    // Words as commander wraps them, joined again.
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toContain(`--model <id> model id or alias (opus, sonnet, haiku, fable); default: ANTHROPIC_MODEL, else the config's "model", else claude-sonnet-5-5`);
    expect(text).toContain('--effort <level> how hard the model works');
    expect(text).toContain('ANTHROPIC_AUTH_TOKEN a bearer token');
    expect(text).toContain(`ANTHROPIC_MODEL the model (an id or alias) when --model is not given; wins over the config's "model"`);
  });

  it('-p streams the answer from the Messages API to stdout and stores the session', async () => {
    const api = await startFakeMessagesApi({ brain: () => ({ text: 'Hello from the fake model.', chunks: 4 }) });
    try {
      const dir = gitRepo();
      const r = await cli(['-p', 'say hello', '--model', 'claude-test'], {
        cwd: dir,
        env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('Hello from the fake model.\n');
      expect(api.requests[0].body.model).toBe('claude-test');
      expect(existsSync(join(dir, '.infinity', 'state.db'))).toBe(true);
    } finally {
      await api.close();
    }
  });

  it('a rejected API key exits 3 and says what to check', async () => {
    const api = await startFakeMessagesApi({ brain: () => ({ status: 401 }) });
    try {
      const r = await cli(['-p', 'hello'], {
        cwd: gitRepo(),
        env: { ANTHROPIC_API_KEY: 'bad-key', ANTHROPIC_BASE_URL: api.url },
      });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/ANTHROPIC_API_KEY/);
    } finally {
      await api.close();
    }
  });
});
