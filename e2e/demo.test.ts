// Issue 17: `infinity-code --demo` cleans up after itself and shows no price for its scripted
// model. Headless (output piped) and in the TUI (tmux), each with a temp dir of its own (TMPDIR):
// when the demo ends, its repository is gone and so are its sandboxes; a repository an earlier
// demo left behind when it was killed is removed, one a running demo owns is not.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, runCli, tempDir } from './support/cli.js';
import { STACK_TRACE } from './support/run.js';
import { TmuxScreen } from './support/tmux.js';

afterAll(cleanupTemps);

const demoRepos = (tmp: string) => readdirSync(tmp).filter((n) => n.startsWith('infinity-code-demo-'));
const sandboxSessions = (home: string) => {
  const dir = join(home, '.local', 'state', 'infinity-code', 'sessions');
  return existsSync(dir) ? readdirSync(dir) : [];
};

/** A demo repository as a demo owned by `pid` leaves it (see OWNER_FILE in demo.ts). */
function leftRepo(tmp: string, name: string, pid: number): string {
  const dir = join(tmp, `infinity-code-demo-${name}`);
  mkdirSync(join(dir, '.git'), { recursive: true });
  writeFileSync(join(dir, '.git', 'infinity-code-demo-owner'), `${pid}\n`);
  return dir;
}

describe('--demo', () => {
  it('headless: runs to the end, then its repository and sandboxes are gone; an abandoned demo repository is removed too', async () => {
    const tmp = tempDir();
    const home = tempDir();
    // A process that has exited: the demo that owned this repository was killed.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const abandoned = leftRepo(tmp, 'killed', dead);
    // This test process is alive: a demo running elsewhere keeps its repository.
    const running = leftRepo(tmp, 'running', process.pid);
    const r = await runCli(['--demo'], { cwd: tempDir(), home, env: { TMPDIR: tmp, DEMO_TEST_STEPS: '2' } });
    expect(r.code, r.stderr).toBe(0);
    const repo = /Demo repository: (\S+) \(a throwaway, removed when the demo ends\)/.exec(r.stderr)?.[1];
    expect(repo, r.stderr).toBeDefined();
    expect(repo!.startsWith(join(tmp, 'infinity-code-demo-'))).toBe(true);
    expect(r.stderr).toMatch(/Applied changes to 2 file\(s\) in the working tree:\n {2}\S+\n {2}\S+\n/);
    expect(r.stderr).toContain(`Removed the demo repository ${repo}.`);
    expect(existsSync(repo!)).toBe(false);
    expect(existsSync(abandoned)).toBe(false);
    expect(demoRepos(tmp)).toEqual(['infinity-code-demo-running']);
    expect(existsSync(running)).toBe(true);
    expect(sandboxSessions(home)).toEqual([]);
    expect(r.stderr).not.toMatch(STACK_TRACE);
  });

  it('TUI: the status line shows no price for the scripted model; quitting removes the repository and sandboxes', async () => {
    const tmp = tempDir();
    const home = tempDir();
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN, '--demo'], {
      cwd: tempDir(),
      env: { HOME: home, TMPDIR: tmp, TERM: 'xterm-256color', DEMO_TEST_STEPS: '2' },
    });
    try {
      // Tokens flowed (the first reply is in), and the cost is not priced.
      const shown = await screen.waitFor(/scripted-demo · ↑[1-9]\d* ↓[1-9]\d* · cost n\/a ·/);
      expect(shown).not.toMatch(/\$\d/);
      expect(demoRepos(tmp)).toHaveLength(1);
      screen.press('C-c');
      await screen.waitFor(/Press Ctrl\+C again to quit/);
      screen.press('C-c');
      await screen.waitForExit();
    } finally {
      screen.kill();
    }
    expect(demoRepos(tmp)).toEqual([]);
    expect(sandboxSessions(home)).toEqual([]);
  });
});
