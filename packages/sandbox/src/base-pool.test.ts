import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gc, openSession, type SandboxSession } from './index.js';
import { cleanupTempDirs, makeRepo, tempDir } from './test-support/fixtures.js';

const open: SandboxSession[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
  await cleanupTempDirs();
});

async function session(repo: string, stateDir: string): Promise<SandboxSession> {
  const s = await openSession({ repo, stateDir });
  open.push(s);
  return s;
}

async function closeIt(s: SandboxSession, opts: { keep?: boolean } = {}): Promise<void> {
  open.splice(open.indexOf(s), 1);
  await s.close(opts);
}

/** Pooled bases of every repository: `<key>/<entry>` names. */
async function pooled(stateDir: string): Promise<string[]> {
  const root = path.join(stateDir, 'bases');
  const out: string[] = [];
  for (const key of await readdir(root).catch(() => [] as string[])) {
    for (const entry of await readdir(path.join(root, key))) out.push(`${key}/${entry}`);
  }
  return out;
}

describe('pooled bases', () => {
  it("a closed session's base serves the next session of the repository, moved to its snapshot", async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'a.txt': 'a\n', 'gone.txt': 'gone\n', 'dir/b.txt': 'b\n' });
    const first = await session(repo, stateDir);
    const firstBase = (await stat(first.ctx.baseDir)).ino;
    await (await first.create('t')).writeFile('a.txt', 'changed in a sandbox\n');
    await closeIt(first);
    expect(await pooled(stateDir)).toHaveLength(1);
    expect(await readdir(path.join(stateDir, 'sessions'))).toEqual([]);

    // The user edits, deletes and adds files between the sessions, committed or not.
    await writeFile(path.join(repo, 'dir', 'b.txt'), 'b, edited by the user\n');
    await rm(path.join(repo, 'gone.txt'));
    await writeFile(path.join(repo, 'new.txt'), 'new\n');
    const second = await session(repo, stateDir);
    // The same directory, taken from the pool; nothing is left there while the session lives.
    expect((await stat(second.ctx.baseDir)).ino).toBe(firstBase);
    expect(await pooled(stateDir)).toEqual([]);
    const sb = await second.create('t');
    expect(await sb.readText('a.txt')).toBe('a\n');
    expect(await sb.readText('dir/b.txt')).toBe('b, edited by the user\n');
    expect(await sb.readText('new.txt')).toBe('new\n');
    expect(await sb.exists('gone.txt')).toBe(false);
    // The base holds exactly the snapshot.
    const files = (await readdir(second.ctx.baseDir, { recursive: true })).map(String).sort();
    expect(files).toEqual(['a.txt', 'dir', 'dir/b.txt', 'new.txt']);
    expect(await sb.diff()).toMatchObject({ isEmpty: true });
  });

  it("never touches a live session's base, nor a kept one's", async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const live = await session(repo, stateDir);
    const other = await session(repo, stateDir);
    expect(other.ctx.baseDir).not.toBe(live.ctx.baseDir);
    expect(await readFile(path.join(live.ctx.baseDir, 'a.txt'), 'utf8')).toBe('a\n');
    await closeIt(other, { keep: true });
    // Kept for a resume: its base stays in its session.
    expect(await pooled(stateDir)).toEqual([]);
    await closeIt(live);
    expect(await pooled(stateDir)).toHaveLength(1);
    expect(await readFile(path.join(live.ctx.baseDir, 'a.txt'), 'utf8').catch(() => 'moved')).toBe('moved');
  });

  it('only what changed is written into a pooled base: the other files stay as they were', async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'same.txt': 'same\n', 'edited.txt': 'before\n' });
    const first = await session(repo, stateDir);
    // Written files get a new change time (and usually a new inode); untouched ones keep both.
    const written = async (s: SandboxSession, f: string) => {
      const st = await stat(path.join(s.ctx.baseDir, f));
      return `${st.ino}:${st.ctimeMs}`;
    };
    const same = await written(first, 'same.txt');
    await closeIt(first);
    await writeFile(path.join(repo, 'edited.txt'), 'after\n');
    const next = await session(repo, stateDir);
    expect(await written(next, 'same.txt')).toBe(same);
    expect(await readFile(path.join(next.ctx.baseDir, 'edited.txt'), 'utf8')).toBe('after\n');
  });

  it('gc removes the pooled bases of repositories that are gone, and every one with all', async () => {
    const stateDir = await tempDir('ic-state-');
    const kept = await makeRepo({ 'a.txt': 'a\n' });
    const gone = await makeRepo({ 'a.txt': 'a\n' });
    await closeIt(await session(kept, stateDir));
    await closeIt(await session(gone, stateDir));
    expect(await pooled(stateDir)).toHaveLength(2);
    await rm(gone, { recursive: true, force: true });
    const report = await gc({ stateDir });
    expect(report.removedBases).toHaveLength(1);
    expect(await pooled(stateDir)).toHaveLength(1);
    expect((await gc({ stateDir, all: true })).removedBases).toHaveLength(1);
    expect(await pooled(stateDir)).toEqual([]);
  });
});
