import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { skipper, watchTree, type TreeWatch } from './tree-watch.js';

const dirs: string[] = [];
let w: TreeWatch | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Reads without touching the access time: on Linux an atime update is an attribute event, after
 * which chokidar ignores the file's events for 5 ms, and the test writes right after reading.
 */
function readQuietly(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOATIME);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** A tree and its "base": the files as they were, compared by content like the sandbox does. */
function tree(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'ic-watch-'));
  dirs.push(root);
  for (const [p, text] of Object.entries(files)) writeFileSync(join(root, p), text);
  const changed = async () => {
    const now = (readdirSync(root, { recursive: true, withFileTypes: true }))
      .filter((d) => d.isFile())
      .map((d) => relative(root, join(d.parentPath, d.name)));
    const added = now.filter((p) => !(p in files));
    const edited = Object.entries(files)
      .filter(([p, text]) => {
        try {
          return readQuietly(join(root, p)) !== text;
        } catch {
          return true;
        }
      })
      .map(([p]) => p);
    return [...edited, ...added];
  };
  return { root, changed };
}

describe('watching the working tree', () => {
  it('reports the edited files as they change, and again when an edit is undone', async () => {
    const { root, changed } = tree({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const lists: string[][] = [];
    let next: ((paths: string[]) => void) | undefined;
    const seen = (match: (paths: string[]) => boolean) =>
      new Promise<void>((resolve) => {
        if (lists.length > 0 && match(lists.at(-1)!)) return resolve();
        next = (paths) => match(paths) && resolve();
      });
    w = watchTree({
      root,
      changed,
      settleMs: 0,
      onChange: (paths) => {
        lists.push(paths);
        next?.(paths);
      },
      onError: (m) => {
        throw new Error(m);
      },
    });
    await w.ready;
    await seen((p) => p.length === 0);
    writeFileSync(join(root, 'b.txt'), 'B\n');
    await seen((p) => p.join() === 'b.txt');
    writeFileSync(join(root, 'a.txt'), 'A\n');
    await seen((p) => p.join() === 'a.txt,b.txt');
    writeFileSync(join(root, 'b.txt'), 'b\n');
    await seen((p) => p.join() === 'a.txt');
    // A file in a directory made after the watch began.
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'new.ts'), 'export {};\n');
    await seen((p) => p.join() === 'a.txt,src/new.ts');
    // Each list is told once, in order: no repeats for events that change nothing.
    expect(lists).toEqual([[], ['b.txt'], ['a.txt', 'b.txt'], ['a.txt'], ['a.txt', 'src/new.ts']]);
  });

  it('asks again on request (after the base moved), coalescing calls that overlap', async () => {
    const { root } = tree({ 'a.txt': 'a\n' });
    let answer = ['a.txt'];
    let calls = 0;
    const heard: string[][] = [];
    w = watchTree({
      root,
      changed: async () => {
        calls++;
        return answer;
      },
      onChange: (p) => heard.push(p),
      onError: () => undefined,
    });
    await w.ready;
    answer = [];
    await Promise.all([w.recheck(), w.recheck(), w.recheck()]);
    expect(heard).toEqual([['a.txt'], []]);
    expect(calls).toBeLessThanOrEqual(4);
  });

  it('leaves git, our own state, dependency trees and the given directories alone', () => {
    const root = '/r';
    const skip = skipper(root, ['dist', 'vendor/big']);
    expect(['/r/.git/index', '/r/.infinity/state.db', '/r/node_modules/x/y.js', '/r/pkg/node_modules/z', '/r/dist/a.js', '/r/vendor/big/c'].map(skip)).toEqual([
      true, true, true, true, true, true,
    ]);
    expect(['/r/src/a.ts', '/r/distance.ts', '/r/vendor/small.ts', '/r'].map(skip)).toEqual([false, false, false, false]);
  });
});
