import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backendByName, gc, listSessions, openSession, SandboxError, type OpenSessionOptions, type SandboxSession } from './index.js';
import { cleanupTempDirs, git, leftovers, makeRepo, tempDir } from './test-support/fixtures.js';

const sessions: SandboxSession[] = [];
async function open(opts: OpenSessionOptions): Promise<SandboxSession> {
  const s = await openSession(opts);
  sessions.push(s);
  return s;
}

afterEach(async () => {
  while (sessions.length > 0) await sessions.pop()!.close();
  await cleanupTempDirs();
});

/** A session of `repo` with one sandbox holding an edit, closed with keep. */
async function keptSession(repo: string, stateDir: string): Promise<string> {
  const s = await open({ repo, stateDir });
  const sb = await s.create('thread-1');
  await sb.writeFile('kept.txt', 'kept\n');
  // Starts the sandbox's processes (a namespace holder on overlay backends).
  expect((await sb.run('cat kept.txt')).stdout).toBe('kept\n');
  await s.close({ keep: true });
  return s.id;
}

describe('resume errors', () => {
  it('a session that does not exist, or no longer does, is not-found and says a fresh one is needed', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const stateDir = await tempDir('ic-state-');
    for (const id of ['lq1x2y-123-abcdef', '../escape', '']) {
      const err = await openSession({ repo, stateDir, resume: id }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SandboxError);
      expect(err).toMatchObject({ code: 'not-found', message: expect.stringMatching(/fresh session/) });
    }
    const id = await keptSession(repo, stateDir);
    await gc({ stateDir, all: true });
    await expect(openSession({ repo, stateDir, resume: id })).rejects.toMatchObject({
      code: 'not-found',
      message: expect.stringMatching(/no longer exists.*fresh session/),
    });
  });

  it('refuses another repository, another backend, an unavailable backend, and a session in use, leaving it resumable', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const other = await makeRepo({ 'b.txt': 'b\n' });
    const stateDir = await tempDir('ic-state-');
    const id = await keptSession(repo, stateDir);
    const recorded = (await listSessions({ stateDir }))[0].backend;

    await expect(openSession({ repo: other, stateDir, resume: id })).rejects.toMatchObject({
      code: 'invalid-argument',
      message: expect.stringMatching(new RegExp(`belongs to the repository ${repo}`)),
    });
    const otherName = recorded === 'copy' ? 'overlay-root' : 'copy';
    await expect(openSession({ repo, stateDir, resume: id, backend: otherName })).rejects.toMatchObject({
      code: 'invalid-argument',
      message: expect.stringMatching(new RegExp(`made with the ${recorded} backend`)),
    });
    const broken = { ...backendByName(recorded), probe: async () => ({ ok: false, detail: 'mounts are off today' }) };
    await expect(openSession({ repo, stateDir, resume: id, backend: broken })).rejects.toMatchObject({
      code: 'backend-unavailable',
      message: expect.stringMatching(/mounts are off today.*fresh session/),
    });
    expect(await listSessions({ stateDir })).toMatchObject([{ id, status: 'resumable' }]);

    // Two processes (here: two calls) resuming at once: exactly one gets it.
    const both = await Promise.allSettled([open({ repo, stateDir, resume: id }), open({ repo, stateDir, resume: id })]);
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = both.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect(lost.reason).toMatchObject({ code: 'in-use', message: expect.stringMatching(/in use by this process/) });
    const won = both.find((r): r is PromiseFulfilledResult<SandboxSession> => r.status === 'fulfilled')!.value;
    expect(await won.get('thread-1')!.readText('kept.txt')).toBe('kept\n');
    await expect(openSession({ repo, stateDir, resume: id })).rejects.toMatchObject({ code: 'in-use' });
  });

  it('a damaged session is not-found, becomes unresumable and is collected by gc', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const stateDir = await tempDir('ic-state-');
    const id = await keptSession(repo, stateDir);
    await rm(path.join(stateDir, 'sessions', id, 'base'), { recursive: true });

    await expect(openSession({ repo, stateDir, resume: id })).rejects.toMatchObject({
      code: 'not-found',
      message: expect.stringMatching(/damaged.*fresh session/),
    });
    expect(await listSessions({ stateDir })).toMatchObject([{ id, status: 'broken' }]);
    expect((await gc({ stateDir })).removedSessions).toEqual([path.join(stateDir, 'sessions', id)]);
  });
});

describe('resume of a session kept before it had its own git dir', () => {
  it('makes the git dir again, and the kept sandbox diffs and applies with it', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    await writeFile(path.join(repo, '.git', 'info', 'exclude'), '*.local\n');
    const stateDir = await tempDir('ic-state-');
    const id = await keptSession(repo, stateDir);
    const plumbing = path.join(stateDir, 'sessions', id, 'plumbing.git');
    await rm(plumbing, { recursive: true });

    const s = await open({ repo, stateDir, resume: id });
    expect(await readFile(path.join(plumbing, 'info', 'exclude'), 'utf8')).toContain('*.local\n');
    const sb = s.get('thread-1')!;
    await sb.writeFile('ignored.local', 'x\n');
    expect((await sb.diff()).files.map((f) => f.path)).toEqual(['kept.txt']);
    expect(await sb.applyToWorkingTree()).toMatchObject({ clean: true });
    expect(await readFile(path.join(repo, 'kept.txt'), 'utf8')).toBe('kept\n');
  });
});

describe('gc policy', () => {
  it('keeps a session closed with keep; gc({ all }) removes it and leaves no mounts, processes or storage', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const stateDir = await tempDir('ic-state-');
    const id = await keptSession(repo, stateDir);
    const dir = path.join(stateDir, 'sessions', id);

    const report = await gc({ stateDir });
    expect(report).toMatchObject({ removedSessions: [], liveSessions: [], keptSessions: [dir] });
    const resumed = await open({ repo, stateDir, resume: id });
    expect(await resumed.get('thread-1')!.readText('kept.txt')).toBe('kept\n');
    expect((await resumed.get('thread-1')!.run('cat kept.txt')).stdout).toBe('kept\n');
    await resumed.close({ keep: true });

    const all = await gc({ stateDir, all: true });
    expect(all.removedSessions).toEqual([dir]);
    expect(await readdir(path.join(stateDir, 'sessions'))).toEqual([]);
    expect(await leftovers(stateDir, repo)).toEqual({ processes: [], mounts: [] });
    expect(await git(repo, 'worktree', 'list', '--porcelain')).not.toContain('\nworktree ');
    expect(await git(repo, 'status', '--porcelain')).toBe('');
  });

  it("opening a session never collects a resumable one of its own repository; other repositories' go after keepDays", async () => {
    const repoA = await makeRepo({ 'a.txt': 'a\n' });
    const repoB = await makeRepo({ 'b.txt': 'b\n' });
    const stateDir = await tempDir('ic-state-');
    const a = await keptSession(repoA, stateDir);
    const b = await keptSession(repoB, stateDir);

    // Within keepDays everything resumable stays.
    const fresh = await open({ repo: repoA, stateDir });
    expect((await listSessions({ stateDir })).map((s) => s.id).sort()).toEqual([a, b, fresh.id].sort());

    // With keepDays 0 both kept sessions are "old": only repository A's own survives A's open.
    const next = await open({ repo: repoA, stateDir, keepDays: 0 });
    const left = await listSessions({ stateDir });
    expect(left.map((s) => s.id).sort()).toEqual([a, fresh.id, next.id].sort());
    expect(left.find((s) => s.id === a)).toMatchObject({ status: 'resumable', repo: repoA });
    expect(left.filter((s) => s.status === 'live').map((s) => s.id).sort()).toEqual([fresh.id, next.id].sort());

    // A plain gc with the same age limit has no repository to spare.
    expect((await gc({ stateDir, keepDays: 0 })).removedSessions).toEqual([path.join(stateDir, 'sessions', a)]);
  });
});
