import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  backendByName,
  backendsInPreferenceOrder,
  defaultStateDir,
  gc,
  openSession,
  probeBackends,
  SandboxError,
  type Sandbox,
  type SandboxSession,
} from './index.js';
import { processesUsing } from './proc.js';
import { cleanupTempDirs, git, makeRepo, tempDir } from './test-support/fixtures.js';
import { hookedBackend } from './test-support/hooked-backend.js';

const sessions: SandboxSession[] = [];
async function open(repo: string, stateDir?: string): Promise<SandboxSession> {
  const s = await openSession({ repo, stateDir: stateDir ?? (await tempDir('ic-state-')) });
  sessions.push(s);
  return s;
}

afterEach(async () => {
  while (sessions.length > 0) await sessions.pop()!.close();
  await cleanupTempDirs();
});

describe('backend probe', () => {
  it('picks the first backend that works, in preference order, and caches the answer per boot', async () => {
    const stateDir = await tempDir('ic-state-');
    const first = await probeBackends(stateDir);
    const order = backendsInPreferenceOrder().map((b) => b.name);
    expect(first.results.map((r) => r.name)).toEqual(order);
    expect(first.chosen).toBe(first.results.find((r) => r.ok)!.name);
    expect(first.results.find((r) => r.name === 'copy')!.ok).toBe(true);
    for (const r of first.results.filter((r) => !r.ok)) expect(r.detail.length).toBeGreaterThan(0);
    expect(first.cached).toBe(false);
    // Probe scratch space is cleaned up.
    expect(await readdir(path.join(stateDir, 'tmp'))).toEqual([]);

    const second = await probeBackends(stateDir);
    expect(second).toEqual({ ...first, cached: true });
  });

  it('a session opened without a backend uses the probe choice', async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await open(repo, stateDir);
    expect(session.backend).toBe((await probeBackends(stateDir)).chosen);
    const sb = await session.create();
    expect(await sb.readText('a.txt')).toBe('a\n');
  });
});

describe('session storage', () => {
  it('defaults to the XDG state dir, or ~/.local/state', () => {
    expect(defaultStateDir({ XDG_STATE_HOME: '/x/state' })).toBe('/x/state/infinity-code');
    expect(defaultStateDir({ HOME: process.env.HOME })).toMatch(/\/\.local\/state\/infinity-code$/);
  });

  it('refuses a state dir inside the repository, saying what to do', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const err = await openSession({ repo, stateDir: path.join(repo, '.infinity', 'sandboxes') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxError);
    expect(err).toMatchObject({ code: 'bad-state-dir' });
    expect((err as Error).message).toMatch(/outside the repository/);
  });

  it('explains when the path is not a git repository', async () => {
    const dir = await tempDir('ic-norepo-');
    await expect(openSession({ repo: dir, stateDir: await tempDir('ic-state-') })).rejects.toMatchObject({
      code: 'not-a-repo',
      message: expect.stringMatching(/git init/),
    });
  });

  it('tells a repository git cannot read (a damaged .git/HEAD) from no repository at all', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    await writeFile(path.join(repo, '.git', 'HEAD'), 'not a ref\n');
    await mkdir(path.join(repo, 'sub'));
    const err = await openSession({ repo: path.join(repo, 'sub'), stateDir: await tempDir('ic-state-') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxError);
    expect(err).toMatchObject({ code: 'git' });
    expect((err as Error).message).toMatch(new RegExp(`^git cannot read the repository in ${repo} \\(git says: fatal: not a git repository`));
    expect((err as Error).message).toContain(`run \`git status\` in ${repo}`);
  });

  it('works in a repository without commits and from a subdirectory', async () => {
    const repo = await tempDir('ic-empty-');
    await git(repo, 'init', '-q');
    await mkdir(path.join(repo, 'sub'));
    await writeFile(path.join(repo, 'sub', 'f.txt'), 'f\n');
    const session = await open(path.join(repo, 'sub'));
    expect(session.repo.root).toBe(repo);
    expect(session.snapshot.parent).toBeNull();
    const sb = await session.create();
    await sb.writeFile('sub/f.txt', 'g\n');
    expect((await sb.diff()).files).toMatchObject([{ path: 'sub/f.txt', status: 'modified' }]);
  });

  it("snapshots on the user's HEAD whether or not the working tree matches it, with files named like revisions", async () => {
    const repo = await makeRepo({ 'HEAD^{commit}': 'named like a revision\n', 'HEAD^{tree}': 'too\n', 'a.txt': 'a\n' });
    const head = await git(repo, 'rev-parse', 'HEAD');
    const clean = await open(repo);
    expect(clean.snapshot).toMatchObject({ parent: head, tree: await git(repo, 'rev-parse', 'HEAD^{tree}') });
    const sb = await clean.create();
    expect(await sb.readText('HEAD^{commit}')).toBe('named like a revision\n');
    expect((await sb.run('git status --porcelain')).stdout).toBe('');
    // Changed since HEAD: the base is brought from HEAD's tree to the snapshot's.
    await writeFile(path.join(repo, 'a.txt'), 'changed\n');
    const dirty = await open(repo);
    expect(dirty.snapshot.parent).toBe(head);
    expect(dirty.snapshot.tree).not.toBe(clean.snapshot.tree);
    const sb2 = await dirty.create();
    expect(await sb2.readText('a.txt')).toBe('changed\n');
    // The user's change is theirs, uncommitted, as in their own tree; the sandbox's diff has none of it.
    expect((await sb2.run('git status --porcelain')).stdout).toBe(' M a.txt\n');
    expect((await sb2.diff()).isEmpty).toBe(true);
    expect((await sb2.run('cat a.txt')).stdout).toBe('changed\n');
  });

  it('keeps storage outside the repo and removes it on close', async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await openSession({ repo, stateDir });
    const sb = await session.create();
    await sb.writeFile('b.txt', 'b\n');
    const dirs = await readdir(path.join(stateDir, 'sessions'));
    expect(dirs).toHaveLength(1);
    const record = JSON.parse(await readFile(path.join(stateDir, 'sessions', dirs[0], 'session.json'), 'utf8'));
    expect(record).toMatchObject({ repo, backend: session.backend, owner: { pid: process.pid } });
    expect(await git(repo, 'status', '--porcelain')).toBe('');
    await session.close();
    expect(await readdir(path.join(stateDir, 'sessions'))).toEqual([]);
  });

  it.each([{ keep: true }, { keep: false }])(
    'a sandbox still being made when the session closes (%j) is stopped with the rest, not left running',
    async (opts) => {
      const stateDir = await tempDir('ic-state-');
      const repo = await makeRepo({ 'a.txt': 'a\n' });
      const backend = backendByName((await probeBackends(stateDir)).chosen);
      let reached!: () => void;
      const spawned = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // The child is made (its processes started) but not yet recorded when the close comes: a
      // quit right after a spawn.
      const hooked = hookedBackend(backend, {
        async afterSpawn() {
          reached();
          await gate;
        },
      });
      const session = await openSession({ repo, stateDir, backend: hooked });
      const root = await session.create('root');
      const child = session.create('child', root).then(
        (sb) => sb,
        (err: unknown) => err,
      );
      await spawned;
      const closing = session.close(opts);
      release();
      await closing;
      // The thread's first tool call, in flight meanwhile, would start the sandbox's processes.
      const made = await child;
      if (!(made instanceof Error)) {
        await expect((made as Sandbox).readText('a.txt')).rejects.toMatchObject({ code: 'discarded' });
      }
      expect(await processesUsing(path.join(stateDir, 'sessions'))).toEqual([]);
      if (!opts.keep) expect(await readdir(path.join(stateDir, 'sessions'))).toEqual([]);
    },
  );

  it('gc leaves sessions of live processes alone', async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await open(repo, stateDir);
    const sb = await session.create();
    const report = await gc({ stateDir });
    expect(report.removedSessions).toEqual([]);
    expect(report.liveSessions).toHaveLength(1);
    expect(await sb.readText('a.txt')).toBe('a\n');
  });

  it('rejects a duplicate sandbox id and stacking on a discarded parent', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await open(repo);
    const a = await session.create('thread-a');
    await expect(session.create('thread-a')).rejects.toMatchObject({ code: 'invalid-argument' });
    await a.discard();
    await expect(session.create('thread-b', a)).rejects.toMatchObject({ code: 'discarded' });
  });
});

describe('a session prepared in the background', () => {
  it('is usable at once: its id and backend are known, create() waits for the snapshot', async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    await writeFile(path.join(repo, 'b.txt'), 'untracked\n');
    const session = await openSession({ repo, stateDir, background: true });
    sessions.push(session);
    expect(session.id).toMatch(/^[a-z0-9]+-\d+-[0-9a-f]{6}$/);
    expect(session.backend).toBe((await probeBackends(stateDir)).chosen);
    // Owned from the start: another process's gc leaves it alone even before it is ready.
    const record = JSON.parse(await readFile(path.join(stateDir, 'sessions', session.id, 'session.json'), 'utf8'));
    expect(record).toMatchObject({ repo, owner: { pid: process.pid } });
    const sb = await session.create('root');
    expect(await sb.readText('b.txt')).toBe('untracked\n');
    await expect(session.ready).resolves.toBeUndefined();
    expect(session.snapshot.tree).toMatch(/^[0-9a-f]{40}$/);
  });

  it('closed before it is ready, it waits for the preparation and leaves nothing behind', async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await openSession({ repo, stateDir, background: true });
    await session.close();
    expect(await readdir(path.join(stateDir, 'sessions'))).toEqual([]);
    await expect(session.create('root')).rejects.toMatchObject({ code: 'discarded' });
  });

  it('a failed preparation rejects `ready` and every use with its error, and leaves nothing behind', async () => {
    const stateDir = await tempDir('ic-state-');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    // An index git cannot read makes the snapshot fail.
    await writeFile(path.join(repo, '.git', 'index'), 'not an index');
    const session = await openSession({ repo, stateDir, background: true });
    await expect(session.ready).rejects.toMatchObject({ code: 'git' });
    await expect(session.create('root')).rejects.toMatchObject({ code: 'git' });
    expect(await readdir(path.join(stateDir, 'sessions'))).toEqual([]);
    await session.close();
  });
});
