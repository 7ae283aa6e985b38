import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePatch, selectHunks, toReviewDiff } from './git-patch.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

/** A real repository with a patch exercising every kind of change. */
function fixture() {
  const dir = mkdtempSync(join(tmpdir(), 'ic-patch-'));
  dirs.push(dir);
  git(dir, 'init', '-q');
  const long = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n') + '\n';
  writeFileSync(join(dir, 'two hunks.txt'), long);
  writeFileSync(join(dir, 'gone.txt'), 'bye\n');
  writeFileSync(join(dir, 'old-name.txt'), 'same content for a rename\n'.repeat(5));
  writeFileSync(join(dir, 'tool.sh'), 'echo hi\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'base');
  writeFileSync(join(dir, 'two hunks.txt'), long.replace('line 2\n', 'line two\n').replace('line 37\n', 'line thirty-seven\n'));
  unlinkSync(join(dir, 'gone.txt'));
  renameSync(join(dir, 'old-name.txt'), join(dir, 'new-name.txt'));
  chmodSync(join(dir, 'tool.sh'), 0o755);
  writeFileSync(join(dir, 'café.txt'), 'new file\n');
  git(dir, 'add', '-A');
  const patch = git(dir, 'diff', '--cached', '-M', '--binary');
  git(dir, 'reset', '-q', '--hard');
  return { dir, patch };
}

describe('git patches for review', () => {
  it('parses files, statuses and hunks, quoted and spaced paths included', () => {
    const { patch } = fixture();
    const review = toReviewDiff(patch);
    const byPath = Object.fromEntries(review.files.map((f) => [f.path, f]));
    expect(Object.keys(byPath).sort()).toEqual(['café.txt', 'gone.txt', 'new-name.txt', 'tool.sh', 'two hunks.txt']);
    expect(byPath['two hunks.txt']!.hunks).toHaveLength(2);
    expect(byPath['gone.txt']!.status).toBe('deleted');
    expect(byPath['new-name.txt']!.status).toBe('renamed');
    expect(byPath['café.txt']!.status).toBe('added');
    expect(byPath['tool.sh']!.hunks).toHaveLength(0);
    expect(parsePatch(patch)).toHaveLength(5);
  });

  it('keeps only accepted hunks, and the result applies with git', () => {
    const { dir, patch } = fixture();
    const kept = selectHunks(patch, new Set(['two hunks.txt#1', 'tool.sh#0', 'café.txt#0']));
    writeFileSync(join(dir, 'kept.patch'), kept);
    git(dir, 'apply', '--check', 'kept.patch');
    git(dir, 'apply', 'kept.patch');
    const text = readFileSync(join(dir, 'two hunks.txt'), 'utf8');
    expect(text).toContain('line thirty-seven');
    expect(text).toContain('line 2\n'); // the rejected hunk stayed out
    expect(readFileSync(join(dir, 'café.txt'), 'utf8')).toBe('new file\n');
    expect(readFileSync(join(dir, 'gone.txt'), 'utf8')).toBe('bye\n');
    expect(selectHunks(patch, new Set())).toBe('');
  });
});
