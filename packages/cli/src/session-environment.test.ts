// What the model is told about where it works: the facts of the session's start, in the system
// prompt, the same bytes for a resumed session. Real git repositories, real sandboxes, real SQLite.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedProvider, type CompletionRequest } from '@infinity-code/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentSession } from './agent-session.js';
import { autoAcceptReviewer } from './review.js';
import { environmentText } from './session-environment.js';
import { setUpSession } from './session-setup.js';

const dirs: string[] = [];
const open: AgentSession[] = [];
afterEach(async () => {
  for (const a of open.splice(0)) await a.close({ keep: true }).catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

describe('the environment in the system prompt', () => {
  it('tells the date, shell, root, start directory, branch, uncommitted changes and network; a resumed session is told the same bytes', async () => {
    const repo = temp('ic-env-');
    git(repo, 'init', '-q', '-b', 'feature-x');
    writeFileSync(join(repo, 'tracked.txt'), 'one\n');
    mkdirSync(join(repo, 'pkg', 'sub'), { recursive: true });
    writeFileSync(join(repo, 'pkg', 'sub', 'keep.txt'), 'k\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'first');
    writeFileSync(join(repo, 'tracked.txt'), 'two\n');
    writeFileSync(join(repo, 'new.txt'), 'new\n');
    const env = { HOME: temp('ic-env-home-') };
    const stateDir = temp('ic-env-state-');
    const systems: string[] = [];
    const provider = new ScriptedProvider((r: CompletionRequest) => (systems.push(r.system), { text: 'Done.' }));
    const start = async (continueLatest: boolean) => {
      const setup = setUpSession({ cwd: join(repo, 'pkg', 'sub'), env, title: 't', provider, ...(continueLatest ? { continueLatest } : {}) });
      const agent = await AgentSession.open(setup, { reviewer: autoAcceptReviewer, sandboxStateDir: stateDir });
      open.push(agent);
      await agent.system.sendUserText(agent.rootId, 'hello');
      expect(await agent.system.whenQuiescent()).toEqual({ kind: 'quiescent' });
      await agent.close({ keep: true });
      open.splice(open.indexOf(agent), 1);
    };
    await start(false);
    const now = new Date();
    const today = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
    const told = systems[0];
    expect(told).toContain(`as of this session's start on ${today}`);
    expect(told).toContain(`Commands run in bash, from the repository root: ${repo}.`);
    expect(told).toContain('The user started Infinity Code in pkg/sub/');
    expect(told).toContain('Git branch: feature-x.');
    expect(told).toContain('    M tracked.txt');
    expect(told).toContain('    ?? new.txt');
    expect(told).toMatch(/commands have no network/);

    // The tree moves on; the session, resumed, is told what it was told (its prefix is cached and its thinking bound to it).
    git(repo, 'checkout', '-q', '-b', 'other');
    writeFileSync(join(repo, 'later.txt'), 'later\n');
    await start(true);
    expect(systems.at(-1)).toBe(told);
  });

  it('a folder without a git repository: says so, with no git facts, and calls it the project folder', () => {
    const text = environmentText({
      date: '2026-12-07',
      platform: 'Linux 6.1 (x64)',
      shell: '/bin/sh',
      root: '/r',
      cwd: '',
      git: { branch: undefined, changes: [], more: 0 },
      folder: true,
      network: 'off',
      writable: [],
      networkRerun: false,
    });
    expect(text).toContain('Commands run in /bin/sh, from the project folder: /r.');
    expect(text).toContain('- Git: none. This folder is not a git repository (no branch, no history, no git status).');
    expect(text).toContain('Commands can write only the folder (your sandbox');
    expect(text).not.toMatch(/Git branch|not available|repository root/);
  });

  it('says so when git has no branch to tell, and names the domains a proxied network reaches', () => {
    const text = environmentText({
      date: '2026-12-07',
      platform: 'Linux 6.1 (x64)',
      shell: '/bin/sh',
      root: '/r',
      cwd: '',
      git: { branch: undefined, changes: [], more: 0 },
      network: { allow: ['registry.npmjs.org'] },
      writable: ['/opt/cache'],
      networkRerun: false,
    });
    expect(text).toContain('Git: not available');
    expect(text).toContain('only these domains, through a proxy: registry.npmjs.org');
    expect(text).toContain('a private /tmp, and /opt/cache');
    expect(text).not.toContain('started Infinity Code in');
  });
});
