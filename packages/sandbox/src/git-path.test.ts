// Git's quoting of paths, undone on bytes: checked against the names git itself quoted in a real
// repository (names with a tab, a newline, a quote, a backslash, UTF-8 and a Latin-1 byte).
import { execFileSync } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readHeaderPath, splitPathPair, unquoteGitPath, unquoteGitPathBytes } from './git-path.js';
import { cleanupTempDirs, GIT_ENV, tempDir } from './test-support/fixtures.js';

afterAll(cleanupTempDirs);

const NAMES = [Buffer.from('tab\there'), Buffer.from('new\nline'), Buffer.from('q"uote'), Buffer.from('back\\slash'), Buffer.from('café'), Buffer.from('caf\xe9 latin1', 'latin1'), Buffer.from('plain name')];

const git = (cwd: string, ...args: string[]): Buffer => execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV } });

describe('git path quoting', () => {
  it('reads back every name git quoted in a patch: diff --git, ---/+++ and rename lines', async () => {
    const repo = await tempDir('ic-git-path-');
    const at = (name: Buffer) => Buffer.concat([Buffer.from(`${repo}${path.sep}`), name]);
    git(repo, 'init', '-q');
    NAMES.forEach((name, i) => writeFileSync(at(name), `file ${i}\n`.repeat(5)));
    git(repo, 'add', '-A');
    const lines = (patch: Buffer, prefix: string) =>
      patch
        .toString('latin1')
        .split('\n')
        .filter((l) => l.startsWith(prefix))
        .map((l) => Buffer.from(l.slice(prefix.length), 'latin1'));
    const added = git(repo, 'diff', '--cached', '-p', '--no-color');
    // Git lists paths sorted by their bytes.
    const sorted = [...NAMES].sort(Buffer.compare);
    expect(lines(added, '+++ ').map((rest) => readHeaderPath(rest)!.subarray(2))).toEqual(sorted);
    const pairs = lines(added, 'diff --git ').map((rest) => splitPathPair(rest)!);
    expect(pairs.map((p) => p.a.subarray(2))).toEqual(sorted);
    expect(pairs.map((p) => p.b.subarray(2))).toEqual(sorted);

    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'names');
    for (const name of NAMES) renameSync(at(name), at(Buffer.concat([Buffer.from('moved '), name])));
    git(repo, 'add', '-A');
    const renamed = git(repo, 'diff', '--cached', '-M', '-p', '--no-color');
    expect(lines(renamed, 'rename from ').map((rest) => readHeaderPath(rest))).toEqual(sorted);
    expect(lines(renamed, 'rename to ').map((rest) => readHeaderPath(rest))).toEqual(sorted.map((n) => Buffer.concat([Buffer.from('moved '), n])));
  });

  it('decodes octal and single-letter escapes to bytes, and leaves plain paths alone', () => {
    expect(unquoteGitPathBytes(Buffer.from('"caf\\303\\251.txt"'))).toEqual(Buffer.from('café.txt'));
    expect(unquoteGitPathBytes(Buffer.from('"caf\\351"'))).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(unquoteGitPathBytes(Buffer.from('"a\\tb\\nc\\"d\\\\e\\a\\b\\f\\r\\v"'))).toEqual(Buffer.from('a\tb\nc"d\\e\x07\b\f\r\v'));
    expect(unquoteGitPathBytes(Buffer.from('plain "name"x'))).toEqual(Buffer.from('plain "name"x'));
    expect(unquoteGitPath('"caf\\303\\251"')).toBe('café');
    expect(unquoteGitPath('dir/file name')).toBe('dir/file name');
  });

  it('splits the two paths of a diff --git line, even with spaces, or says it cannot', () => {
    const split = (s: string) => {
      const r = splitPathPair(Buffer.from(s));
      return r && [r.a.toString(), r.b.toString()];
    };
    expect(split('a/x y b/x y')).toEqual(['a/x y', 'b/x y']);
    expect(split('a/b b/c b/b b/c')).toEqual(['a/b b/c', 'b/b b/c']);
    expect(split('"a/q\\"x" "b/q\\"x"')).toEqual(['a/q"x', 'b/q"x']);
    expect(split('a/plain "b/caf\\303\\251"')).toEqual(['a/plain', 'b/café']);
    expect(split('"a/caf\\303\\251" b/plain')).toEqual(['a/café', 'b/plain']);
    // A rename with spaces, unquoted: ambiguous here (its rename lines name the paths).
    expect(split('a/one x b/two y')).toBeNull();
    expect(split('"a/never closed')).toBeNull();
  });

  it('drops the tab git writes after a plain path with a space on ---/+++ lines', () => {
    expect(readHeaderPath(Buffer.from('a/two words.txt\t'))).toEqual(Buffer.from('a/two words.txt'));
    expect(readHeaderPath(Buffer.from('"a/tab\\t"'))).toEqual(Buffer.from('a/tab\t'));
    expect(readHeaderPath(Buffer.from('"a/open'))).toBeNull();
  });
});
