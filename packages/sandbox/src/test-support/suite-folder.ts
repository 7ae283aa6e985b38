import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { isWithin } from '../repo.js';
import type { SuiteContext } from './backend-suite.js';
import { hashTree, lines, tempDir, writeFiles } from './fixtures.js';
import { ATTRIBUTES, makeTraps, plantInSandbox } from './suite-trusted-git.js';

/** Work on a folder that is in no git repository (openSession's allowFolder). */
export function registerFolderTests(s: SuiteContext): void {
  it('works on a folder without a repository: a change made in the sandbox is diffed and applied 3-way, and nothing else appears in the folder', async () => {
    const folder = await tempDir('ic-folder-');
    await writeFiles(folder, {
      'a.txt': lines(10),
      'sub/b.txt': 'b\n',
      'node_modules/pkg/index.js': 'module.exports = 1;\n',
      // As the CLI keeps its own state there: ignored by its own rule.
      '.infinity/.gitignore': '*\n',
      '.infinity/state.db': 'db',
    });
    const before = await hashTree(folder);
    const stateDir = await tempDir('ic-state-');
    const session = await s.open(folder, { stateDir, allowFolder: true });
    expect(session.repo).toMatchObject({ root: folder, folder: true });
    // The snapshots' git dir is a private one in the state dir, and no commit or branch is claimed.
    expect(isWithin(stateDir, session.repo.gitDir)).toBe(true);
    expect(session.snapshot).toMatchObject({ parent: null });
    expect(session.snapshot.branch).toBeUndefined();

    const sb = await session.create();
    expect(await sb.readText('a.txt')).toBe(lines(10));
    expect(await sb.readText('node_modules/pkg/index.js')).toBe('module.exports = 1;\n');
    // No .git in the sandbox: git there finds no repository, as in the folder itself.
    expect(await sb.exists('.git')).toBe(false);
    const status = await sb.run('git status');
    expect(status.exitCode).not.toBe(0);
    expect(status.stderr).toMatch(/not a git repository/);

    await sb.writeFile('a.txt', lines(10).replace('line 3\n', 'line 3 agent\n'));
    expect(await sb.run('echo new > c.txt && rm sub/b.txt')).toMatchObject({ exitCode: 0 });
    expect(await hashTree(folder)).toEqual(before);

    const diff = await sb.workingTreeDiff();
    expect(diff.files.map((f) => [f.path, f.status])).toEqual([
      ['a.txt', 'modified'],
      ['c.txt', 'added'],
      ['sub/b.txt', 'deleted'],
    ]);
    expect(diff.omitted).toEqual([]);

    // The user's edit since the snapshot merges with the agent's.
    await writeFile(path.join(folder, 'a.txt'), lines(10).replace('line 9\n', 'line 9 user\n'));
    expect(await sb.applyToWorkingTree()).toMatchObject({ clean: true, conflicts: [] });
    expect(await readFile(path.join(folder, 'a.txt'), 'utf8')).toBe(lines(10).replace('line 3\n', 'line 3 agent\n').replace('line 9\n', 'line 9 user\n'));
    expect(await readFile(path.join(folder, 'c.txt'), 'utf8')).toBe('new\n');

    // Exactly the diff's changes: no .git, nothing else made, the rest byte for byte as it was.
    const after = await hashTree(folder);
    const expected = new Map(before);
    expected.delete('sub/b.txt');
    expected.delete('sub/');
    for (const changed of ['a.txt', 'c.txt']) expected.set(changed, after.get(changed)!);
    expect(after).toEqual(expected);
    expect((await readdir(folder)).sort()).toEqual(['.infinity', 'a.txt', 'c.txt', 'node_modules']);

    expect(await session.changedSinceSnapshot()).toEqual(['a.txt', 'c.txt', 'sub/b.txt']);
    expect(await session.changedSinceSnapshot({ except: sb })).toEqual(['a.txt']);

    // The next session, once this one and its objects are gone, snapshots the folder anew
    // (nothing of the first one's is needed) and works the same way.
    await session.close();
    const next = await s.open(folder, { stateDir, allowFolder: true });
    const sb2 = await next.create();
    expect(await sb2.readText('a.txt')).toBe(await readFile(path.join(folder, 'a.txt'), 'utf8'));
    expect(await sb2.exists('sub/b.txt')).toBe(false);
    // Ignored by its own rule: our state never reaches a snapshot or a sandbox.
    expect(await sb2.exists('.infinity')).toBe(false);
    await sb2.writeFile('c.txt', 'newer\n');
    expect(await sb2.applyToWorkingTree()).toMatchObject({ clean: true, files: ['c.txt'] });
    expect(await readFile(path.join(folder, 'c.txt'), 'utf8')).toBe('newer\n');
  });

  it('resumes a folder session kept at close, and a refresh brings in what the user changed since', async () => {
    const folder = await tempDir('ic-folder-');
    await writeFiles(folder, { 'a.txt': 'a\n' });
    const stateDir = await tempDir('ic-state-');
    const first = await s.open(folder, { stateDir, allowFolder: true });
    const sb = await first.create('root');
    await sb.writeFile('agent.txt', 'agent\n');
    await first.close({ keep: true });

    const resumed = await s.open(folder, { stateDir, allowFolder: true, resume: first.id });
    expect(resumed.repo.folder).toBe(true);
    const again = resumed.get('root')!;
    expect(await again.readText('agent.txt')).toBe('agent\n');

    await writeFile(path.join(folder, 'user.txt'), 'user\n');
    expect(await resumed.changedSinceSnapshot()).toEqual(['user.txt']);
    expect((await resumed.refreshBase()).files).toEqual(['user.txt']);
    expect(await again.readText('user.txt')).toBe('user\n');
    // The user's file is the base now, not the agent's change.
    expect((await again.workingTreeDiff()).files.map((f) => f.path)).toEqual(['agent.txt']);
    expect(await again.applyToWorkingTree()).toMatchObject({ clean: true });
    expect((await readdir(folder)).sort()).toEqual(['a.txt', 'agent.txt', 'user.txt']);
  });

  it("runs nothing a command planted in a git dir it made in the folder's sandbox, and that .git never reaches a diff or the folder", async () => {
    const traps = await makeTraps();
    const folder = await tempDir('ic-folder-');
    await writeFiles(folder, { 'a.txt': lines(10), 'b.txt': 'b\n' });
    const session = await s.open(folder, { allowFolder: true, containment: { writable: [traps.dir] } });
    const sb = await session.create();
    expect(await sb.run(`git init -q && ${plantInSandbox(traps, 'dot-git-hooks')}`)).toMatchObject({ exitCode: 0, stderr: '' });
    expect((await sb.run('git config filter.pwn.clean')).stdout.trim()).toBe(traps.program('clean'));
    await sb.writeFile('a.txt', lines(10).replace('line 9\n', 'line 9 agent\n'));

    const diff = await sb.diff({ since: 'snapshot' });
    expect(diff.files.map((f) => f.path)).toEqual(['.gitattributes', 'a.txt']);

    await writeFile(path.join(folder, 'b.txt'), 'b from the user\n');
    expect(await session.changedSinceSnapshot()).toEqual(['b.txt']);
    expect((await session.refreshBase()).files).toEqual(['b.txt']);
    expect(await sb.readText('b.txt')).toBe('b from the user\n');

    expect(await sb.applyToWorkingTree()).toMatchObject({ clean: true, conflicts: [] });
    expect(await readFile(path.join(folder, 'a.txt'), 'utf8')).toBe(lines(10).replace('line 9\n', 'line 9 agent\n'));
    expect(await readFile(path.join(folder, '.gitattributes'), 'utf8')).toBe(ATTRIBUTES);
    expect((await readdir(folder)).sort()).toEqual(['.gitattributes', 'a.txt', 'b.txt']);
    expect(await traps.fired()).toEqual([]);
  });
}
