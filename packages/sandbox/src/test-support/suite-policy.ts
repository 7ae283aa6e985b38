// The apply policy on real repositories: what a diff leaves out of the user's working tree (and
// of a parent's sandbox), and the reason it gives. Every sandbox is written by real commands.
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { OmittedFile, SandboxDiff } from '../index.js';
import type { SuiteContext } from './backend-suite.js';
import { git, hashTree, makeRepo, tempDir } from './fixtures.js';

const MB = 1024 * 1024;

const byPath = (omitted: readonly OmittedFile[]) => Object.fromEntries(omitted.map((o) => [o.path, o]));
const paths = (diff: SandboxDiff) => diff.files.map((f) => f.path).sort();

async function ok(sb: { run(c: string): Promise<{ exitCode: number | null; stderr: string }> }, command: string): Promise<void> {
  const r = await sb.run(command);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
}

export function registerPolicyTests(s: SuiteContext): void {
  it('leaves nested repositories out, with one reason per repository, instead of failing or dropping them silently', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'lib/x.txt': 'x\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    await ok(
      sb,
      [
        'echo legit > legit.txt',
        // No commit: `git add -A` refuses it. With a commit: git would make it a gitlink.
        'git init -q sub && echo hi > sub/readme.txt',
        'git init -q deep/er/repo && echo d > deep/er/repo/d.txt',
        'git init -q done && echo c > done/c.txt && git -C done add c.txt && git -C done -c user.name=t -c user.email=t@t commit -qm c',
        // A repository made in a directory the snapshot already had files in.
        'git init -q lib && echo y > lib/y.txt && echo x2 > lib/x.txt',
        'git init -q only-git',
      ].join(' && '),
    );
    const diff = await sb.diff({ since: 'snapshot' });
    expect(paths(diff)).toEqual(['legit.txt']);
    const omitted = byPath(diff.omitted);
    for (const dir of ['sub/', 'deep/er/repo/', 'done/', 'lib/', 'only-git/']) {
      expect(omitted[dir], dir).toMatchObject({ rule: 'nested-repo', reason: `${dir} holds a nested git repository; its files were not included` });
    }
    expect(diff.omitted).toHaveLength(5);
    expect(diff.patch).not.toMatch(/sub\/|deep\/|done|lib\/|only-git/);

    const before = await readFile(path.join(repo, 'lib/x.txt'), 'utf8');
    const result = await sb.applyToWorkingTree();
    expect(result).toMatchObject({ clean: true, files: ['legit.txt'] });
    expect(await readFile(path.join(repo, 'lib/x.txt'), 'utf8')).toBe(before);
    expect(await git(repo, 'status', '--porcelain')).toBe('?? legit.txt');
  });

  it('never applies .infinity/ (tracked or new) or renames into it, and keeps them out of a squash into the parent', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'moved.txt': 'stay\n', '.infinity/config.json': '{"model":"mine"}\n' });
    const session = await s.open(repo);
    const parent = await session.create('parent');
    const child = await session.create('child', parent);
    await ok(
      child,
      'echo \'{"model":"evil"}\' > .infinity/config.json && echo [] > .infinity/sessions.json && mv moved.txt .infinity/moved.txt && echo b > b.txt',
    );
    const diff = await child.diff();
    expect(paths(diff)).toEqual(['b.txt']);
    const omitted = byPath(diff.omitted);
    for (const p of ['.infinity/config.json', '.infinity/sessions.json', '.infinity/moved.txt']) {
      expect(omitted[p], p).toMatchObject({ rule: 'reserved-dir', reason: expect.stringMatching(/inside \.infinity\/, which holds infinity-code's own configuration and sessions/) });
    }
    expect(await child.squashInto(parent)).toMatchObject({ clean: true, files: ['b.txt'] });
    expect(await parent.readText('.infinity/config.json')).toBe('{"model":"mine"}\n');
    expect(await parent.exists('.infinity/sessions.json')).toBe(false);
    expect(await parent.readText('moved.txt')).toBe('stay\n');

    // The same straight from the root to the working tree.
    await ok(parent, 'echo \'{"model":"evil"}\' > .infinity/config.json && rm moved.txt');
    const root = await parent.workingTreeDiff();
    expect(paths(root)).toEqual(['b.txt', 'moved.txt']);
    expect(byPath(root.omitted)['.infinity/config.json']).toMatchObject({ rule: 'reserved-dir' });
    await parent.applyToWorkingTree(root);
    expect(await readFile(path.join(repo, '.infinity/config.json'), 'utf8')).toBe('{"model":"mine"}\n');
  });

  it('leaves out symlinks leading out of the repository (absolute, .. from their own directory, through other links) or into .git; keeps the rest with their targets and modes', async () => {
    const outside = await tempDir('ic-outside-');
    const repo = await makeRepo({ 'a.txt': 'a\n', 'docs/guide.md': 'g\n', 'run.sh': '#!/bin/sh\n', escape: { symlink: outside } });
    const session = await s.open(repo);
    const sb = await session.create();
    await ok(
      sb,
      [
        'ln -s /etc/passwd passwd',
        'ln -s "$HOME/.ssh" ssh',
        'ln -s ../outside up',
        'ln -s ../../x docs/climb', // docs/../../x: one level above the root
        'ln -s ../a.txt docs/to-a', // docs/../a.txt: inside
        'ln -s escape/secret sneaky', // lexically inside, but escape leads out
        'ln -s sneaky deeper', // through a new link, then the old one
        'ln -s .git/config gitconf',
        'ln -s docs/../.git hooks-dir',
        'ln -s guide.md docs/guide-link',
        'chmod +x a.txt',
      ].join(' && '),
    );
    const diff = await sb.workingTreeDiff();
    expect(paths(diff)).toEqual(['a.txt', 'docs/guide-link', 'docs/to-a']);
    expect(diff.files.find((f) => f.path === 'a.txt')).toMatchObject({ oldMode: '100644', newMode: '100755' });
    expect(diff.files.find((f) => f.path === 'docs/to-a')).toMatchObject({ newMode: '120000', linkTarget: '../a.txt' });
    const omitted = byPath(diff.omitted);
    expect(omitted.passwd).toMatchObject({ rule: 'outside-symlink', target: '/etc/passwd', reason: 'a symbolic link to /etc/passwd, which is outside the repository' });
    expect(omitted.ssh).toMatchObject({ rule: 'outside-symlink', reason: expect.stringMatching(/\.ssh, which is outside the repository$/) });
    expect(omitted.up).toMatchObject({ rule: 'outside-symlink', target: '../outside' });
    expect(omitted['docs/climb']).toMatchObject({ rule: 'outside-symlink', target: '../../x' });
    expect(omitted.sneaky).toMatchObject({ rule: 'outside-symlink', target: 'escape/secret' });
    expect(omitted.deeper).toMatchObject({ rule: 'outside-symlink', target: 'sneaky' });
    expect(omitted.gitconf).toMatchObject({ rule: 'outside-symlink', reason: 'a symbolic link to .git/config, which leads into .git' });
    expect(omitted['hooks-dir']).toMatchObject({ rule: 'outside-symlink', reason: expect.stringMatching(/leads into \.git$/) });
    expect(diff.omitted).toHaveLength(8);

    await sb.applyToWorkingTree(diff);
    expect(await git(repo, 'status', '--porcelain')).toBe(' M a.txt\n?? docs/guide-link\n?? docs/to-a');
  });

  it("keeps the user's ignored .env the agent never saw byte for byte, and refuses a diff that would merge into it", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', '.gitignore': '.env\n*.log\n' });
    const secret = 'API_KEY=users-own-secret\n';
    await writeFile(path.join(repo, '.env'), secret);
    const session = await s.open(repo);
    const sb = await session.create();
    // Un-ignore .env in the sandbox, write one, and a log that the user's tree does not have.
    await ok(sb, "printf '*.log\\n' > .gitignore && printf 'API_KEY=agents\\n' > .env && echo b > b.txt && echo l > new.log");
    expect(await sb.exists('.env')).toBe(true);

    const forTree = await sb.workingTreeDiff();
    expect(paths(forTree)).toEqual(['.gitignore', 'b.txt']);
    expect(forTree.omitted).toEqual([
      {
        path: '.env',
        rule: 'user-ignored',
        reason: 'your working tree has its own copy, ignored by your git rules: the agent never saw it, so yours was left as it is',
      },
    ]);
    // Not meant for the working tree: the sandbox's own view of it is whole.
    const plain = await sb.diff({ since: 'snapshot' });
    expect(paths(plain)).toEqual(['.env', '.gitignore', 'b.txt']);
    const before = await hashTree(repo);
    await expect(sb.applyToWorkingTree(plain)).rejects.toMatchObject({ code: 'unsafe-change', message: expect.stringMatching(/\.env/) });
    expect(await hashTree(repo)).toEqual(before);

    await sb.applyToWorkingTree(forTree);
    expect(await readFile(path.join(repo, '.env'), 'utf8')).toBe(secret);
    expect(await readFile(path.join(repo, 'b.txt'), 'utf8')).toBe('b\n');

    // Without a .env of the user's, the agent's is an ordinary new file.
    const fresh = await makeRepo({ 'a.txt': 'a\n', '.gitignore': '.env\n' });
    const other = await (await s.open(fresh)).create();
    await ok(other, "printf '' > .gitignore && printf 'X=1\\n' > .env");
    const d = await other.workingTreeDiff();
    expect(paths(d)).toEqual(['.env', '.gitignore']);
    expect(d.omitted).toEqual([]);
  });

  // A link the user's git ignores is in no snapshot: the agent makes a directory of that name,
  // and git, whose check for links on the way reads the (temporary) index, would write its files
  // wherever the link points. Before, staging refused the whole apply, or the ignore check the
  // whole diff (a file already there beyond the link).
  it("never writes through a symlink of the user's tree that the agent never saw: what it put there is left out, saying so, and the rest applies", async () => {
    const outside = await tempDir('ic-outside-');
    await writeFile(path.join(outside, 'victim.txt'), 'victim\n');
    await mkdir(path.join(outside, 'dir'));
    await writeFile(path.join(outside, 'dir/existing.txt'), 'theirs\n');
    const repo = await makeRepo({ 'a.txt': 'a\n', '.gitignore': 'ignored-link\nignored-dir\nmine\n', 'real/keep.txt': 'k\n' });
    await symlink(path.join(outside, 'victim.txt'), path.join(repo, 'ignored-link'));
    await symlink(path.join(outside, 'dir'), path.join(repo, 'ignored-dir'));
    // Inside the repository the same: where it leads is not what the agent saw there.
    await symlink('real', path.join(repo, 'mine'));
    const sb = await (await s.open(repo)).create();
    await ok(
      sb,
      [
        "printf '' > .gitignore",
        'echo pwn > ignored-link',
        'mkdir ignored-dir mine',
        'echo pwn > ignored-dir/existing.txt',
        'echo pwn > ignored-dir/new.txt',
        'echo pwn > mine/keep.txt',
        'echo b > b.txt',
      ].join(' && '),
    );
    const userTree = await hashTree(repo);
    const outsideTree = await hashTree(outside);

    // Not for the working tree: the sandbox's own view of it is whole; applied there, refused whole.
    const plain = await sb.diff({ since: 'snapshot' });
    expect(paths(plain)).toEqual(['.gitignore', 'b.txt', 'ignored-dir/existing.txt', 'ignored-dir/new.txt', 'ignored-link', 'mine/keep.txt']);
    await expect(sb.applyToWorkingTree(plain)).rejects.toMatchObject({ code: 'unsafe-change', message: expect.stringMatching(/ignored-dir\/new\.txt \(your working tree has a symbolic link at ignored-dir/) });
    expect(await hashTree(repo)).toEqual(userTree);

    const diff = await sb.workingTreeDiff();
    expect(paths(diff)).toEqual(['.gitignore', 'b.txt']);
    const through = (at: string) => ({
      rule: 'in-the-way',
      reason: `your working tree has a symbolic link at ${at}, where this path needs a directory: nothing was written through it or in its place; left as it was`,
    });
    expect(byPath(diff.omitted)).toEqual({
      'ignored-dir/existing.txt': { path: 'ignored-dir/existing.txt', ...through('ignored-dir') },
      'ignored-dir/new.txt': { path: 'ignored-dir/new.txt', ...through('ignored-dir') },
      'ignored-link': { path: 'ignored-link', rule: 'user-ignored', reason: expect.stringMatching(/^your working tree has its own copy/) },
      'mine/keep.txt': { path: 'mine/keep.txt', ...through('mine') },
    });
    expect(await sb.applyToWorkingTree(diff)).toMatchObject({ clean: true, files: ['.gitignore', 'b.txt'] });
    expect(await readFile(path.join(repo, 'b.txt'), 'utf8')).toBe('b\n');
    expect(await hashTree(outside)).toEqual(outsideTree);
    expect(await readdir(path.join(outside, 'dir'))).toEqual(['existing.txt']);
    expect(await readFile(path.join(repo, 'real/keep.txt'), 'utf8')).toBe('k\n');
  });

  // The finding's command: `mkdir -p` makes a chain deeper than PATH_MAX a level at a time. The
  // diff walked it once per directory above each one, for ever; a file past the limit was lost
  // without a word, and the session's storage could not be removed. Bounded by the suite's timeout.
  it('reports what lies deeper than a path may be, once per chain, instead of spinning on it or losing it, and applies the rest', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const sb = await (await s.open(repo)).create();
    await ok(
      sb,
      [
        'echo b > b.txt',
        // The shell cannot write at the bottom (its path is too long): quiet, as in the finding.
        'd=x; for i in $(seq 2100); do d=$d/x; done; mkdir -p $d && { echo hi > $d/f; } 2>/dev/null; true',
        // A file there all the same, reached a hundred levels at a time.
        's=x; for i in $(seq 99); do s=$s/x; done; (for j in $(seq 21); do cd -P $s || exit 1; done; echo hi > f)',
        // Not deep but long: 13 names of 250 bytes, still short enough for git.
        `n=${'y'.repeat(250)}; t=$n; for i in $(seq 12); do t=$t/$n; done; mkdir -p $t && echo hi > $t/f`,
      ].join('\n'),
    );
    const diff = await sb.workingTreeDiff();
    expect(paths(diff)).toEqual(['b.txt']);
    // Up to the directory where a limit is crossed, whatever lies below it.
    const limits = 'a path may be up to 256 levels deep and 3,072 bytes long';
    const deep = {
      path: 'x/'.repeat(257),
      rule: 'path-too-long',
      reason: `path too deep/long to apply (513 bytes, 257 directories deep; ${limits}): nothing under it was included; move what is there to a shorter path in the sandbox to include it`,
    };
    const long = {
      path: `${'y'.repeat(250)}/`.repeat(13),
      rule: 'path-too-long',
      reason: `path too deep/long to apply (3,262 bytes, 13 directories deep; ${limits}): nothing under it was included; move what is there to a shorter path in the sandbox to include it`,
    };
    expect(byPath(diff.omitted)).toEqual({ [deep.path]: deep, [long.path]: long });
    expect(await sb.applyToWorkingTree(diff)).toMatchObject({ clean: true, files: ['b.txt'] });
    expect(await git(repo, 'status', '--porcelain')).toBe('?? b.txt');
  });

  it('leaves out files over the size limit (session option, per diff call) at their old version, without a patch of them', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'tracked.bin': Buffer.alloc(1 * MB, 1) });
    const session = await s.open(repo, { applyPolicy: { maxFileBytes: 10 * MB } });
    const sb = await session.create();
    await ok(sb, 'head -c 31457280 /dev/urandom > big.bin && head -c 2097152 /dev/urandom > mid.bin && echo b > a.txt && head -c 11534336 /dev/zero > tracked.bin');
    const diff = await sb.workingTreeDiff();
    expect(paths(diff)).toEqual(['a.txt', 'mid.bin']);
    expect(byPath(diff.omitted)).toEqual({
      'big.bin': { path: 'big.bin', rule: 'too-large', size: 30 * MB, reason: '30 MB, over the 10 MB limit for one file: left as it was' },
      'tracked.bin': { path: 'tracked.bin', rule: 'too-large', size: 11 * MB, reason: '11 MB, over the 10 MB limit for one file: left as it was' },
    });
    expect(diff.patch).not.toContain('big.bin');
    expect(diff.patchBytes.length).toBeLessThan(4 * MB);

    const lowered = await sb.diff({ since: 'snapshot', maxFileBytes: 1 * MB });
    expect(paths(lowered)).toEqual(['a.txt']);
    const raised = await sb.diff({ since: 'snapshot', maxFileBytes: 40 * MB });
    expect(paths(raised)).toEqual(['a.txt', 'big.bin', 'mid.bin', 'tracked.bin']);
    expect(raised.omitted).toEqual([]);

    await sb.applyToWorkingTree(diff);
    expect((await readFile(path.join(repo, 'tracked.bin'))).equals(Buffer.alloc(1 * MB, 1))).toBe(true);
    expect(await git(repo, 'status', '--porcelain')).toBe(' M a.txt\n?? mid.bin');
  });
  it('lists every change to a file whose name is not UTF-8 as left out, with what to do, and applies the rest', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'moved.txt': 'moved along\n', '.gitignore': '*.log\n' });
    // Latin-1 names ("café.txt" and the like, é as the single byte 0xE9), committed.
    const named = (rel: string) => Buffer.concat([Buffer.from(`${repo}/`), Buffer.from(rel, 'latin1')]);
    await writeFile(named('caf\xe9.txt'), 'old\n');
    await writeFile(named('gone\xe9.txt'), 'gone\n');
    await writeFile(named('old\xe9.txt'), 'renamed to UTF-8\n');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'latin-1 names');
    const session = await s.open(repo);
    const sb = await session.create('root');
    const name = (rel: string) => `"$(printf '${rel}')"`;
    await ok(
      sb,
      [
        `printf new > ${name('caf\\351.txt')}`,
        `printf x > ${name('n\\351w.txt')}`,
        `rm ${name('gone\\351.txt')}`,
        `mkdir ${name('d\\351')} && echo in > ${name('d\\351/in.txt')}`,
        `mv moved.txt ${name('m\\351.txt')}`,
        `mv ${name('old\\351.txt')} fixed.txt`,
        // Ignored by git, as under any other name: neither in the diff nor reported.
        `echo l > ${name('l\\351.log')}`,
        'echo b > a.txt && echo c > c.txt',
      ].join(' && '),
    );

    const diff = await sb.workingTreeDiff();
    // The file given a UTF-8 name comes through under it (its old name's removal is left out).
    expect(paths(diff)).toEqual(['a.txt', 'c.txt', 'fixed.txt']);
    expect(diff.files.find((f) => f.path === 'fixed.txt')).toMatchObject({ status: 'added' });
    const kept = 'its name is not valid UTF-8, which Infinity Code cannot carry: left as it was; give it a UTF-8 name in the sandbox to include it';
    const deleted = 'its name is not valid UTF-8, which Infinity Code cannot carry: left as it was; the agent deleted it, so delete it yourself if it should go';
    // Named with git's octal escapes for the bytes that are not UTF-8, as `git status` shows them.
    expect(byPath(diff.omitted)).toEqual({
      'caf\\351.txt': { path: 'caf\\351.txt', rule: 'non-utf8-name', reason: kept },
      'n\\351w.txt': { path: 'n\\351w.txt', rule: 'non-utf8-name', reason: kept },
      'd\\351/in.txt': { path: 'd\\351/in.txt', rule: 'non-utf8-name', reason: kept },
      // A rename into such a name stays out whole: moved.txt is not deleted.
      'm\\351.txt': { path: 'm\\351.txt', rule: 'non-utf8-name', reason: kept },
      'gone\\351.txt': { path: 'gone\\351.txt', rule: 'non-utf8-name', reason: deleted },
      'old\\351.txt': { path: 'old\\351.txt', rule: 'non-utf8-name', reason: deleted },
    });
    expect(diff.omitted).toHaveLength(6);
    expect(diff.patch).not.toMatch(/351|moved/);

    expect(await sb.applyToWorkingTree(diff)).toMatchObject({ clean: true, files: ['a.txt', 'c.txt', 'fixed.txt'] });
    expect(await git(repo, 'status', '--porcelain')).toBe(' M a.txt\n?? c.txt\n?? fixed.txt');
    expect(await readFile(named('caf\xe9.txt'), 'utf8')).toBe('old\n');
    expect(await readFile(path.join(repo, 'moved.txt'), 'utf8')).toBe('moved along\n');
    expect(await readFile(path.join(repo, 'fixed.txt'), 'utf8')).toBe('renamed to UTF-8\n');

    // A child's own changes (its layers alone on overlay backends), squashed into its parent; a
    // file over 8 MB makes the overlay backends build the trees step by step (see buildTrees).
    const child = await session.create('child', sb);
    await ok(
      child,
      `printf again > ${name('caf\\351.txt')} && printf y > ${name('n2\\351w.txt')} && echo l > ${name('l2\\351.log')} && echo d > d.txt && head -c 9437184 /dev/zero > big.bin`,
    );
    const own = await child.diff();
    expect(paths(own)).toEqual(['big.bin', 'd.txt']);
    expect(own.omitted.map((o) => [o.path, o.rule])).toEqual([
      ['caf\\351.txt', 'non-utf8-name'],
      ['n2\\351w.txt', 'non-utf8-name'],
    ]);
    // A diff put together elsewhere that holds such a file (its odd byte kept as a lone surrogate,
    // as the package's own listings keep it) is refused whole, like any unsafe change.
    const forged: SandboxDiff = { ...own, files: [...own.files, { path: 'caf\udce9.txt', status: 'modified', binary: false, oldMode: '100644', newMode: '100644' }] };
    await expect(sb.apply(forged)).rejects.toMatchObject({ code: 'unsafe-change', message: expect.stringContaining('caf\\351.txt (its name is not valid UTF-8') });
    expect(await child.squashInto(sb)).toMatchObject({ clean: true, files: ['big.bin', 'd.txt'] });
    expect(await sb.readText('d.txt')).toBe('d\n');
    expect((await sb.run(`cat ${name('caf\\351.txt')}`)).stdout).toBe('new');
  });
}
