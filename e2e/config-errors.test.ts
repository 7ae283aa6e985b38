// Issue 17: errors that say what to do, from the built CLI run headless (`-p ... --yes`).
// - A model API that can't be reached (a closed loopback port, a host name under .invalid, TLS
//   spoken to a plain HTTP server) and a rejected key each end the run with one message, naming
//   what to check, and exit code 3 (configuration or authentication). No wall-clock assertion: the
//   30 s test timeout bounds the run, and the measured seconds are printed (benches own timing).
// - git missing, no repository, and a repository git can't read are three different messages.
// - --help lists the environment variables, the files and the exit codes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, closedLoopbackUrl, gitRepo, runCli, tempDir, type CliRun } from './support/cli.js';
import { STACK_TRACE } from './support/run.js';

let api: FakeMessagesApi;
beforeAll(async () => {
  // Answers every request with 401, as the real API does for a wrong key.
  api = await startFakeMessagesApi({ brain: () => ({ status: 401 }) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});


/** Runs a task against `baseURL`, printing how long the CLI took to give up. */
async function headless(label: string, baseURL: string, extra: string[] = []): Promise<CliRun> {
  const started = performance.now();
  const r = await runCli(['-p', 'hello', '--yes', ...extra], {
    cwd: gitRepo({ 'a.txt': 'a\n' }),
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: baseURL },
  });
  console.log(`config-errors: ${label}: exit ${r.code} after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return r;
}

/** The lines of stderr that say `pattern`: the message must be there exactly once. */
function linesWith(stderr: string, pattern: RegExp): string[] {
  return stderr.split('\n').filter((l) => pattern.test(l));
}

describe('a model API that cannot be reached: one message naming ANTHROPIC_BASE_URL and its value, exit 3', () => {
  it('a closed loopback port (connection refused)', async () => {
    const url = await closedLoopbackUrl();
    const r = await headless('closed port', url);
    expect(r.code, r.stderr).toBe(3);
    expect(linesWith(r.stderr, /Could not connect/)).toEqual([
      `Error: Could not connect to the model API at ${url}: the connection was refused: nothing is listening at that address ` +
        `(ECONNREFUSED). ANTHROPIC_BASE_URL is set to ${url}: check the address and that the server is running there, or ` +
        'unset ANTHROPIC_BASE_URL to use the Anthropic API.',
    ]);
    // The quick retries are not reported one by one, and nothing else is called an error.
    expect(r.stderr).not.toMatch(/Retrying/);
    expect(linesWith(r.stderr, /Error|error/)).toHaveLength(1);
    expect(r.stderr).not.toMatch(STACK_TRACE);
  }, 30_000);

  it('a host name that never resolves (under .invalid)', async () => {
    const url = 'http://model-api.invalid';
    const r = await headless('unresolvable host', url);
    expect(r.code, r.stderr).toBe(3);
    const lines = linesWith(r.stderr, /Could not connect/);
    expect(lines).toHaveLength(1);
    // A resolver that answers says ENOTFOUND; one that can't be asked, EAI_AGAIN.
    expect(lines[0]).toMatch(/the host name model-api\.invalid (does not resolve \(ENOTFOUND\)|could not be looked up)/);
    expect(lines[0]).toContain(`ANTHROPIC_BASE_URL is set to ${url}`);
    expect(r.stderr).not.toMatch(/Retrying|bad port|fetch failed/);
    expect(r.stderr).not.toMatch(STACK_TRACE);
  }, 30_000);

  it('a TLS failure (https:// to a server that speaks plain HTTP)', async () => {
    const url = api.url.replace(/^http:/, 'https:');
    const before = api.requests.length;
    const r = await headless('TLS failure', url);
    expect(r.code, r.stderr).toBe(3);
    const lines = linesWith(r.stderr, /Could not connect/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`Could not connect to the model API at ${url}: the TLS handshake failed: the server there does not speak TLS (`);
    expect(lines[0]).toContain('so the address may be an http:// one.');
    expect(lines[0]).toContain(`ANTHROPIC_BASE_URL is set to ${url}`);
    expect(api.requests.length).toBe(before);
    expect(r.stderr).not.toMatch(STACK_TRACE);
  }, 30_000);

  it('the json result says config_error, with the one error', async () => {
    const r = await headless('closed port, json', await closedLoopbackUrl(), ['--output-format', 'json']);
    expect(r.code, r.stderr).toBe(3);
    const result = JSON.parse(r.stdout) as { status: string; exit_code: number; errors: string[]; error_details: Array<{ kind: string; message: string }> };
    expect(result).toMatchObject({ status: 'config_error', exit_code: 3 });
    expect(result.errors).toEqual([expect.stringMatching(/^Could not connect to the model API at /)]);
    expect(result.error_details).toEqual([{ kind: 'unreachable', message: result.errors[0] }]);
  }, 30_000);

  it('an address that is no URL at all is refused before anything starts', async () => {
    const r = await headless('no URL', 'localhost:8080');
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toBe(
      'infinity-code: ANTHROPIC_BASE_URL is set to "localhost:8080", which is not an http:// or https:// address. Set it to the ' +
        'address of the Messages API you use (like https://api.anthropic.com or http://127.0.0.1:8080), or unset it to use the ' +
        'Anthropic API.\n',
    );
  }, 30_000);
});

describe('a rejected API key', () => {
  it('401 from the Messages API: one message pointing at ANTHROPIC_API_KEY, exit 3, no retries', async () => {
    const before = api.requests.length;
    const r = await headless('401', api.url);
    expect(r.code, r.stderr).toBe(3);
    expect(linesWith(r.stderr, /rejected the credentials/)).toEqual([
      'Error: The model API rejected the credentials (401: fake authentication_error); check ANTHROPIC_API_KEY.',
    ]);
    expect(linesWith(r.stderr, /Error|error/)).toHaveLength(1);
    expect(api.requests.length - before).toBe(1);
    expect(r.stderr).not.toMatch(STACK_TRACE);
  }, 30_000);
});

describe('git missing, a folder that is no project and git failing are three problems with three messages', () => {
  const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });

  it('git not on PATH (in a repository): says to install git, exit 3', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    // The CLI starts from node's absolute path; its PATH holds only an empty directory.
    const r = await runCli(['-p', 'hello', '--yes'], { cwd: repo, env: { ...env(), PATH: tempDir() } });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^infinity-code: git is not installed, or not on your PATH\. .*Install git .*and run again\.\n$/);
    expect(r.stderr).not.toMatch(/not inside a git repository/);
  }, 30_000);

  it('git not on PATH (in a folder without a repository, which needs it as much): says to install git, exit 3', async () => {
    const r = await runCli(['-p', 'hello', '--yes'], { cwd: tempDir(), env: { ...env(), PATH: tempDir() } });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^infinity-code: git is not installed, or not on your PATH\. .*Install git .*and run again\.\n$/);
  }, 30_000);

  it('the home directory, in no repository: says to cd into a project folder, exit 2', async () => {
    const home = tempDir();
    const r = await runCli(['-p', 'hello', '--yes'], { cwd: home, home, env: env() });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^infinity-code: ${home} is your home directory, not a project folder: cd into a project folder`));
  }, 30_000);

  it("a repository git can't read (a corrupt .git/HEAD): quotes git and says how to look, exit 1", async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    writeFileSync(join(repo, '.git', 'HEAD'), 'this is not a ref\n');
    const r = await runCli(['-p', 'hello', '--yes'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(
      `infinity-code: git cannot read the repository in ${repo} (git says: fatal: not a git repository (or any of the parent ` +
        `directories): .git). Its ${repo}/.git may be damaged (a broken .git/HEAD is a common cause): run \`git status\` in ` +
        `${repo} to see what is wrong, repair it, and run again.\n`,
    );
  }, 30_000);
});

describe('--help', () => {
  it('lists the environment variables, the files and the exit codes', async () => {
    const r = await runCli(['--help'], { cwd: tempDir() });
    expect(r.code, r.stderr).toBe(0);
    const section = (title: string) => {
      const start = r.stdout.indexOf(`\n${title}:\n`);
      expect(start, `a "${title}:" section`).toBeGreaterThan(0);
      const end = r.stdout.indexOf('\n\n', start + 1);
      return r.stdout.slice(start, end === -1 ? undefined : end);
    };
    const env = section('Environment');
    for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_MODEL', 'ANTHROPIC_BASE_URL', 'NODE_EXTRA_CA_CERTS', 'XDG_CONFIG_HOME', 'XDG_STATE_HOME', 'INFINITY_CODE_RETRY']) {
      expect(env).toMatch(new RegExp(`\\n  ${name} +\\S`));
    }
    const files = section('Files');
    for (const file of ['~/.config/infinity-code/config.json', '.infinity/config.json', '.infinity/state.db', 'AGENTS.md']) {
      expect(files).toContain(file);
    }
    const codes = section('Exit codes');
    for (const [code, meaning] of [
      ['0', 'done'],
      ['1', 'failed'],
      ['2', 'usage error'],
      ['3', 'configuration or authentication error'],
      ['4', 'changes left unapplied'],
      ['5', 'a limit was reached'],
      ['130', 'interrupted'],
    ] as const) {
      expect(codes).toMatch(new RegExp(`\\n  ${code} +${meaning}`));
    }
    // A terminal's width: commander's own part wraps at 80 columns, ours does too.
    for (const line of r.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });
});
