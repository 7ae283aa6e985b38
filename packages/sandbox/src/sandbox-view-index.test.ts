import { execa } from 'execa';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSession, type SandboxSession } from './index.js';
import { sandboxViewIndex } from './sandbox-view-index.js';
import { cleanupTempDirs, git, GIT_ENV, makeRepo, tempDir } from './test-support/fixtures.js';

const sessions: SandboxSession[] = [];
afterEach(async () => {
  while (sessions.length > 0) await sessions.pop()!.close();
  await cleanupTempDirs();
});

async function open(repo: string): Promise<SandboxSession> {
  const session = await openSession({ repo, stateDir: await tempDir('ic-state-') });
  sessions.push(session);
  return session;
}

/** Each entry of `index` with the stat data git keeps for it (`ls-files --debug`), by path. */
async function statData(repo: string, index: string): Promise<Map<string, string>> {
  const out = (await execa('git', ['ls-files', '-s', '--debug'], { cwd: repo, env: { ...GIT_ENV, GIT_INDEX_FILE: index } })).stdout;
  const entries = new Map<string, string>();
  let current = '';
  for (const line of out.split('\n')) {
    if (line.startsWith('  ')) entries.set(current, `${entries.get(current) ?? ''}${line.trim()}\n`);
    else current = line;
  }
  return entries;
}

describe('the view index', () => {
  it("is what a one-way merge of the base index to the user's HEAD gives: the base's stat data only where the content is HEAD's", async () => {
    const repo = await makeRepo({
      'same.txt': 'same\n',
      'mod.txt': 'mod\n',
      'staged.txt': 'staged\n',
      'del.txt': 'del\n',
      'sub/deep.txt': 'deep\n',
      'to-dir': 'a file the user turns into a directory\n',
      'to-file/x.txt': 'a directory the user turns into a file\n',
    });
    await writeFile(path.join(repo, 'mod.txt'), 'modified\n');
    await writeFile(path.join(repo, 'staged.txt'), 'staged, changed\n');
    await git(repo, 'add', 'staged.txt');
    await writeFile(path.join(repo, 'new.txt'), 'untracked\n');
    await rm(path.join(repo, 'del.txt'));
    await rm(path.join(repo, 'to-dir'));
    await mkdir(path.join(repo, 'to-dir'));
    await writeFile(path.join(repo, 'to-dir', 'inner.txt'), 'inner\n');
    await rm(path.join(repo, 'to-file'), { recursive: true });
    await writeFile(path.join(repo, 'to-file'), 'now a file\n');
    const session = await open(repo);

    const file = await sandboxViewIndex(session.ctx);
    const merged = path.join(await tempDir('ic-merge-'), 'index');
    await copyFile(session.ctx.baseIndex, merged);
    // -i: the merge alone, without checking the user's working tree.
    await execa('git', ['read-tree', '-m', '-i', 'HEAD'], { cwd: repo, env: { ...GIT_ENV, GIT_INDEX_FILE: merged } });

    const view = await statData(repo, file);
    const base = await statData(repo, session.ctx.baseIndex);
    expect(view).toEqual(await statData(repo, merged));
    // HEAD's entries, every one: not the user's index (staged.txt), not their working tree.
    const entries = (await execa('git', ['ls-files', '-s'], { cwd: repo, env: { ...GIT_ENV, GIT_INDEX_FILE: file } })).stdout;
    expect(entries.replace(/ 0\t/g, '\t')).toBe((await git(repo, 'ls-tree', '-r', 'HEAD')).replace(/ blob /g, ' '));
    // Unchanged since HEAD: the base's stat data, so git status need not read them.
    const key = (p: string): string => [...view.keys()].find((k) => k.endsWith(`\t${p}`))!;
    for (const p of ['same.txt', 'sub/deep.txt']) {
      expect(view.get(key(p))).toBe(base.get(key(p)));
      expect(view.get(key(p))).not.toMatch(/mtime: 0:0/);
    }
    // Changed since HEAD (or gone from the base): none, so git status reads them.
    for (const p of ['mod.txt', 'staged.txt', 'del.txt', 'to-dir', 'to-file/x.txt']) expect(view.get(key(p))).toMatch(/mtime: 0:0\n[\s\S]*size: 0\b/);
  });

  it('is the base index itself when the working tree matches HEAD, and empty when HEAD is unborn', async () => {
    const clean = await open(await makeRepo({ 'a.txt': 'a\n' }));
    expect(await sandboxViewIndex(clean.ctx)).toBe(clean.ctx.baseIndex);

    const unbornRepo = await tempDir('ic-repo-');
    await git(unbornRepo, 'init', '-q', '-b', 'main');
    await writeFile(path.join(unbornRepo, 'a.txt'), 'a\n');
    const unborn = await open(unbornRepo);
    const file = await sandboxViewIndex(unborn.ctx);
    expect(file).not.toBe(unborn.ctx.baseIndex);
    expect((await execa('git', ['ls-files', '-s'], { cwd: unbornRepo, env: { ...GIT_ENV, GIT_INDEX_FILE: file } })).stdout).toBe('');
  });
});
