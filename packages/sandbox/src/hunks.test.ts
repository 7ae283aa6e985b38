// Hunk selection on a real sandbox diff, byte for byte: each selection is applied with plain
// `git apply` (no 3-way fallback, offsets reported) to a clean checkout of the base, and through
// the sandbox into a parent sandbox and the working tree. The files cover what a patch can hold:
// several hunks, Latin-1 and CRLF text, no final newline, a path git quotes, new, deleted, empty,
// binary, renamed (with and without edits), mode and type changes.
import { execFile } from 'node:child_process';
import { readFile, readlink, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedSinceReview, openSession, patchFiles, PatchFormatError, selectHunks, UnknownHunkError, type SandboxDiff, type SandboxSession } from './index.js';
import { binary, cleanupTempDirs, git, GIT_ENV, makeRepo, tempDir } from './test-support/fixtures.js';

const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');
const numbered = (n: number, line: (i: number) => string): string[] => Array.from({ length: n }, (_, i) => line(i + 1));
const replace = (lines: readonly string[], at: number, by: string): string[] => lines.map((l, i) => (i + 1 === at ? by : l));

// menu.txt: Latin-1; its first edit turns one line into two, so the second hunk's new side moves.
const MENU = numbered(40, (i) => `plat ${i} caf\xe9 cr\xe8me br\xfbl\xe9e`);
const MENU_1 = replace(MENU, 4, 'plat 4 \xe9t\xe9\nplat 4 bis d\xe9j\xe0');
const MENU_2 = replace(MENU, 37, 'plat 37 modifi\xe9');
const menu = (lines: string[]) => latin1(lines.join('\n') + '\n');
// crlf.txt: every line ends with CR LF.
const CRLF = numbered(40, (i) => `row ${i}`);
const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n') + '\r\n');
const CRLF_1 = replace(CRLF, 3, 'row three');
const CRLF_2 = replace(CRLF, 36, 'row thirty-six');
// tail.txt: no newline at the end, before or after; its second hunk carries both markers.
const TAIL = numbered(30, (i) => `tail ${i}`);
const tail = (lines: string[]) => Buffer.from(lines.join('\n'));
const TAIL_1 = replace(TAIL, 2, 'tail two');
const TAIL_2 = replace(TAIL, 30, 'the end');
// A path git writes quoted: a double quote and a non-ASCII letter (and a space).
const QUOTED = 'qu"oted é.txt';
const WORDS = numbered(40, (i) => `word ${i}`);
const words = (lines: string[]) => Buffer.from(lines.join('\n') + '\n');
const WORDS_1 = replace(WORDS, 2, 'word two');
const WORDS_2 = replace(WORDS, 39, 'word thirty-nine');
const RENAMED = numbered(20, (i) => `moved ${i}`);
const RENAMED_EDIT = replace(RENAMED, 10, 'moved ten');

const BASE = {
  'menu.txt': menu(MENU),
  'crlf.txt': crlf(CRLF),
  'tail.txt': tail(TAIL),
  [QUOTED]: words(WORDS),
  'gone.txt': 'bye\n',
  'logo.bin': binary(1),
  'old name.txt': RENAMED.join('\n') + '\n',
  'r1.txt': 'a pure rename\n'.repeat(4),
  'tool.sh': 'echo hi\n',
  'link': 'a file that becomes a symlink\n',
};

/** The multi-hunk files: what each holds with only its first, or only its second, hunk. */
const TWO_HUNKS = {
  'menu.txt': { first: menu(MENU_1), second: menu(MENU_2) },
  'crlf.txt': { first: crlf(CRLF_1), second: crlf(CRLF_2) },
  'tail.txt': { first: tail(TAIL_1), second: tail(TAIL_2) },
  [QUOTED]: { first: words(WORDS_1), second: words(WORDS_2) },
};

let repo: string;
let session: SandboxSession;
let diff: SandboxDiff;

beforeAll(async () => {
  repo = await makeRepo(BASE);
  session = await openSession({ repo, stateDir: await tempDir('ic-hunks-state-') });
  const sb = await session.create('child');
  await sb.writeFile('menu.txt', menu(replace(MENU_1, 37, 'plat 37 modifi\xe9')));
  await sb.writeFile('crlf.txt', crlf(replace(CRLF_1, 36, 'row thirty-six')));
  await sb.writeFile('tail.txt', tail(replace(TAIL_1, 30, 'the end')));
  await sb.writeFile(QUOTED, words(replace(WORDS_1, 39, 'word thirty-nine')));
  await sb.writeFile('added.txt', latin1('caf\xe9\n'));
  await sb.writeFile('empty-new.txt', '');
  await sb.writeFile('logo.bin', binary(2));
  const moved = await sb.run("rm gone.txt link && ln -s menu.txt link && mv 'old name.txt' 'new name.txt' && mv r1.txt r2.txt && chmod +x tool.sh");
  expect(moved.stderr).toBe('');
  await sb.writeFile('new name.txt', RENAMED_EDIT.join('\n') + '\n');
  diff = await sb.workingTreeDiff();
});

afterAll(async () => {
  await session?.close();
  await cleanupTempDirs();
});

const run = promisify(execFile);

/** Applies `patch` with plain `git apply -v` to a fresh checkout of the base; returns the checkout and git's report. */
async function applyToBase(patch: Buffer): Promise<{ dir: string; report: string }> {
  const dir = await tempDir('ic-hunks-apply-');
  await git(dir, 'clone', '-q', repo, '.');
  const file = path.join(await tempDir('ic-hunks-patch-'), 'selected.patch');
  await writeFile(file, patch);
  const { stderr } = await run('git', ['apply', '-v', file], { cwd: dir, env: { ...process.env, ...GIT_ENV } });
  return { dir, report: stderr };
}

const idsOf = (d: SandboxDiff) => Object.fromEntries(patchFiles(d.patchBytes).map((f) => [f.path, f.decisionIds]));
/** The decision id of `p`'s hunk `i` (or of the whole file) in `d`. */
const idOf = (d: SandboxDiff, p: string, i = 0) => idsOf(d)[p][i];
const escaped = (p: string) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const read = (dir: string, p: string) => readFile(path.join(dir, p));

describe('the files and hunks of a diff', () => {
  it('lists every file with its status and decision ids; text is decoded only for showing', () => {
    const files = patchFiles(diff.patchBytes);
    expect(files.map((f) => f.path).sort()).toEqual(diff.files.map((f) => f.path).sort());
    const byPath = Object.fromEntries(files.map((f) => [f.path, f]));
    // A text hunk's id: its path, the line it starts on in the old file, a digest of its lines.
    for (const p of Object.keys(TWO_HUNKS)) {
      expect(byPath[p].decisionIds, p).toEqual([expect.stringMatching(new RegExp(`^${escaped(p)}#\\d+:[0-9a-f]{8}$`)), expect.any(String)]);
      expect(new Set(byPath[p].decisionIds).size, p).toBe(2);
    }
    expect(byPath['menu.txt'].hunks.map((h) => h.id)).toEqual([expect.stringMatching(/^menu\.txt#1:[0-9a-f]{8}$/), expect.stringMatching(/^menu\.txt#34:[0-9a-f]{8}$/)]);
    expect(byPath['menu.txt'].hunks[0]).toMatchObject({
      header: '@@ -1,7 +1,8 @@',
      lines: expect.arrayContaining(['-plat 4 caf\uFFFD cr\uFFFDme br\uFFFDl\uFFFDe', '+plat 4 \uFFFDt\uFFFD']),
    });
    expect(byPath['tail.txt'].hunks[1].lines).toEqual([' tail 27', ' tail 28', ' tail 29', '-tail 30', '\\ No newline at end of file', '+the end', '\\ No newline at end of file']);
    expect(byPath['crlf.txt'].hunks[0].lines).toContain('+row three\r');
    expect(byPath['new name.txt']).toMatchObject({ status: 'renamed', oldPath: 'old name.txt', decisionIds: [expect.stringMatching(/^new name\.txt#\d+:/)] });
    expect(byPath['new name.txt'].hunks).toHaveLength(1);
    // Decided whole, under `<path>#<digest of the whole change>`.
    const whole = (p: string): unknown[] => [expect.stringMatching(new RegExp(`^${escaped(p)}#[0-9a-f]{8}$`))];
    expect(byPath['r2.txt']).toMatchObject({ status: 'renamed', oldPath: 'r1.txt', hunks: [], decisionIds: whole('r2.txt') });
    expect(byPath['logo.bin']).toMatchObject({ status: 'modified', binary: true, hunks: [], decisionIds: whole('logo.bin') });
    expect(byPath['tool.sh']).toMatchObject({ status: 'modified', hunks: [], decisionIds: whole('tool.sh') });
    expect(byPath['empty-new.txt']).toMatchObject({ status: 'added', hunks: [], decisionIds: whole('empty-new.txt') });
    expect(byPath['added.txt']).toMatchObject({ status: 'added', decisionIds: [expect.stringMatching(/^added\.txt#0:/)] });
    expect(byPath['gone.txt']).toMatchObject({ status: 'deleted', decisionIds: [expect.stringMatching(/^gone\.txt#1:/)] });
    // A type change is two sections of the same path in the patch; half of it would not apply.
    expect(byPath.link).toMatchObject({ status: 'modified', hunks: [], decisionIds: whole('link') });
  });
});

describe('selecting hunks', () => {
  it('first hunks accepted, second rejected: the kept bytes verbatim, and git applies them without offset', async () => {
    const firsts = Object.keys(TWO_HUNKS).map((p) => idOf(diff, p, 0));
    const chosen = selectHunks(diff, firsts);
    // The kept hunks and their headers are the diff's own bytes: the diff's patch with lines cut out.
    const sections = patchFiles(chosen.patchBytes);
    expect(sections.map((f) => f.path).sort()).toEqual(Object.keys(TWO_HUNKS).sort());
    expect(isLineSubsequence(chosen.patchBytes, diff.patchBytes)).toBe(true);
    const { dir, report } = await applyToBase(chosen.patchBytes);
    expect(report).not.toMatch(/offset|fuzz/);
    for (const [p, want] of Object.entries(TWO_HUNKS)) expect((await read(dir, p)).equals(want.first), p).toBe(true);
    expect(await read(dir, 'gone.txt')).toEqual(Buffer.from('bye\n'));
    expect(chosen.files.map((f) => f.path).sort()).toEqual(Object.keys(TWO_HUNKS).sort());
    expect(chosen.files.find((f) => f.path === 'menu.txt')).toMatchObject({ additions: 2, deletions: 1 });
    expect(chosen.omitted).toBe(diff.omitted);
  });

  it("second hunks accepted, first rejected: the kept hunk's new-side start moves back, the rest of its @@ line stays", async () => {
    const chosen = selectHunks(diff, Object.keys(TWO_HUNKS).map((p) => idOf(diff, p, 1)));
    const menuHunk = patchFiles(chosen.patchBytes).find((f) => f.path === 'menu.txt')!.hunks[0];
    // The dropped first hunk added a line: +35 becomes +34. The function context git wrote after
    // the numbers (cut by git before the first non-ASCII byte) is copied as it was.
    expect(menuHunk.header).toBe('@@ -34,7 +34,7 @@ plat 33 caf');
    expect(diff.patchBytes.includes('\n@@ -34,7 +35,7 @@ plat 33 caf\n')).toBe(true);
    const { dir, report } = await applyToBase(chosen.patchBytes);
    expect(report).not.toMatch(/offset|fuzz/);
    for (const [p, want] of Object.entries(TWO_HUNKS)) expect((await read(dir, p)).equals(want.second), p).toBe(true);
  });

  it('files without text hunks, new, deleted, renamed and type-changed files are kept or dropped whole', async () => {
    const some = ['added.txt', 'gone.txt', 'logo.bin', 'r2.txt', 'tool.sh'].map((p) => idOf(diff, p));
    const rest = ['empty-new.txt', 'link', 'new name.txt'].map((p) => idOf(diff, p));
    const first = await applyToBase(selectHunks(diff, some).patchBytes);
    expect(await read(first.dir, 'added.txt')).toEqual(latin1('caf\xe9\n'));
    await expect(stat(path.join(first.dir, 'gone.txt'))).rejects.toThrow(/ENOENT/);
    expect(await read(first.dir, 'logo.bin')).toEqual(binary(2));
    expect(await read(first.dir, 'r2.txt')).toEqual(Buffer.from('a pure rename\n'.repeat(4)));
    await expect(stat(path.join(first.dir, 'r1.txt'))).rejects.toThrow(/ENOENT/);
    expect((await stat(path.join(first.dir, 'tool.sh'))).mode & 0o111).not.toBe(0);
    // ...and what was rejected is as it was.
    await expect(stat(path.join(first.dir, 'empty-new.txt'))).rejects.toThrow(/ENOENT/);
    expect(await read(first.dir, 'link')).toEqual(Buffer.from(BASE.link));
    expect(await read(first.dir, 'old name.txt')).toEqual(Buffer.from(BASE['old name.txt']));

    const second = await applyToBase(selectHunks(diff, rest).patchBytes);
    expect(await read(second.dir, 'empty-new.txt')).toEqual(Buffer.alloc(0));
    expect(await readlink(path.join(second.dir, 'link'))).toBe('menu.txt');
    expect(await read(second.dir, 'new name.txt')).toEqual(Buffer.from(RENAMED_EDIT.join('\n') + '\n'));
    await expect(stat(path.join(second.dir, 'old name.txt'))).rejects.toThrow(/ENOENT/);
    await expect(stat(path.join(second.dir, 'added.txt'))).rejects.toThrow(/ENOENT/);
    expect(await read(second.dir, 'gone.txt')).toEqual(Buffer.from('bye\n'));
    expect(await read(second.dir, 'logo.bin')).toEqual(binary(1));
  });

  it('everything accepted is the diff itself; nothing accepted is empty; an id the diff lacks is refused', () => {
    const all = Object.values(idsOf(diff)).flat();
    expect(selectHunks(diff, all)).toBe(diff);
    const none = selectHunks(diff, []);
    expect(none).toMatchObject({ isEmpty: true, files: [], patch: '', omitted: diff.omitted });
    expect(none.patchBytes.length).toBe(0);
    expect(() => selectHunks(diff, [idOf(diff, 'menu.txt'), 'menu.txt#2'])).toThrow(UnknownHunkError);
    expect(() => selectHunks(diff, ['menu.txt#2'])).toThrow(/no hunk menu\.txt#2; the changes moved since they were reviewed\. Review them again\./);
  });

  it('a patch git would not write is refused with what was wrong, not cut at a guess', () => {
    const broken = (text: string): SandboxDiff => ({ ...diff, patchBytes: Buffer.from(text), patch: text });
    expect(() => selectHunks(broken('not a patch\n'), [])).toThrow(PatchFormatError);
    // The @@ line counts three lines; the body has two.
    const short = 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n';
    expect(() => patchFiles(Buffer.from(short))).toThrow(/line 4: the patch ends inside this hunk/);
  });
});

describe('a decision is bound to the content it was made on', () => {
  it('hunk ids stay when another file or another hunk changes, and differ when the hunk itself does', async () => {
    const repo3 = await makeRepo({ 'a.txt': words(WORDS), 'b.txt': 'b\n' });
    const s = await openSession({ repo: repo3, stateDir: await tempDir('ic-hunks-state-') });
    try {
      const sb = await s.create('root');
      await sb.writeFile('a.txt', words(replace(WORDS_1, 39, 'word thirty-nine')));
      await sb.writeFile('b.txt', 'b one\n');
      const first = await sb.workingTreeDiff();

      await sb.writeFile('b.txt', 'b two\n');
      const otherFile = await sb.workingTreeDiff();
      expect(idsOf(otherFile)['a.txt']).toEqual(idsOf(first)['a.txt']);
      expect(idOf(otherFile, 'b.txt')).not.toBe(idOf(first, 'b.txt'));

      // The second hunk rewritten: its id changes, the first hunk's does not.
      await sb.writeFile('a.txt', words(replace(WORDS_1, 39, 'word 39, rewritten')));
      const rewritten = await sb.workingTreeDiff();
      expect(idOf(rewritten, 'a.txt', 0)).toBe(idOf(first, 'a.txt', 0));
      expect(idOf(rewritten, 'a.txt', 1)).not.toBe(idOf(first, 'a.txt', 1));
      // A decision made on the first version selects nothing of the second (a position would have).
      expect(() => selectHunks(rewritten, idsOf(first)['a.txt'])).toThrow(UnknownHunkError);
    } finally {
      await s.close();
    }
  });

  it('changedSinceReview names the files with an accepted change the sandbox no longer holds as reviewed', async () => {
    const repo3 = await makeRepo({ 'a.txt': words(WORDS), 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const s = await openSession({ repo: repo3, stateDir: await tempDir('ic-hunks-state-') });
    try {
      const sb = await s.create('root');
      await sb.writeFile('a.txt', words(WORDS_1));
      await sb.writeFile('b.txt', 'b one\n');
      await sb.writeFile('c.txt', 'c one\n');
      const reviewed = await sb.workingTreeDiff();
      const all = Object.values(idsOf(reviewed)).flat();
      expect(changedSinceReview(reviewed, await sb.workingTreeDiff(), all)).toEqual([]);

      // A command rewrites a.txt, reverts c.txt and makes d.txt.
      const r = await sb.run("printf 'word 1\\nbad\\n' > a.txt && printf 'c\\n' > c.txt && echo d > d.txt");
      expect(r.stderr).toBe('');
      const now = await sb.workingTreeDiff();
      expect(changedSinceReview(reviewed, now, all)).toEqual(['a.txt', 'c.txt']);
      // Only what is accepted counts; a new file is the next review's.
      expect(changedSinceReview(reviewed, now, [idOf(reviewed, 'b.txt')])).toEqual([]);
      expect(changedSinceReview(reviewed, now, [idOf(reviewed, 'c.txt')])).toEqual(['c.txt']);
      // Every file, when what is not applied is dropped afterwards.
      expect(changedSinceReview(reviewed, now)).toEqual(['a.txt', 'c.txt', 'd.txt']);
      // What was reviewed is still there to apply, byte for byte.
      expect(selectHunks(reviewed, [idOf(reviewed, 'a.txt')]).patch).toContain('+word two\n');
    } finally {
      await s.close();
    }
  });
});

describe('a selection applied through sandboxes', () => {
  it("lands byte for byte in a parent's sandbox and in the working tree", async () => {
    const repo2 = await makeRepo({ 'menu.txt': menu(MENU), 'crlf.txt': crlf(CRLF) });
    const s = await openSession({ repo: repo2, stateDir: await tempDir('ic-hunks-state-') });
    try {
      const parent = await s.create('parent');
      const child = await s.create('child', parent);
      await child.writeFile('menu.txt', menu(replace(MENU_1, 37, 'plat 37 modifi\xe9')));
      await child.writeFile('crlf.txt', crlf(replace(CRLF_1, 36, 'row thirty-six')));
      const childDiff = await child.diff();
      const chosen = selectHunks(childDiff, [idOf(childDiff, 'menu.txt', 1), idOf(childDiff, 'crlf.txt', 0)]);
      expect(await parent.apply(chosen)).toMatchObject({ clean: true, conflicts: [] });
      expect((await parent.readFile('menu.txt')).equals(menu(MENU_2))).toBe(true);
      expect((await parent.readFile('crlf.txt')).equals(crlf(CRLF_1))).toBe(true);
      await parent.applyToWorkingTree();
      expect((await readFile(path.join(repo2, 'menu.txt'))).equals(menu(MENU_2))).toBe(true);
      expect((await readFile(path.join(repo2, 'crlf.txt'))).equals(crlf(CRLF_1))).toBe(true);
    } finally {
      await s.close();
    }
  });
});

/** Whether every line of `part` is, byte for byte, a line of `whole`, in the same order (what a cut that only drops lines leaves). */
function isLineSubsequence(part: Buffer, whole: Buffer): boolean {
  const split = (b: Buffer) => b.toString('latin1').split('\n');
  const wholeLines = split(whole);
  let at = 0;
  for (const line of split(part)) {
    while (at < wholeLines.length && wholeLines[at] !== line) at++;
    if (at++ >= wholeLines.length) return false;
  }
  return true;
}
