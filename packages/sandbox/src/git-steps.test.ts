import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GitError } from './errors.js';
import { hostGit } from './git.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function repo(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ic-git-steps-'));
  dirs.push(dir);
  execFileSync('git', ['init', '-q', dir]);
  writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  writeFileSync(path.join(dir, 'b.txt'), 'b\n');
  return dir;
}

describe('git steps in lanes', () => {
  it('run side by side after the steps, each on its own index, their output in files', async () => {
    const dir = repo();
    const lane = (name: string, file: string) => {
      const env = { GIT_INDEX_FILE: path.join(dir, `.git/${name}.index`) };
      return [
        { args: ['update-index', '--add', file], env },
        { args: ['write-tree'], env, stdout: path.join(dir, `${name}.tree`) },
      ];
    };
    await hostGit([], { cwd: dir, steps: [{ args: ['status', '--short'], stdout: path.join(dir, '.git/status') }], lanes: [lane('one', 'a.txt'), lane('two', 'b.txt')] });
    const trees = ['one', 'two'].map((n) => readFileSync(path.join(dir, `${n}.tree`), 'utf8').trim());
    const names = trees.map((t) => execFileSync('git', ['ls-tree', '--name-only', t], { cwd: dir, encoding: 'utf8' }).trim());
    expect(names).toEqual(['a.txt', 'b.txt']);
  });

  it('fail with the failing lane\'s exit code, after the others ran', async () => {
    const dir = repo();
    const env = { GIT_INDEX_FILE: path.join(dir, '.git/ok.index') };
    const run = hostGit([], {
      cwd: dir,
      lanes: [
        [{ args: ['update-index', '--add', 'no-such-file'] }],
        [
          { args: ['update-index', '--add', 'a.txt'], env },
          { args: ['write-tree'], env, stdout: path.join(dir, 'ok.tree') },
        ],
      ],
    });
    await expect(run).rejects.toBeInstanceOf(GitError);
    await expect(run).rejects.toMatchObject({ message: expect.stringMatching(/no-such-file/) });
    expect(readFileSync(path.join(dir, 'ok.tree'), 'utf8').trim()).toMatch(/^[0-9a-f]{40}$/);
  });

  it('a step that may skip an empty stdin runs only when the file has something in it', async () => {
    const dir = repo();
    const empty = path.join(dir, 'empty');
    const some = path.join(dir, 'some');
    writeFileSync(empty, '');
    writeFileSync(some, 'a.txt\n');
    const env = { GIT_INDEX_FILE: path.join(dir, '.git/skip.index') };
    // Fails whenever it runs (no-such-file is not there), whatever its stdin.
    const failing = (stdin: string) => ({ args: ['update-index', '--add', 'no-such-file'], env, stdin, skipWhenStdinEmpty: true });
    await hostGit([], { cwd: dir, steps: [failing(empty), { args: ['write-tree'], env, stdout: path.join(dir, 'tree') }] });
    expect(readFileSync(path.join(dir, 'tree'), 'utf8').trim()).toMatch(/^[0-9a-f]{40}$/);
    await expect(hostGit([], { cwd: dir, steps: [failing(some)] })).rejects.toBeInstanceOf(GitError);
    // Run, it reads its stdin as usual.
    const adding = { args: ['update-index', '--add', '--stdin'], env, stdin: some, skipWhenStdinEmpty: true };
    await hostGit([], { cwd: dir, steps: [adding, { args: ['write-tree'], env, stdout: path.join(dir, 'tree2') }] });
    const tree = readFileSync(path.join(dir, 'tree2'), 'utf8').trim();
    expect(execFileSync('git', ['ls-tree', '--name-only', tree], { cwd: dir, encoding: 'utf8' }).trim()).toBe('a.txt');
  });
});
