import { afterEach, describe, expect, it } from 'vitest';
import { applyDirect } from './apply-direct.js';
import { openSession, patchFiles, selectHunks, type Sandbox, type SandboxDiff, type SandboxSession } from './index.js';
import { cleanupTempDirs, lines, makeRepo, tempDir, viewTree } from './test-support/fixtures.js';
import { ViewFs } from './view-fs.js';

const open: SandboxSession[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
  await cleanupTempDirs();
});

/** A parent, and a child spawned from it, in a fresh session over `files`. */
async function family(files: Record<string, string>): Promise<{ session: SandboxSession; parent: Sandbox; child: Sandbox }> {
  const session = await openSession({ repo: await makeRepo(files), stateDir: await tempDir('ic-state-') });
  open.push(session);
  const parent = await session.create('parent');
  const child = await session.create('child', parent);
  return { session, parent, child };
}

/** applyDirect into `target`, through the same view its file operations use. */
function direct(session: SandboxSession, target: Sandbox, diff: SandboxDiff) {
  const fs = new ViewFs(() => target.handle.viewRoot(), [session.repo.root, target.handle.commandRoot]);
  return applyDirect(session.ctx, fs, diff);
}

// A child's report is merged into its parent without git when the parent still has every file as
// the child found it: the new versions are written as they are (what a 3-way apply would do).
describe('applying a diff directly', () => {
  it("writes a child's edits and new files into a parent that left them alone", async () => {
    const { session, parent, child } = await family({ 'a.txt': lines(20), 'src/b.js': 'export const b = 1;\n', 'other.txt': 'x\n' });
    await parent.writeFile('other.txt', 'the parent edits another file\n');
    await child.writeFile('a.txt', lines(20).replace('line 7\n', 'line seven\n'));
    await child.writeFile('src/b.js', 'export const b = 2;\n');
    await child.writeFile('src/deep/new.txt', 'new\n');
    expect((await child.run('printf "#!/bin/sh\\n" > run.sh && chmod +x run.sh')).exitCode).toBe(0);
    const diff = await child.diff();

    const result = await direct(session, parent, diff);
    expect(result).toEqual({ clean: true, conflicts: [], files: diff.files.map((f) => f.path) });
    const tree = await viewTree(parent);
    const expected = await viewTree(child);
    expected.set('other.txt', tree.get('other.txt')!);
    expect(tree).toEqual(expected);
    expect(await parent.readText('other.txt')).toBe('the parent edits another file\n');
    expect((await parent.stat('run.sh')).mode & 0o777).toBe(0o755);
    expect((await parent.stat('src/deep/new.txt')).mode & 0o777).toBe(0o644);
    // The parent's own diff shows the merged change like any other.
    expect((await parent.diff()).files.map((f) => f.path).sort()).toEqual(['a.txt', 'other.txt', 'run.sh', 'src/b.js', 'src/deep/new.txt']);
  });

  it('leaves to git, writing nothing, a file the parent changed since the spawn (the merge still happens)', async () => {
    const { session, parent, child } = await family({ 'a.txt': lines(20), 'b.txt': 'b\n' });
    await child.writeFile('b.txt', 'B\n');
    await child.writeFile('a.txt', lines(20).replace('line 3\n', 'line three\n'));
    await parent.writeFile('a.txt', lines(20).replace('line 17\n', 'line seventeen\n'));
    const diff = await child.diff();
    expect(await direct(session, parent, diff)).toBeUndefined();
    expect(await parent.readText('b.txt')).toBe('b\n');

    expect(await child.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    expect(await parent.readText('a.txt')).toBe(lines(20).replace('line 3\n', 'line three\n').replace('line 17\n', 'line seventeen\n'));
    expect(await parent.readText('b.txt')).toBe('B\n');
  });

  it('leaves to git a new file the parent made at the same path meanwhile, and a path the parent made a link', async () => {
    const { session, parent, child } = await family({ 'a.txt': 'a\n' });
    await child.writeFile('new.txt', 'from the child\n');
    await parent.writeFile('new.txt', 'from the parent\n');
    expect(await direct(session, parent, await child.diff())).toBeUndefined();
    expect(await parent.readText('new.txt')).toBe('from the parent\n');

    // A link in the parent where the child edited a file: never written through.
    const linked = await family({ 'a.txt': 'a\n' });
    await linked.child.writeFile('a.txt', 'A\n');
    expect((await linked.parent.run('rm a.txt && ln -s /etc/passwd a.txt')).exitCode).toBe(0);
    expect(await direct(linked.session, linked.parent, await linked.child.diff())).toBeUndefined();
    expect((await linked.parent.stat('a.txt')).type).toBe('symlink');
  });

  it('leaves to git deletions, renames, mode changes, attributes and a selection of hunks', async () => {
    const cases: Array<[string, (child: Sandbox, parent: Sandbox) => Promise<void>]> = [
      ['a deletion', async (child) => void (await child.remove('a.txt'))],
      ['a rename', async (child) => void (await child.run('mv a.txt renamed.txt'))],
      ['a mode change', async (child) => void (await child.run('chmod +x a.txt'))],
      [
        'attributes in the parent',
        async (child, parent) => {
          await child.writeFile('a.txt', 'A\n');
          await parent.writeFile('.gitattributes', '*.txt text eol=crlf\n');
        },
      ],
      ['a change to attributes', async (child) => void (await child.writeFile('.gitattributes', '*.txt -text\n'))],
    ];
    for (const [what, change] of cases) {
      const { session, parent, child } = await family({ 'a.txt': 'a\n' });
      await change(child, parent);
      const before = await viewTree(parent);
      expect(await direct(session, parent, await child.diff()), what).toBeUndefined();
      expect(await viewTree(parent), what).toEqual(before);
    }

    const { session, parent, child } = await family({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await child.writeFile('a.txt', 'A\n');
    await child.writeFile('b.txt', 'B\n');
    const diff = await child.diff();
    const onlyA = selectHunks(diff, patchFiles(diff.patchBytes).find((f) => f.path === 'a.txt')!.decisionIds);
    expect(onlyA.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(await direct(session, parent, onlyA)).toBeUndefined();
    expect(await parent.readText('a.txt')).toBe('a\n');
  });
});
