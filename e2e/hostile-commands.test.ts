// Issue 7, scenario 4: hostile commands. One daemonises (setsid, nohup double fork), one ignores
// SIGTERM, one writes to the repository's absolute path, one hunts for ANTHROPIC_API_KEY: no
// process survives the session or a cancel (model's cancel_subscription, user's Ctrl+C), the
// user's tree is unchanged, and the key never reaches the command (so never the model either).
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody, type FakeScript } from '@infinity-code/runtime/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTemps, git, gitRepo, tempDir } from './support/cli.js';
import { lastResult, toolCalls, type Msg } from './support/model.js';
import { killAll, processesMatching, runMark, survivors, untilGone, type ProcInfo } from './support/procs.js';
import { events, run, start, STACK_TRACE } from './support/run.js';
import { seeded, testSeed } from './support/seeded.js';
import { treeFingerprint } from './support/tree.js';

const SEED = testSeed(4404);
const rng = seeded(SEED);
/** Unique sleep durations name this run's processes in /proc (GNU sleep takes fractions). */
const tag = () => `${1000 + rng.int(9000)}.${String(rng.int(1e6)).padStart(6, '0')}`;
const FILES = { 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'src/keep.js': 'export const keep = 1;\n' };

/** A session whose model runs `commands` one after the other, then answers "Done."; their results. */
async function runCommands(repo: string, commands: string[], extraEnv: Record<string, string> = {}) {
  const results: string[] = [];
  const api = await fakeApi((messages) => {
    const done = toolCalls(messages).filter((c) => c.name === 'execute_command').length;
    if (done > 0) results[done - 1] = lastResult(messages)?.text ?? '';
    return done < commands.length ? call('execute_command', { command: commands[done] }) : { text: 'Done.' };
  });
  const mark = runMark();
  const r = await run(['-p', 'Run the commands.', '--output-format', 'stream-json'], {
    cwd: repo,
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, ...extraEnv, ...mark.env },
  });
  const left = await untilGone(() => survivors(mark));
  leftovers.push(...left);
  const lines = events(r.stdout);
  return { r, api, results, left, backend: String(lines[0]?.sandbox), result: lines.at(-1) };
}

/** gitRepo() at a chosen path. */
function repoAt(dir: string, files: Record<string, string>, config: Record<string, unknown>): string {
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'initial');
  mkdirSync(join(dir, '.infinity'));
  writeFileSync(join(dir, '.infinity', 'config.json'), JSON.stringify(config));
  return dir;
}

const apis: FakeMessagesApi[] = [];
const leftovers: ProcInfo[] = [];
afterEach(() => killAll(leftovers.splice(0)));
afterAll(async () => {
  await Promise.all(apis.map((a) => a.close()));
  cleanupTemps();
});

async function fakeApi(brain: (messages: Msg[], body: FakeRequestBody) => FakeScript | Promise<FakeScript>): Promise<FakeMessagesApi> {
  const api = await startFakeMessagesApi({ brain: (body) => brain((body.messages ?? []) as Msg[], body) });
  apis.push(api);
  return api;
}

const call = (name: string, input: Record<string, unknown>, text?: string): FakeScript => ({ ...(text ? { text } : {}), toolUse: { name, input } });

describe('hostile commands', () => {
  // Overlay backends can't mount a repository whose path holds ',' or ':', so such a repository
  // gets the copy backend: the same guarantees must hold there (its commands run in a pid
  // namespace of their own where the kernel allows it, else they are tagged and swept).
  it.each([
    ['the default backend', () => gitRepo(FILES, { commandTimeoutMs: 1000 })],
    ['the copy backend (a repository path with a comma)', () => repoAt(join(tempDir(), 'with,comma'), FILES, { commandTimeoutMs: 1000 })],
  ])(`%s: daemons, SIGTERM-proof commands, writes to the real repo path and the key in the environment are all contained (seed ${SEED})`, async (_backend, makeRepo) => {
    const repo = makeRepo();
    const before = treeFingerprint(repo);
    const key = `sk-ant-e2e-${randomBytes(12).toString('hex')}`;
    const daemonA = tag();
    const daemonB = tag();
    const stubborn = tag();
    const observed: Record<string, unknown> = {};

    const api = await fakeApi(async (messages) => {
      const calls = toolCalls(messages).filter((c) => c.name === 'execute_command' || c.name === 'cancel_subscription');
      const last = lastResult(messages);
      switch (calls.length) {
        case 0:
          return call(
            'execute_command',
            {
              command:
                `setsid sleep ${daemonA} >/dev/null 2>&1 </dev/null & ` +
                `(nohup sh -c "trap '' TERM HUP INT; sleep ${daemonB}" >/dev/null 2>&1 &); echo daemons-started`,
            },
            'Starting daemons.',
          );
        case 1:
          // The command that started them has exited: its daemons must have gone with it.
          observed.daemonsResult = last?.text;
          observed.daemonsAfterExit = await untilGone(() => [...processesMatching(daemonA), ...processesMatching(daemonB)]);
          return call('execute_command', { command: `trap '' TERM INT HUP; echo ignoring-term; sleep ${stubborn}; echo never` });
        case 2: {
          observed.stubbornResult = last?.text;
          // Still running (it went to the background after 1 s): the scan must see it, or the
          // checks below prove nothing.
          observed.stubbornSeenRunning = processesMatching(stubborn).length;
          return call('cancel_subscription', { tool_call_id: calls[1].id });
        }
        case 3:
          observed.cancelResult = last?.text;
          observed.stubbornAfterCancel = await untilGone(() => processesMatching(stubborn));
          return call('execute_command', {
            command:
              `echo pwned > ${repo}/a.txt; echo planted > ${repo}/planted.txt; rm -f ${repo}/b.txt ${repo}/src/keep.js; ` +
              `cat ${repo}/a.txt; echo WRITES-DONE`,
          });
        case 4:
          observed.writesResult = last?.text;
          observed.treeAfterWrites = treeFingerprint(repo);
          return call('execute_command', {
            command:
              'env | sort; echo "key=[$ANTHROPIC_API_KEY] token=[$ANTHROPIC_AUTH_TOKEN]"; echo ENV-DONE',
          });
        default:
          observed.envResult = last?.text;
          return { text: 'Done.' };
      }
    });

    const mark = runMark();
    const r = await run(['-p', 'Run the hostile commands.', '--output-format', 'stream-json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: api.url, ...mark.env },
    });
    const left = await untilGone(() => survivors(mark));
    leftovers.push(...left);
    const lines = events(r.stdout);
    const backend = lines[0]?.sandbox;
    console.log(`hostile-commands seed=${SEED} backend=${String(backend)}`);
    if (repo.includes(',')) expect(backend).toBe('copy');

    expect(r.stderr).not.toMatch(STACK_TRACE);
    // Without --yes the sandbox's changes (if any) are saved as a patch, never applied.
    expect([0, 4], r.stderr).toContain(r.code);
    expect(lines.at(-1)).toMatchObject({ type: 'result', result: 'Done.', diff_applied: false });

    // Soft: one run checks several guarantees; a failure names each one broken.
    expect.soft(observed.daemonsResult).toMatch(/daemons-started\n\[exit code: 0\]/);
    expect.soft(observed.daemonsAfterExit, 'daemons outlived their command').toEqual([]);
    expect.soft(observed.stubbornResult).toMatch(/still running/);
    expect.soft(observed.stubbornSeenRunning, 'the scan sees a running command').toBeGreaterThan(0);
    expect.soft(observed.cancelResult).toMatch(/cancelled/);
    expect.soft(observed.stubbornAfterCancel, 'a SIGTERM-proof command outlived its cancel').toEqual([]);
    expect.soft(observed.writesResult).toMatch(/WRITES-DONE|names .*the user's own repository/);
    expect.soft(observed.treeAfterWrites, 'the user tree during the session').toEqual(before);
    expect.soft(treeFingerprint(repo), 'the user tree after the session').toEqual(before);

    // The key is not in the command's environment.
    expect.soft(observed.envResult).toContain('ENV-DONE');
    expect.soft(observed.envResult).toContain('key=[] token=[]');
    expect.soft(observed.envResult).not.toContain(key);
    expect.soft(JSON.stringify(api.requests.map((q) => q.body))).not.toContain(key);
    expect.soft(left, 'processes that outlived the session').toEqual([]);
  });

  it(`Ctrl+C while a SIGTERM-proof command and its daemon run: exit 130, nothing survives (seed ${SEED})`, async () => {
    const repo = gitRepo(FILES, { commandTimeoutMs: 1000 });
    const before = treeFingerprint(repo);
    const daemon = tag();
    const stubborn = tag();
    let ready!: () => void;
    const reached = new Promise<void>((r) => (ready = r));
    const api = await fakeApi((messages) => {
      if (toolCalls(messages).length === 0) {
        return call('execute_command', {
          command: `setsid sh -c "trap '' TERM INT HUP; sleep ${daemon}" >/dev/null 2>&1 </dev/null & trap '' TERM INT HUP; echo busy > a.txt; sleep ${stubborn}`,
        });
      }
      // The command is in the background now; the model "thinks" until the user interrupts.
      ready();
      return { stallMs: 60_000 };
    });
    const mark = runMark();
    const cli = start(['-p', 'Start something stubborn.', '--output-format', 'json', '--yes'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, ...mark.env },
    });
    await reached;
    const running = [...processesMatching(daemon), ...processesMatching(stubborn)];
    cli.kill('SIGINT');
    const r = await cli.done;
    const left = await untilGone(() => survivors(mark));
    leftovers.push(...left, ...running);
    expect(running.length, 'both sleeps were running before Ctrl+C').toBeGreaterThanOrEqual(2);
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'interrupted', diff_applied: false });
    expect(left, 'processes that outlived Ctrl+C').toEqual([]);
    // Interrupted: nothing applied, even with --yes.
    expect(treeFingerprint(repo)).toEqual(before);
  });

  // Once a regression: the commit's blobs lived only in the sandbox's private .git overlay, which
  // in-namespace git reached as the alternate <repo>/.git/objects, so they never reached the
  // session's object store and the end-of-session diff failed ("bad object"). The sandbox's hooks
  // refuse commits; a command can switch them off, as this one does.
  it('a command that commits inside the sandbox (to the real repo path): the session still ends with its patch', async () => {
    const repo = gitRepo(FILES, { commandTimeoutMs: 1000 });
    const before = treeFingerprint(repo);
    const { r, results, left, result } = await runCommands(repo, [
      `echo committed > ${repo}/a.txt && git -C ${repo} -c core.hooksPath=/dev/null -c user.email=e@e -c user.name=e commit -qam evil && git -C ${repo} log --oneline | head -1`,
    ]);
    expect(results[0]).toMatch(/evil\n\[exit code: 0\]|names .*the user's own repository/);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(result, r.stderr).toMatchObject({ type: 'result', result: 'Done.', diff_applied: false });
    expect([0, 4]).toContain(r.code);
    expect(treeFingerprint(repo)).toEqual(before);
    expect(left).toEqual([]);
  });

  // Commands get a /proc of their own (their pid namespace's), so no other process's environment,
  // and the sandbox's holders don't carry the key. The copy backend's fallback without pid
  // namespaces can only clean the environment.
  it('a command hunting /proc for ANTHROPIC_API_KEY finds nothing', async () => {
    const repo = gitRepo(FILES, { commandTimeoutMs: 1000 });
    const key = `sk-ant-e2e-${randomBytes(12).toString('hex')}`;
    const { api, results, backend, left } = await runCommands(
      repo,
      [
        "grep -a -h -o 'sk-ant-e2e[[:alnum:]-]*' /proc/[0-9]*/environ /proc/[0-9]*/task/[0-9]*/environ 2>/dev/null | sort -u | sed 's/^/found: /'; " +
          'ls /proc | grep -c "^[0-9]" | sed "s/^/visible processes: /"; echo HUNT-DONE',
      ],
      { ANTHROPIC_API_KEY: key },
    );
    console.log(`key-hunt backend=${backend}: ${results[0]?.split('\n').filter((l) => l.startsWith('visible')).join('')}`);
    expect(results[0]).toContain('HUNT-DONE');
    if (backend !== 'copy') {
      expect(results[0]).not.toContain(key);
      expect(JSON.stringify(api.requests.map((q) => q.body))).not.toContain(key);
    }
    expect(left).toEqual([]);
  });
});
