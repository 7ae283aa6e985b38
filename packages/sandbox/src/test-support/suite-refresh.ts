import { execa } from 'execa';
import { readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { patchFiles, selectHunks, type Sandbox, type SandboxSession } from '../index.js';
import type { SuiteContext } from './backend-suite.js';
import { runAndKill } from './crash.js';
import { git, leftovers, lines, makeRepo, tempDir, viewTree } from './fixtures.js';
import {
  AGENT_SHARED,
  agentWork,
  CHILD_AGENT,
  REFRESH_REPO,
  ROOT_AGENT,
  SEE_USER_EDITS,
  SEEN_USER_EDITS,
  USER_FILES,
  USER_MOD,
  USER_SHARED,
  userEdits,
} from './refresh.js';
import { fingerprint, type SandboxPrint } from './stack.js';

/** What a sandbox must see of the user's edits after a refresh (shared.txt is the agent's). */
async function expectUserEditsSeen(sb: Sandbox): Promise<void> {
  expect(await sb.readText('mod.txt')).toBe(USER_MOD);
  expect(await sb.readText('added.txt')).toBe('added by the user\n');
  expect(await sb.readText('newdir/deep/n.txt')).toBe('n\n');
  expect(await sb.readText('swap/inner.txt')).toBe('inner\n');
  expect((await sb.stat('link')).type).toBe('symlink');
  expect(await sb.readText('link')).toBe('added by the user\n');
  expect((await sb.stat('script.sh')).mode & 0o111).toBe(0o111);
  expect(await sb.exists('del.txt')).toBe(false);
  expect(await sb.exists('dir')).toBe(false);
  expect(await sb.readText('shared.txt')).toBe(AGENT_SHARED);
  expect(await sb.run(SEE_USER_EDITS)).toMatchObject({ exitCode: 0, stdout: SEEN_USER_EDITS });
}

/** The session's storage for refreshes: one delta (layer and index, or index alone) at most. */
async function deltaFiles(session: SandboxSession): Promise<string[]> {
  return (await readdir(path.join(session.ctx.sessionDir, 'deltas')).catch(() => [] as string[])).sort();
}

export function registerRefreshTests(s: SuiteContext): void {
  it("refreshBase brings the user's edits, additions and deletions into a sandbox and its stacked child; their own changes win and are reported", async () => {
    const repo = await makeRepo(REFRESH_REPO);
    const session = await s.open(repo);
    const { root, child } = await agentWork(session);
    const before = session.snapshot;
    await userEdits(repo);
    expect(await session.changedSinceSnapshot()).toEqual(USER_FILES);
    // Not yet seen anywhere.
    expect(await child.readText('mod.txt')).toBe(REFRESH_REPO['mod.txt']);

    const refresh = await session.refreshBase();

    expect(refresh.files).toEqual(USER_FILES);
    expect(refresh.overridden).toEqual(['shared.txt']);
    expect(refresh.overriddenBy).toEqual({ root: ['shared.txt'], child: ['shared.txt'] });
    expect(refresh.snapshot).toEqual(session.snapshot);
    expect(session.snapshot.tree).not.toBe(before.tree);
    expect(session.snapshot.parent).toBe(before.parent);
    expect(await session.changedSinceSnapshot()).toEqual([]);

    for (const sb of [root, child]) await expectUserEditsSeen(sb);
    expect(await root.readText('agent.txt')).toBe(ROOT_AGENT);
    expect(await child.readText('agent.txt')).toBe(CHILD_AGENT);
    expect(await root.readText('root-late.txt')).toBe('written after child was spawned\n');
    expect(await child.exists('root-late.txt')).toBe(false);

    // Diffs are against the new snapshot: the user's edits are not the agents' changes.
    const rootDiff = await root.diff();
    expect(rootDiff.files.map((f) => f.path)).toEqual(['agent.txt', 'root-late.txt', 'root-new.txt', 'shared.txt']);
    expect((await root.diff({ since: 'snapshot' })).patch).toBe(rootDiff.patch);
    // Where the sandbox's own version won, its diff replaces the user's new version: reported above.
    expect(rootDiff.patch).toContain('-shared 17 user\n+shared 17\n');
    expect((await child.diff()).files.map((f) => f.path)).toEqual(['agent.txt', 'child.txt']);
    expect((await child.diff({ since: 'snapshot' })).files.map((f) => f.path)).toEqual([
      'agent.txt',
      'child.txt',
      'root-new.txt',
      'shared.txt',
    ]);
    // Inside the sandbox, git agrees with the user's: HEAD is theirs, their edits are uncommitted,
    // and the agents' work shows on top.
    expect((await root.run('git rev-parse HEAD')).stdout.trim()).toBe(session.snapshot.parent);
    const status = (await child.run('git status --porcelain')).stdout;
    const usersOwn = (await git(repo, 'status', '--porcelain')).split('\n');
    expect(usersOwn).toContain(' M mod.txt');
    expect(status.split('\n').filter(Boolean).sort()).toEqual([...new Set([...usersOwn, ' M agent.txt', '?? child.txt', '?? root-new.txt'])].sort());

    // A sandbox made after the refresh starts from the new snapshot.
    const late = await session.create('late');
    expect(await late.readText('shared.txt')).toBe(USER_SHARED);
    expect(await late.readText('mod.txt')).toBe(USER_MOD);
    expect(await late.exists('dir')).toBe(false);
    expect((await late.diff()).isEmpty).toBe(true);
    expect((await late.diff({ since: 'snapshot' })).isEmpty).toBe(true);
    const grand = await session.create('grand', child);
    expect(await grand.readText('agent.txt')).toBe(CHILD_AGENT);
    expect(await grand.readText('mod.txt')).toBe(USER_MOD);
    expect((await grand.diff()).isEmpty).toBe(true);
  });

  it("after a refresh the root's diff holds only the agents' work and applies to the working tree without undoing the user's edits", async () => {
    const repo = await makeRepo({ 'code.txt': lines(30, 'code'), 'notes.txt': lines(10, 'note'), 'readme.txt': 'readme\n', 'old.txt': 'old\n' });
    const session = await s.open(repo);
    const root = await session.create('root');
    const child = await session.create('child', root);
    await root.writeFile('code.txt', lines(30, 'code').replace('code 25\n', 'code 25 agent\n'));
    await child.writeFile('agent-new.txt', 'made by the child\n');
    await child.writeFile('notes.txt', lines(10, 'note').replace('note 2\n', 'note 2 child\n'));
    await writeFile(path.join(repo, 'readme.txt'), 'readme, edited by the user\n');
    await writeFile(path.join(repo, 'user.txt'), 'the user was here\n');
    await git(repo, 'rm', '-q', 'old.txt');

    const refresh = await session.refreshBase();
    expect(refresh).toMatchObject({ files: ['old.txt', 'readme.txt', 'user.txt'], overridden: [], overriddenBy: {} });

    // The child's work goes into root, where it merges with what root sees now.
    expect(await child.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    expect(await root.readText('user.txt')).toBe('the user was here\n');
    const diff = await root.diff({ since: 'snapshot' });
    expect(diff.files.map((f) => [f.path, f.status])).toEqual([
      ['agent-new.txt', 'added'],
      ['code.txt', 'modified'],
      ['notes.txt', 'modified'],
    ]);
    for (const user of ['user.txt', 'old.txt', 'readme']) expect(diff.patch).not.toContain(user);

    // The user keeps editing, in the files the agents edited too, while the diff is under review.
    await writeFile(path.join(repo, 'code.txt'), lines(30, 'code').replace('code 3\n', 'code 3 user\n'));
    await writeFile(path.join(repo, 'notes.txt'), lines(10, 'note').replace('note 9\n', 'note 9 user\n'));
    const indexBefore = await readFile(path.join(repo, '.git', 'index'));
    expect(await root.applyToWorkingTree(diff)).toMatchObject({ clean: true, conflicts: [] });

    expect(await readFile(path.join(repo, 'user.txt'), 'utf8')).toBe('the user was here\n');
    expect(await readFile(path.join(repo, 'readme.txt'), 'utf8')).toBe('readme, edited by the user\n');
    await expect(stat(path.join(repo, 'old.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(path.join(repo, 'agent-new.txt'), 'utf8')).toBe('made by the child\n');
    expect(await readFile(path.join(repo, 'code.txt'), 'utf8')).toBe(
      lines(30, 'code').replace('code 3\n', 'code 3 user\n').replace('code 25\n', 'code 25 agent\n'),
    );
    expect(await readFile(path.join(repo, 'notes.txt'), 'utf8')).toBe(
      lines(10, 'note').replace('note 2\n', 'note 2 child\n').replace('note 9\n', 'note 9 user\n'),
    );
    expect(await readFile(path.join(repo, '.git', 'index'))).toEqual(indexBefore);
  });

  it("a refresh brings in the user's edits to files whose names are not UTF-8 under their own names, and names them as git does", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const named = (rel: string) => Buffer.concat([Buffer.from(`${repo}/`), Buffer.from(rel, 'latin1')]);
    await writeFile(named('caf\xe9.txt'), 'old\n');
    await writeFile(named('both\xe9.txt'), 'old\n');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'latin-1 names');
    const session = await s.open(repo);
    const root = await session.create('root');
    const name = (rel: string) => `"$(printf '${rel}')"`;
    expect(await root.run(`echo agent > a.txt && echo agent > ${name('both\\351.txt')}`)).toMatchObject({ exitCode: 0 });
    await writeFile(named('caf\xe9.txt'), 'user edit\n');
    await writeFile(named('both\xe9.txt'), 'user edit\n');
    await writeFile(named('n\xe9w.txt'), 'user new\n');

    expect(await session.changedSinceSnapshot()).toEqual(['both\\351.txt', 'caf\\351.txt', 'n\\351w.txt']);
    expect(await session.refreshBase()).toMatchObject({
      files: ['both\\351.txt', 'caf\\351.txt', 'n\\351w.txt'],
      overridden: ['both\\351.txt'],
      overriddenBy: { [root.id]: ['both\\351.txt'] },
    });
    // ...and no file named with U+FFFD in their place appeared beside them.
    const seen = await root.run(`cat ${name('caf\\351.txt')} ${name('n\\351w.txt')} ${name('both\\351.txt')} && ls | grep -c ${name('\\357\\277\\275')}`);
    expect(seen).toMatchObject({ exitCode: 1, stdout: 'user edit\nuser new\nagent\n0\n' });
    // The diff holds the agent's work alone: its own version of both...txt is reported, not lost.
    const diff = await root.workingTreeDiff();
    expect(diff.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(diff.omitted.map((o) => [o.path, o.rule])).toEqual([['both\\351.txt', 'non-utf8-name']]);
  });

  it("changedSinceSnapshot({ except }) leaves out what the working tree got from that sandbox, until the user edits it", async () => {
    const repo = await makeRepo({ 'a.txt': lines(10), 'b.txt': 'b\n', 'gone.txt': 'g\n' });
    const session = await s.open(repo);
    const root = await session.create('root');
    await root.writeFile('a.txt', lines(10).replace('line 3\n', 'line 3 agent\n'));
    await root.writeFile('new.txt', 'new\n');
    await root.remove('gone.txt');
    expect(await root.applyToWorkingTree()).toMatchObject({ clean: true });
    await writeFile(path.join(repo, 'b.txt'), 'b by the user\n');

    expect(await session.changedSinceSnapshot()).toEqual(['a.txt', 'b.txt', 'gone.txt', 'new.txt']);
    expect(await session.changedSinceSnapshot({ except: root })).toEqual(['b.txt']);
    await writeFile(path.join(repo, 'new.txt'), 'new, then the user\n');
    expect(await session.changedSinceSnapshot({ except: root })).toEqual(['b.txt', 'new.txt']);
  });

  it("changedSinceSnapshot({ except }) leaves out a file the working tree got part of (the hunks a review accepted), until the user edits it", async () => {
    const repo = await makeRepo({ 'a.txt': lines(40), 'b.txt': 'b\n' });
    const session = await s.open(repo);
    const root = await session.create('root');
    await root.writeFile('a.txt', lines(40).replace('line 3\n', 'line 3 agent\n').replace('line 35\n', 'line 35 agent\n'));
    const whole = await root.workingTreeDiff();
    const [first] = patchFiles(whole.patchBytes)[0].decisionIds;
    expect(await root.applyToWorkingTree(selectHunks(whole, [first]))).toMatchObject({ clean: true });
    // a.txt is neither the snapshot's nor the sandbox's now: the part of it that was accepted.
    expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toBe(lines(40).replace('line 3\n', 'line 3 agent\n'));

    expect(await session.changedSinceSnapshot({ except: root })).toEqual([]);
    await writeFile(path.join(repo, 'a.txt'), lines(40).replace('line 3\n', 'line 3 agent\n').replace('line 20\n', 'line 20 user\n'));
    expect(await session.changedSinceSnapshot({ except: root })).toEqual(['a.txt']);
  });

  it('refreshes in a row: each brings what changed since the previous one, on one delta at most', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const session = await s.open(repo);
    const sb = await session.create('sb');
    await sb.writeFile('mine.txt', 'mine\n');
    const opened = session.snapshot;

    expect(await session.refreshBase()).toEqual({ files: [], overridden: [], overriddenBy: {}, snapshot: opened });
    expect(await deltaFiles(session)).toEqual([]);

    await writeFile(path.join(repo, 'a.txt'), 'a1\n');
    expect((await session.refreshBase()).files).toEqual(['a.txt']);
    const first = await deltaFiles(session);

    await writeFile(path.join(repo, 'a.txt'), 'a\n');
    await writeFile(path.join(repo, 'b.txt'), 'b2\n');
    await git(repo, 'rm', '-q', 'c.txt');
    expect((await session.refreshBase()).files).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect(await sb.readText('a.txt')).toBe('a\n');
    expect(await sb.readText('b.txt')).toBe('b2\n');
    expect(await sb.exists('c.txt')).toBe(false);
    expect((await sb.run('cat a.txt b.txt; test -e c.txt || echo no-c')).stdout).toBe('a\nb2\nno-c\n');
    expect((await sb.diff()).files.map((f) => f.path)).toEqual(['mine.txt']);
    // The previous delta is gone; the new one replaced it (overlay: a layer and its index).
    const second = await deltaFiles(session);
    expect(second).toHaveLength(first.length);
    expect(second).not.toEqual(first);
    expect(second).toHaveLength(s.mountsAtRepoPath ? 2 : 1);

    // Back to the snapshot taken at open: everything the refreshes brought is undone again.
    await writeFile(path.join(repo, 'b.txt'), 'b\n');
    await git(repo, 'checkout', '-q', 'HEAD', '--', 'c.txt');
    expect((await session.refreshBase()).files).toEqual(['b.txt', 'c.txt']);
    expect(session.snapshot.tree).toBe(opened.tree);
    const view = await viewTree(sb);
    expect(view.delete('mine.txt')).toBe(true);
    expect(view).toEqual(await viewTree(await session.create('fresh')));
    expect(await sb.readText('c.txt')).toBe('c\n');
    expect((await sb.diff()).files.map((f) => f.path)).toEqual(['mine.txt']);
  });

  it('a command running during a refresh finishes on the view it started with (overlay), or sees the new files (copy)', async () => {
    const repo = await makeRepo({ 'a.txt': 'before\n' });
    const fifoDir = await tempDir('ic-fifo-');
    // The command must reach the FIFO: the rest of the machine is read-only and /tmp private to it.
    const session = await s.open(repo, { containment: { writable: [fifoDir] } });
    const sb = await session.create('sb');
    const fifo = path.join(fifoDir, 'go');
    await execa('mkfifo', ['-m', '666', fifo]);
    // Blocks until the test writes to the FIFO, then shows what it sees.
    const cmd = await sb.exec(`read x < ${JSON.stringify(fifo)} && cat a.txt`);
    let out = '';
    cmd.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await writeFile(path.join(repo, 'a.txt'), 'after\n');

    if (s.mountsAtRepoPath) {
      // The refresh cannot remount while the command runs: cancelled, it changes nothing.
      const ac = new AbortController();
      const cancelled = session.refreshBase({ signal: ac.signal });
      ac.abort();
      await expect(cancelled).rejects.toMatchObject({ code: 'aborted', message: expect.stringMatching(/commands/) });
      expect(await sb.readText('a.txt')).toBe('before\n');
      expect(await deltaFiles(session)).toEqual([]);
      const refresh = session.refreshBase();
      await writeFile(fifo, 'go\n');
      expect(await cmd.done).toMatchObject({ exitCode: 0, cancelled: false });
      expect(out).toBe('before\n');
      expect((await refresh).files).toEqual(['a.txt']);
    } else {
      expect((await session.refreshBase()).files).toEqual(['a.txt']);
      await writeFile(fifo, 'go\n');
      expect(await cmd.done).toMatchObject({ exitCode: 0, cancelled: false });
      expect(out).toBe('after\n');
    }
    expect((await sb.run('cat a.txt')).stdout).toBe('after\n');
    expect((await sb.diff()).isEmpty).toBe(true);
  });

  it('a refreshed session resumes after a SIGKILL with the delta under every sandbox, and refreshes again', async () => {
    const repo = await makeRepo(REFRESH_REPO);
    const stateDir = await tempDir('ic-state-crash-');
    const expectFile = path.join(await tempDir('ic-expect-'), 'expected.json');
    const id = await runAndKill(repo, stateDir, s.backend, 'refresh', expectFile);
    const expected = JSON.parse(await readFile(expectFile, 'utf8')) as SandboxPrint[];

    const session = await s.open(repo, { stateDir, resume: id, collectStale: false });

    expect(await leftovers(stateDir, repo)).toEqual({ processes: [], mounts: [] });
    const record = JSON.parse(await readFile(path.join(session.ctx.sessionDir, 'session.json'), 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({ version: 3, refreshed: { number: 1, snapshot: session.snapshot } });
    expect(record.rebasing).toBeUndefined();
    expect(await fingerprint(session)).toEqual(expected);
    const [root, child] = [session.get('root')!, session.get('child')!];
    for (const sb of [root, child]) await expectUserEditsSeen(sb);
    expect((await child.diff()).files.map((f) => f.path)).toEqual(['agent.txt', 'child.txt']);

    // Edits after the resume: a second refresh replaces the first delta.
    await writeFile(path.join(repo, 'added.txt'), 'added, then edited\n');
    expect((await session.refreshBase()).files).toEqual(['added.txt']);
    expect(await child.readText('added.txt')).toBe('added, then edited\n');
    expect(await child.readText('mod.txt')).toBe(USER_MOD);
    expect((await child.diff()).files.map((f) => f.path)).toEqual(['agent.txt', 'child.txt']);
    expect((await deltaFiles(session)).every((f) => f.startsWith('r2'))).toBe(true);
    await session.close({ keep: true });
    const again = await s.open(repo, { stateDir, resume: id });
    expect(await again.get('child')!.readText('added.txt')).toBe('added, then edited\n');
    expect((await again.get('root')!.run('cat added.txt')).stdout).toBe('added, then edited\n');
  });

  it('a SIGKILL after a refresh switched the base but before it moved the sandboxes: the resume finishes the move', async () => {
    const repo = await makeRepo(REFRESH_REPO);
    const stateDir = await tempDir('ic-state-crash-');
    const id = await runAndKill(repo, stateDir, s.backend, 'refresh-interrupted');
    const pending = JSON.parse(await readFile(path.join(stateDir, 'sessions', id, 'session.json'), 'utf8')) as Record<string, unknown>;
    expect(pending).toMatchObject({ refreshed: { number: 1 }, rebasing: { from: { tree: expect.any(String) } } });

    const session = await s.open(repo, { stateDir, resume: id, collectStale: false });

    const record = JSON.parse(await readFile(path.join(session.ctx.sessionDir, 'session.json'), 'utf8')) as Record<string, unknown>;
    expect(record.rebasing).toBeUndefined();
    const [root, child] = [session.get('root')!, session.get('child')!];
    for (const sb of [root, child]) await expectUserEditsSeen(sb);
    expect((await root.diff()).files.map((f) => f.path)).toEqual(['agent.txt', 'root-late.txt', 'root-new.txt', 'shared.txt']);
    expect((await child.diff()).files.map((f) => f.path)).toEqual(['agent.txt', 'child.txt']);
    for (const sb of [root, child]) expect((await sb.run('git rev-parse HEAD')).stdout.trim()).toBe(session.snapshot.parent);
    expect(await readlink(path.join(repo, 'link'))).toBe('added.txt');
  });
}
