// Issue 13 ("the sandbox must contain the agent"), the parts a headless run shows: credentials in
// the CLI's environment never reach commands (so never the model) unless the user lets one
// through by name; a command that never exits is stopped at its time limit; --timeout stops a
// whole run with exit code 5 and keeps its work for -c; where the sandbox can't confine
// commands they are refused without --unsandboxed; bad settings are config or usage errors.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeScript } from '@infinity-code/runtime/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { allText, toolCalls, type Msg } from './support/model.js';
import { killAll, runMark, survivors, untilGone, type ProcInfo } from './support/procs.js';
import { events, run, STACK_TRACE } from './support/run.js';

const apis: FakeMessagesApi[] = [];
const leftovers: ProcInfo[] = [];
afterEach(() => killAll(leftovers.splice(0)));
afterAll(async () => {
  await Promise.all(apis.map((a) => a.close()));
  cleanupTemps();
});

async function fakeApi(brain: (messages: Msg[]) => FakeScript): Promise<FakeMessagesApi> {
  const api = await startFakeMessagesApi({ brain: (body) => brain((body.messages ?? []) as Msg[]) });
  apis.push(api);
  return api;
}

const call = (name: string, input: Record<string, unknown>): FakeScript => ({ toolUse: { name, input } });

/** A model that runs `commands` in turn (each after the previous answered), then says "Done.". */
const commandsBrain = (commands: string[]) => (messages: Msg[]) => {
  const done = toolCalls(messages).filter((c) => c.name === 'execute_command').length;
  return done < commands.length ? call('execute_command', { command: commands[done] }) : { text: 'Done.' };
};

/** A home whose user config holds `config`. */
function homeWith(config: Record<string, unknown>): string {
  const home = tempDir();
  mkdirSync(join(home, '.config', 'infinity-code'), { recursive: true });
  writeFileSync(join(home, '.config', 'infinity-code', 'config.json'), JSON.stringify(config));
  return home;
}

const bodies = (api: FakeMessagesApi) => api.requests.map((r) => JSON.stringify(r.body)).join('\n');
const unique = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

describe('sandbox settings of a headless run', () => {
  it('credentials in the environment reach no command and no request body; an allowed variable does', async () => {
    const secrets = {
      GITHUB_TOKEN: unique('ghtoken'),
      AWS_SECRET_ACCESS_KEY: unique('awssecret'),
      MY_SERVICE_PASSWORD: unique('password'),
      NPM_TOKEN: unique('npmtoken'),
      ANTHROPIC_API_KEY: unique('sk-ant-e2e'),
    };
    const allowed = unique('allowed');
    const api = await fakeApi(
      commandsBrain([
        'env; echo ENV-DONE',
        "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; echo PROC-DONE",
        'ps eww 2>&1; echo PS-DONE',
      ]),
    );
    const mark = runMark();
    const r = await run(['-p', 'Show me the environment.', '--output-format', 'stream-json'], {
      cwd: gitRepo({ 'a.txt': 'a\n' }),
      home: homeWith({ sandbox: { envAllow: ['IC_E2E_ALLOWED_TOKEN'] } }),
      env: { ...secrets, IC_E2E_ALLOWED_TOKEN: allowed, ANTHROPIC_BASE_URL: api.url, ...mark.env },
    });
    leftovers.push(...(await untilGone(() => survivors(mark))));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    const sent = bodies(api);
    // The commands ran and their output reached the model (else the absence below proves nothing).
    for (const done of ['ENV-DONE', 'PROC-DONE', 'PS-DONE']) expect(sent).toContain(done);
    expect(sent).toMatch(/PATH=/);
    expect(sent).toContain(`IC_E2E_ALLOWED_TOKEN=${allowed}`);
    for (const [name, value] of Object.entries(secrets)) {
      expect.soft(sent, `${name} reached the model`).not.toContain(value);
      expect.soft(r.stdout, `${name} in the CLI's output`).not.toContain(value);
    }
    // The key is where it belongs: in the headers of the requests.
    expect(JSON.stringify(api.requests.map((q) => q.headers))).toContain(secrets.ANTHROPIC_API_KEY);
  });

  it('a command that never exits is stopped at sandbox.commandTimeoutMs, and the model is told how to raise it', async () => {
    const api = await fakeApi((messages) => {
      const calls = toolCalls(messages);
      if (calls.length === 0) return call('execute_command', { command: 'echo started; sleep 300' });
      // Waiting for the command's final event: it comes when the limit stops it.
      return { text: allText(messages).includes('at the time limit') ? 'Done.' : 'Waiting for it.' };
    });
    const mark = runMark();
    const r = await run(['-p', 'Run a server.', '--output-format', 'stream-json'], {
      cwd: gitRepo({ 'a.txt': 'a\n' }, { commandTimeoutMs: 300 }),
      home: homeWith({ sandbox: { commandTimeoutMs: 1500 } }),
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, ...mark.env },
    });
    const left = await untilGone(() => survivors(mark));
    leftovers.push(...left);
    expect(r.code, r.stderr).toBe(0);
    const final = events(r.stdout).find((e) => e.type === 'event' && JSON.stringify(e.content).includes('time limit'));
    expect(JSON.stringify(final?.content)).toMatch(/\[stopped after 1\.5 s, at the time limit for a command\. .*\\"commandTimeoutMs\\"/);
    expect(events(r.stdout).at(-1)).toMatchObject({ type: 'result', status: 'success', result: 'Done.' });
    expect(left, 'processes that outlived the run').toEqual([]);
  });

  it('--timeout stops the whole run: exit 5, a result saying so, nothing applied or left running, and -c finishes it', async () => {
    const api = await fakeApi((messages) => {
      const calls = toolCalls(messages);
      const text = allText(messages);
      if (text.includes('please finish')) return { text: 'Finished.' };
      if (calls.length === 0) return call('create_file', { path: 'made.txt', content: 'made before the deadline\n' });
      if (calls.length === 1) return call('execute_command', { command: 'echo waiting; sleep 300' });
      return { text: 'Waiting for the command.' };
    });
    const repo = gitRepo({ 'a.txt': 'a\n' }, { commandTimeoutMs: 300 });
    const home = tempDir();
    const mark = runMark();
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, ...mark.env };
    const started = Date.now();
    const r = await run(['-p', 'Make a file, then wait.', '--yes', '--timeout', '3s', '--output-format', 'json'], { cwd: repo, home, env });
    const left = await untilGone(() => survivors(mark));
    leftovers.push(...left);
    expect(r.code, r.stderr).toBe(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    const result = JSON.parse(r.stdout) as { status: string; errors: string[]; diff_applied: boolean; patch_file: string; files_changed: string[] };
    expect(result).toMatchObject({ status: 'limit', diff_applied: false, files_changed: ['made.txt'] });
    expect(result.errors.join('\n')).toMatch(/reached its time limit \(--timeout 3s\) and was stopped/);
    // Unfinished work is never applied, even with --yes; it is saved like an interrupt saves it.
    expect(existsSync(join(repo, 'made.txt'))).toBe(false);
    expect(readFileSync(join(repo, result.patch_file), 'utf8')).toContain('+made before the deadline');
    expect(left, 'processes that outlived the timeout').toEqual([]);

    const resumed = await run(['-c', '-p', 'please finish', '--yes', '--output-format', 'json'], { cwd: repo, home, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'success', result: 'Finished.', diff_applied: true });
    expect(readFileSync(join(repo, 'made.txt'), 'utf8')).toBe('made before the deadline\n');
  });

  it('without --unsandboxed, commands are refused where the sandbox cannot confine them: the model and the user are told', async () => {
    const api = await fakeApi(commandsBrain(['echo ran > ran.txt; echo RAN']));
    const r = await run(['-p', 'Run it.', '--output-format', 'stream-json'], {
      cwd: gitRepo({ 'a.txt': 'a\n' }),
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url },
    });
    const lines = events(r.stdout);
    const result = lines.at(-1);
    if (lines[0]?.contained === true) {
      // This machine confines commands: nothing to refuse.
      expect(result).toMatchObject({ status: 'unapplied', files_changed: ['ran.txt'] });
      return;
    }
    expect(lines[0]).toMatchObject({ type: 'system', subtype: 'init', contained: false });
    expect(r.code, r.stderr).toBe(0);
    expect(result).toMatchObject({ status: 'success', result: 'Done.', files_changed: [] });
    expect(bodies(api)).toContain('commands cannot run here');
    expect(bodies(api)).toContain('--unsandboxed');
    expect(bodies(api)).not.toContain('[exit code');
    expect(r.stderr.match(/Run with --unsandboxed to let them run anyway/g)).toHaveLength(1);
  });

  it.each([
    [{ sandbox: { network: 'sometimes' } }, /"sandbox.network" must be "off", "on" or a list of domains/],
    [{ sandbox: { envAllow: ['ANTHROPIC_API_KEY'] } }, /the agent's own credential/],
    [{ sandbox: { limits: { memoryMB: -1 } } }, /"sandbox.limits.memoryMB" must be a whole number/],
  ])('a bad sandbox setting in the user config is a config error (exit 3): %j', async (config, message) => {
    const home = homeWith(config);
    const r = await run(['-p', 'hello'], { cwd: gitRepo({ 'a.txt': 'a\n' }), home, env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain(join(home, '.config', 'infinity-code', 'config.json'));
    expect(r.stderr).not.toMatch(STACK_TRACE);
  });

  it("a repository's config may not open the network: exit 3 naming the file and the user's own config", async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' }, { sandbox: { network: 'on' } });
    const r = await run(['-p', 'hello'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' } });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/"sandbox.network" widens what the agent's commands may reach/);
    expect(r.stderr).toContain(join(repo, '.infinity', 'config.json'));
  });

  it('bad --timeout and --network values are usage errors (exit 2)', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const env = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
    const [timeout, network] = await Promise.all([
      run(['-p', 'hello', '--timeout', 'soon'], { cwd: repo, env }),
      run(['-p', 'hello', '--network', 'example.com/path'], { cwd: repo, env }),
    ]);
    expect(timeout.code, timeout.stderr).toBe(2);
    expect(timeout.stderr).toMatch(/must be a duration like 90s, 5m, 1h/);
    expect(network.code, network.stderr).toBe(2);
    expect(network.stderr).toMatch(/--network: "example.com\/path" is a URL/);
  });
});
