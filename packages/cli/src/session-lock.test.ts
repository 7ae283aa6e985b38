import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionLocks } from './session-lock.js';
import { SessionRegistry } from './sessions.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function lockDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ic-locks-'));
  dirs.push(d);
  return d;
}

/** A live process other than this one, and its lock file for `id` as it would have written it. */
async function heldByOther(dir: string, id: string): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${id}.lock`), JSON.stringify({ pid: child.pid }));
  return child.pid!;
}

describe('session locks', () => {
  it('a session a live process holds is refused, naming that process', async () => {
    const dir = lockDir();
    const pid = await heldByOther(dir, 's1');
    const locks = new SessionLocks(dir);
    expect(locks.acquire('s1')).toMatchObject({ pid });
    expect(locks.acquire('s2')).toBeUndefined();
  });

  it("a dead holder's lock is taken over; one this process holds is its own", async () => {
    const dir = lockDir();
    const pid = await heldByOther(dir, 's1');
    const child = children.pop()!;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
    const locks = new SessionLocks(dir);
    expect(locks.acquire('s1')).toBeUndefined();
    expect(JSON.parse(readFileSync(join(dir, 's1.lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(pid).not.toBe(process.pid);
    expect(locks.acquire('s1')).toBeUndefined();
    locks.releaseAll();
    expect(existsSync(join(dir, 's1.lock'))).toBe(false);
  });

  it('a pid reused by another process does not hold the lock (its start time differs)', () => {
    const dir = lockDir();
    mkdirSync(dir, { recursive: true });
    // This very process's pid, with a start time it never had.
    writeFileSync(join(dir, 's1.lock'), JSON.stringify({ pid: process.pid, start: '1' }));
    expect(new SessionLocks(dir).holder('s1')).toBeUndefined();
  });

  it('the registry refuses to resume a session another process runs, and says how to go on', async () => {
    const dir = lockDir();
    const registry = new SessionRegistry(dir);
    const made = registry.create('first task');
    registry.releaseLocks();
    const pid = await heldByOther(join(dir, 'locks'), made.id);
    expect(() => new SessionRegistry(dir).claim(made)).toThrow(new RegExp(`in use by another Infinity Code process \\(pid ${pid}\\).*without -c or -r`));
    expect(new SessionRegistry(dir).inUseElsewhere(made.id)).toBe(true);
  });

  it('sessions made by several processes at once are all listed (the list is updated under a lock)', async () => {
    const dir = lockDir();
    const script = `
      import { SessionRegistry } from ${JSON.stringify(new URL('./sessions.ts', import.meta.url).href)};
      const r = new SessionRegistry(${JSON.stringify(dir)});
      for (let i = 0; i < 15; i++) r.create('task ' + i);
    `;
    const runs = Array.from({ length: 4 }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      return new Promise<string>((resolve) => child.on('close', (code) => resolve(code === 0 ? '' : err || `exit ${code}`)));
    });
    expect(await Promise.all(runs)).toEqual(['', '', '', '']);
    expect(new SessionRegistry(dir).list()).toHaveLength(60);
  });
});
