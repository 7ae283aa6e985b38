import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { SandboxError, SandboxPathError, type Sandbox } from '../index.js';
import type { SuiteContext } from './backend-suite.js';
import { git, hashTree, lines, makeRepo, tempDir, writeFiles } from './fixtures.js';

export function registerIsolationTests(s: SuiteContext): void {
  it('snapshots tracked edits and untracked files but not ignored ones, without touching the repo', async () => {
    const repo = await makeRepo({ 'a.txt': 'committed\n', '.gitignore': 'ignored.log\n', 'staged.txt': 'v1\n' });
    await writeFiles(repo, { 'a.txt': 'edited, not staged\n', 'new.txt': 'untracked\n', 'ignored.log': 'noise\n' });
    await writeFile(path.join(repo, 'staged.txt'), 'v2 staged\n');
    await git(repo, 'add', 'staged.txt');
    await writeFile(path.join(repo, 'staged.txt'), 'v3 in the tree\n');
    const before = await hashTree(repo);
    const head = await git(repo, 'rev-parse', 'HEAD');

    const session = await s.open(repo);
    const sb = await session.create('root');

    expect(await sb.readText('a.txt')).toBe('edited, not staged\n');
    expect(await sb.readText('new.txt')).toBe('untracked\n');
    expect(await sb.readText('staged.txt')).toBe('v3 in the tree\n');
    expect(await sb.exists('ignored.log')).toBe(false);
    expect(session.snapshot.parent).toBe(head);
    expect(await hashTree(repo)).toEqual(before);
    expect(await git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(await git(repo, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main');
  });

  it('supports read, write, create, delete, list, stat and rename on the merged view', async () => {
    const repo = await makeRepo({ 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'b\n', 'README.md': '# r\n' });
    const session = await s.open(repo);
    const sb = await session.create();

    await sb.writeFile('src/a.ts', 'export const a = 2;\n');
    await sb.writeFile('deep/new/dir/c.ts', 'c\n');
    await sb.writeFile('run.sh', '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await sb.remove('src/b.ts');
    await sb.rename('deep', 'moved');

    expect(await sb.readText('src/a.ts')).toBe('export const a = 2;\n');
    expect(await sb.readText('moved/new/dir/c.ts')).toBe('c\n');
    expect(await sb.exists('src/b.ts')).toBe(false);
    expect(await sb.exists('deep')).toBe(false);
    expect((await sb.stat('run.sh')).mode & 0o111).toBe(0o111);
    expect((await sb.stat('moved')).type).toBe('dir');
    expect((await sb.list('src')).map((e) => e.name)).toEqual(['a.ts']);
    const all = (await sb.list('', { recursive: true })).map((e) => e.path);
    expect(all).toEqual(expect.arrayContaining(['README.md', 'moved/new/dir/c.ts', 'run.sh', 'src/a.ts']));
    expect(all.some((p) => p.startsWith('.git/'))).toBe(false);
    await expect(sb.readFile('src/b.ts')).rejects.toMatchObject({ code: 'not-found' });
    await expect(sb.remove('moved')).rejects.toBeInstanceOf(SandboxError);
    expect(await readFile(path.join(repo, 'src/a.ts'), 'utf8')).toBe('export const a = 1;\n');
  });

  it('refuses paths that leave the repository, including through symlinks', async () => {
    const outside = await tempDir('ic-outside-');
    await writeFile(path.join(outside, 'secret.txt'), 'secret\n');
    const repo = await makeRepo({ 'in.txt': 'inside\n', 'out-link': { symlink: outside } });
    const session = await s.open(repo);
    const sb = await session.create();

    await expect(sb.readFile('../escape.txt')).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.writeFile(path.join(outside, 'x.txt'), 'x')).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.readFile('out-link/secret.txt')).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.writeFile('out-link/new.txt', 'x')).rejects.toBeInstanceOf(SandboxPathError);
    // An absolute path inside the repository means the sandbox's copy of it, never the user's.
    await sb.writeFile(path.join(repo, 'in.txt'), 'changed in sandbox\n');
    expect(await sb.readText('in.txt')).toBe('changed in sandbox\n');
    expect(await readFile(path.join(repo, 'in.txt'), 'utf8')).toBe('inside\n');
  });

  it('isolates parent, child and siblings, and never writes the user tree before apply', async () => {
    const repo = await makeRepo({ 'shared.txt': lines(5), 'dir/keep.txt': 'keep\n' });
    const before = await hashTree(repo);
    const session = await s.open(repo);
    const parent = await session.create('parent');
    await parent.writeFile('shared.txt', 'parent before spawn\n');
    await parent.writeFile('parent-new.txt', 'p\n');

    const child = await session.create('child', parent);
    const sibling = await session.create('sibling', parent);
    expect(await child.readText('shared.txt')).toBe('parent before spawn\n');
    expect(await child.readText('parent-new.txt')).toBe('p\n');

    await parent.writeFile('shared.txt', 'parent after spawn\n');
    await parent.writeFile('parent-late.txt', 'late\n');
    expect(await child.readText('shared.txt')).toBe('parent before spawn\n');
    expect(await child.exists('parent-late.txt')).toBe(false);

    await child.writeFile('child-only.txt', 'c\n');
    await child.remove('dir/keep.txt');
    await sibling.writeFile('sibling-only.txt', 's\n');
    expect(await parent.exists('child-only.txt')).toBe(false);
    expect(await parent.readText('dir/keep.txt')).toBe('keep\n');
    expect(await sibling.exists('child-only.txt')).toBe(false);
    expect(await sibling.readText('dir/keep.txt')).toBe('keep\n');
    expect(await child.exists('sibling-only.txt')).toBe(false);

    expect(await hashTree(repo)).toEqual(before);
    const result = await child.squashInto();
    expect(result).toMatchObject({ clean: true, conflicts: [] });
    expect(await parent.readText('child-only.txt')).toBe('c\n');
    expect(await parent.exists('dir/keep.txt')).toBe(false);
    expect(await hashTree(repo)).toEqual(before);

    await parent.applyToWorkingTree();
    expect(await readFile(path.join(repo, 'child-only.txt'), 'utf8')).toBe('c\n');
    expect(await readFile(path.join(repo, 'shared.txt'), 'utf8')).toBe('parent after spawn\n');
  });

  it('works with stacks 10 deep, each level diffing only its own change', async () => {
    const repo = await makeRepo({ 'base.txt': 'base\n' });
    const session = await s.open(repo);
    const chain: Sandbox[] = [await session.create('level-0')];
    await chain[0].writeFile('level-0.txt', '0\n');
    for (let i = 1; i < 10; i++) {
      const next = await session.create(`level-${i}`, chain[i - 1]);
      await next.writeFile(`level-${i}.txt`, `${i}\n`);
      chain.push(next);
    }
    const deepest = chain[9];
    for (let i = 0; i < 10; i++) expect(await deepest.readText(`level-${i}.txt`)).toBe(`${i}\n`);
    for (let i = 0; i < 9; i++) expect(await chain[i].exists(`level-${i + 1}.txt`)).toBe(false);
    for (let i = 0; i < 10; i++) {
      expect((await chain[i].diff()).files.map((f) => f.path)).toEqual([`level-${i}.txt`]);
    }
    const all = await deepest.diff({ since: 'snapshot' });
    expect(all.files.map((f) => f.path).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `level-${i}.txt`).sort());
  });

  it('runs 20 sibling sandboxes on one parent concurrently', async () => {
    const repo = await makeRepo({ 'base.txt': 'base\n' });
    const session = await s.open(repo);
    const parent = await session.create('parent');
    await parent.writeFile('from-parent.txt', 'p\n');
    const kids = await Promise.all(Array.from({ length: 20 }, (_, i) => session.create(`kid-${i}`, parent)));
    const results = await Promise.all(
      kids.map(async (kid, i) => {
        const run = await kid.run(`cat from-parent.txt && echo ${i} > kid-${i}.txt && ls`);
        return { run, diff: await kid.diff() };
      }),
    );
    results.forEach(({ run, diff }, i) => {
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain('p\n');
      expect(run.stdout).toContain(`kid-${i}.txt`);
      expect(run.stdout).not.toMatch(new RegExp(`kid-(?!${i}\\.txt)\\d+\\.txt`));
      expect(diff.files.map((f) => f.path)).toEqual([`kid-${i}.txt`]);
    });
    expect((await parent.list()).map((e) => e.name).filter((n) => n.startsWith('kid-'))).toEqual([]);
  });

  it('discard removes the sandbox and stops further use, leaving its children working', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const parent = await session.create('parent');
    await parent.writeFile('p.txt', 'p\n');
    const child = await session.create('child', parent);
    await parent.discard();
    await expect(parent.readFile('a.txt')).rejects.toMatchObject({ code: 'discarded' });
    expect(await child.readText('p.txt')).toBe('p\n');
    await child.writeFile('c.txt', 'c\n');
    expect((await child.diff()).files.map((f) => f.path)).toEqual(['c.txt']);
    expect(session.get('parent')).toBeUndefined();
    await expect(child.squashInto()).rejects.toMatchObject({ code: 'discarded' });
  });
}
