// Issue 7, scenario 1: a headless multi-thread task (a root and two children editing files, a
// background command) SIGKILLed at seeded points, each followed by `-c --yes` until done. Every
// run must end with the tree of an uninterrupted run, every command executed at most once per
// call, no process left behind, and nothing left after gc.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gc } from '@infinity-code/sandbox';
import type { ScriptedReply } from '@infinity-code/runtime';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { demoBrain, DEMO_FILES, DEMO_TASK } from 'infinity-code/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asFake, cleanupTemps, gitRepo, runCli, startCli, tempDir } from './support/cli.js';
import { processesMatching } from './support/procs.js';
import { seeded, testSeed } from './support/seeded.js';

const POINTS = Number(process.env.IC_CRASH_POINTS ?? 6);
const SEED = testSeed(7);

/** The demo's decisions, with each command logging its own call id before it runs. */
function brain(body: { system?: unknown; messages?: unknown[] }) {
  const messages = (body.messages ?? []) as never[];
  const reply: ScriptedReply = demoBrain({ system: body.system, messages });
  const fake = asFake(reply);
  if (reply.toolCall?.name === 'execute_command') {
    // Deterministic per position in the history: a re-issued call after a crash has the same id.
    const id = `toolu_cmd_${messages.length}`;
    fake.toolUse = { id, name: 'execute_command', input: { command: `echo ${id} >> "$IC_LOG" && node test.js` } };
  }
  return fake;
}

function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    if (name === '.git' || name === '.infinity') continue;
    out[name] = readFileSync(join(dir, name), 'utf8');
  }
  return out;
}

/** Set by a test to hold one request of the model back (see the second test). */
let holdWhen: ((body: { messages?: unknown[] }) => Promise<void> | undefined) | undefined;

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({
    brain: async (body) => {
      await holdWhen?.(body);
      return brain(body);
    },
  });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

/**
 * A home whose user config lets commands write into it (the rest of the machine is read-only to
 * them), so each command can log its call id there.
 */
function commandHome(): string {
  const home = tempDir();
  mkdirSync(join(home, '.config', 'infinity-code'), { recursive: true });
  writeFileSync(join(home, '.config', 'infinity-code', 'config.json'), JSON.stringify({ sandbox: { writable: [home], envAllow: ['IC_LOG'] } }));
  return home;
}

describe('crash and resume of the built CLI', () => {
  const env = (log: string) => ({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url, DEMO_TEST_STEPS: '2', IC_LOG: log });
  const config = { commandTimeoutMs: 800 };

  // The uninterrupted run, made once: the reference tree and how many events a whole run prints.
  let baseline: Promise<{ expected: Record<string, string>; total: number }> | undefined;
  const uninterrupted = () =>
    (baseline ??= (async () => {
      const baseRepo = gitRepo(DEMO_FILES, config);
      const home = commandHome();
      const base = await runCli(['-p', DEMO_TASK, '--yes', '--output-format', 'stream-json'], { cwd: baseRepo, home, env: env(join(home, 'log')) });
      expect(base.code, base.stderr).toBe(0);
      const expected = tree(baseRepo);
      expect(expected['farewell.js']).toBeDefined();
      return { expected, total: base.stdout.trim().split('\n').length };
    })());

  it(`SIGKILLed at ${POINTS} seeded points, -c --yes always reaches the uninterrupted result`, async () => {
    const { expected, total } = await uninterrupted();

    const random = seeded(SEED);
    for (let p = 0; p < POINTS; p++) {
      const killAfter = 2 + random.int(total - 3);
      const repo = gitRepo(DEMO_FILES, config);
      const home = commandHome();
      const log = join(home, 'commands.log');
      let killed = false;
      const first = startCli(['-p', DEMO_TASK, '--yes', '--output-format', 'stream-json'], {
        cwd: repo,
        home,
        env: env(log),
        onStdout: (all) => {
          if (!killed && all.split('\n').length > killAfter) {
            killed = true;
            first.kill('SIGKILL');
          }
        },
      });
      const r1 = await first.done;
      expect(r1.signal === 'SIGKILL' || r1.code === 0, `point ${p}: ${r1.stderr}`).toBe(true);
      let code = r1.code;
      for (let attempt = 0; code !== 0 && attempt < 3; attempt++) {
        const r = await runCli(['-c', '--yes', '-p', 'Continue where you left off.'], { cwd: repo, home, env: env(log) });
        code = r.code;
        expect([0], `point ${p} (killed after ${killAfter} events), resume ${attempt}: ${r.stderr}`).toContain(r.code);
      }
      expect(tree(repo), `point ${p} (killed after ${killAfter} events)`).toEqual(expected);
      const ids = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : [];
      expect(new Set(ids).size, `commands run twice at point ${p}: ${ids.join(' ')}`).toBe(ids.length);

      const stateDir = join(home, '.local', 'state', 'infinity-code');
      expect(processesMatching(stateDir)).toEqual([]);
      await gc({ stateDir, all: true });
      const sessionsDir = join(stateDir, 'sessions');
      expect(existsSync(sessionsDir) ? readdirSync(sessionsDir) : []).toEqual([]);
    }
  });

  // The first request goes out while the session's snapshot and sandboxes are still being made
  // (issue 16): a kill then may find them half made. The next run starts over from a fresh
  // snapshot of the tree, with the task that was stored, and the half-made session is collected.
  it('SIGKILLed when its first model request arrives, while the sandboxes are being made, -c reaches the uninterrupted result', async () => {
    const { expected } = await uninterrupted();
    const repo = gitRepo(DEMO_FILES, config);
    const home = commandHome();
    const log = join(home, 'commands.log');
    let reached!: () => void;
    const atFirst = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    holdWhen = (body) => {
      if ((body.messages ?? []).length !== 1) return undefined;
      holdWhen = undefined;
      reached();
      return released;
    };
    try {
      const first = startCli(['-p', DEMO_TASK, '--yes', '--output-format', 'stream-json'], { cwd: repo, home, env: env(log) });
      await atFirst;
      first.kill('SIGKILL');
      expect((await first.done).signal).toBe('SIGKILL');
    } finally {
      holdWhen = undefined;
      release();
    }
    const r = await runCli(['-c', '--yes', '-p', 'Continue where you left off.'], { cwd: repo, home, env: env(log) });
    expect(r.code, r.stderr).toBe(0);
    expect(tree(repo)).toEqual(expected);
    const stateDir = join(home, '.local', 'state', 'infinity-code');
    expect(processesMatching(stateDir)).toEqual([]);
    // The killed run's session was collected by the next one; the next one removed its own.
    expect(readdirSync(join(stateDir, 'sessions'))).toEqual([]);
  });

  // A narrow window the seeded points hit only now and then: the command went to the background
  // and the root's model call that takes that answer was in flight, so the subscription was not
  // yet recorded. The restart must still end it (the command died with the process); otherwise
  // the root waits for its events forever.
  it('SIGKILLed while the root takes the answer that a command went to the background, -c reaches the uninterrupted result', async () => {
    const { expected } = await uninterrupted();
    const repo = gitRepo(DEMO_FILES, config);
    const home = commandHome();
    const log = join(home, 'commands.log');
    let reached!: () => void;
    const atWindow = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    holdWhen = (body) => {
      if (!JSON.stringify(body.messages ?? []).includes('in the background (subscription id: toolu_cmd_')) return undefined;
      holdWhen = undefined;
      reached();
      return released;
    };
    try {
      const first = startCli(['-p', DEMO_TASK, '--yes', '--output-format', 'stream-json'], { cwd: repo, home, env: env(log) });
      await atWindow;
      first.kill('SIGKILL');
      expect((await first.done).signal).toBe('SIGKILL');
    } finally {
      holdWhen = undefined;
      release();
    }
    const r = await runCli(['-c', '--yes', '-p', 'Continue where you left off.', '--output-format', 'stream-json'], { cwd: repo, home, env: env(log) });
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { type?: string; status?: string };
    expect(result.type, `the resumed run printed no result (it ended while waiting): ${r.stdout.slice(-400)}`).toBe('result');
    expect([r.code, result.status], r.stderr).toEqual([0, 'success']);
    expect(tree(repo)).toEqual(expected);
    const ids = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
    expect(new Set(ids).size, `commands run twice: ${ids.join(' ')}`).toBe(ids.length);
    await gc({ stateDir: join(home, '.local', 'state', 'infinity-code'), all: true });
  });
});
