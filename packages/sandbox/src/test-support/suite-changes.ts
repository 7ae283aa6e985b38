import { readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { gc, patchFiles, selectHunks, type SandboxDiff } from '../index.js';
import type { SuiteContext } from './backend-suite.js';
import { runAndKill } from './crash.js';
import { binary, git, hashTree, leftovers, lines, makeRepo, tempDir, viewTree, writeFiles } from './fixtures.js';

export function registerChangeTests(s: SuiteContext): void {
  // A diff made before a command is given again after it when the command changed nothing (see
  // Sandbox.exec and view-stamp.ts). A hostile command tries to change what a diff would say
  // while looking like it changed nothing; whatever it does, the diff given must be the one a
  // diff made afresh gives.
  it('a diff made before a command is given after it only while a fresh diff would say the same, whatever the command wrote', async () => {
    const repo = await makeRepo({ '.gitignore': 'node_modules/\n', 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await writeFiles(repo, { 'node_modules/dep/index.js': "exports.name = 'dep';\n" });
    const sb = await (await s.open(repo)).create();
    await sb.writeFile('a.txt', 'A\n');
    const first = await sb.workingTreeDiff();
    const given = async (command: string): Promise<SandboxDiff> => {
      expect((await sb.run(command)).exitCode).toBe(0);
      const served = await sb.workingTreeDiff();
      // Another size limit: another cache entry, so this one is made afresh.
      const fresh = await sb.workingTreeDiff({ maxFileBytes: 1024 * 1024 * 1024 });
      expect(served.patch).toBe(fresh.patch);
      expect(served.omitted).toEqual(fresh.omitted);
      return served;
    };
    // Writes only where diffs never look: the sandbox's git dir (ignore rules, config naming
    // more of them), node_modules, its private tmp. The diff made before still holds.
    const quiet = await given(
      'echo b.txt >> .git/info/exclude && git config core.excludesFile /tmp/ignore && echo a.txt > /tmp/ignore && ' +
        "echo pwned > node_modules/dep/index.js && echo scratch > /tmp/scratch",
    );
    if (s.backend !== 'copy') expect(quiet).toBe(first);
    expect(quiet.files.map((f) => f.path)).toEqual(['a.txt']);
    // Rewrites that keep size and modification time: just after the edit (the stamp's fresh
    // entries), then after a slow command, when the edit is older than a clock tick.
    const rewrite = (text: string) => `touch -r a.txt /tmp/ref && printf '${text}\\n' > a.txt && touch -r /tmp/ref a.txt`;
    // Known gap, not this cache's: the copy backend's diffs compare whole-second mtimes and sizes
    // (core.checkStat=minimal, trustctime off, so that a fresh copy is not hashed whole). git then
    // sees such a rewrite only while the file's entry is racily clean (its mtime in the same whole
    // second as the index was written), so whether it does depends on where a second boundary
    // falls: even the first rewrite below is missed now and then (seen in CI).
    if (s.backend === 'copy') return;
    expect((await given(rewrite('B'))).patch).toContain('+B');
    await given('sleep 0.2');
    expect((await given(rewrite('C'))).patch).toContain('+C');
  });

  it('diffs add, modify, delete, binary, chmod, rename, nested dirs and no-EOL into a patch that reproduces the child', async () => {
    const repo = await makeRepo({
      'keep.txt': 'keep\n',
      'mod.txt': lines(30),
      'del.txt': 'delete me\n',
      'bin.dat': binary(1),
      'script.sh': '#!/bin/sh\necho run\n',
      'old/name.txt': lines(40, 'renamed content'),
      'noeol.txt': 'first\nsecond',
      'parent.txt': 'base\n',
    });
    const patchDir = await tempDir('ic-patch-');
    const session = await s.open(repo, { containment: { writable: [patchDir] } });
    const parent = await session.create('parent');
    await parent.writeFile('parent.txt', 'parent edited before spawn\n');
    const child = await session.create('child', parent);

    await child.writeFile('mod.txt', lines(30).replace('line 15\n', 'line fifteen\n'));
    await child.writeFile('bin.dat', binary(2));
    await child.writeFile('nested/a/b/c/new.txt', 'deep\n');
    await child.writeFile('added-noeol.txt', 'no newline at end');
    await child.writeFile('new.bin', binary(3, 512));
    await child.writeFile('noeol.txt', 'first\nSECOND');
    const cmd = await child.run(
      'rm del.txt && chmod +x script.sh && mkdir -p new/place && mv old/name.txt new/place/name.txt && rmdir old && ln -s keep.txt link-to-keep',
    );
    expect(cmd.exitCode).toBe(0);

    const diff = await child.diff();
    const byPath = new Map(diff.files.map((f) => [f.path, f]));
    expect([...byPath.keys()].sort()).toEqual(
      ['added-noeol.txt', 'bin.dat', 'del.txt', 'link-to-keep', 'mod.txt', 'nested/a/b/c/new.txt', 'new.bin', 'new/place/name.txt', 'noeol.txt', 'script.sh'].sort(),
    );
    expect(byPath.get('mod.txt')).toMatchObject({ status: 'modified', additions: 1, deletions: 1 });
    expect(byPath.get('del.txt')!.status).toBe('deleted');
    expect(byPath.get('bin.dat')).toMatchObject({ status: 'modified', binary: true });
    expect(byPath.get('new.bin')).toMatchObject({ status: 'added', binary: true });
    expect(byPath.get('script.sh')).toMatchObject({ oldMode: '100644', newMode: '100755' });
    expect(byPath.get('new/place/name.txt')).toMatchObject({ status: 'renamed', oldPath: 'old/name.txt' });
    expect(byPath.get('nested/a/b/c/new.txt')!.status).toBe('added');
    expect(byPath.get('link-to-keep')).toMatchObject({ status: 'added', newMode: '120000' });
    expect(diff.patch).toContain('\\ No newline at end of file');
    expect(diff.patch).toContain('GIT binary patch');
    expect(diff.patch).not.toContain('parent.txt');

    // Written where this test's commands may read it (the machine is otherwise read-only to them).
    const patchFile = path.join(patchDir, 'child.patch');
    await writeFile(patchFile, diff.patchBytes);
    const check = await parent.run(`git apply --check ${JSON.stringify(patchFile)}`);
    expect(check.stderr).toBe('');
    expect(check.exitCode).toBe(0);

    const result = await child.squashInto(parent);
    expect(result).toMatchObject({ clean: true, conflicts: [] });
    expect(await viewTree(parent)).toEqual(await viewTree(child));
    expect(await parent.readText('parent.txt')).toBe('parent edited before spawn\n');
  });

  it('writes replace a file whole: readers see old or new content, modes are kept, and a write cut short is no change', async () => {
    const repo = await makeRepo({ 'big.txt': 'old\n', 'run.sh': '#!/bin/sh\necho a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    expect((await sb.run('chmod 755 run.sh')).exitCode).toBe(0);
    // Written in many chunks: a reader between two of them would see a truncated file.
    const big = 'x'.repeat(16 * 1024 * 1024);
    let writing = true;
    const write = sb.writeFile('big.txt', big).finally(() => (writing = false));
    const seen = new Set<number>();
    while (writing) seen.add((await sb.readFile('big.txt')).length);
    await write;
    expect([...seen].filter((n) => n !== 4 && n !== big.length)).toEqual([]);

    await sb.writeFile('run.sh', '#!/bin/sh\necho b\n');
    expect((await sb.stat('run.sh')).mode & 0o777).toBe(0o755);

    // What a kill between writing the temporary file and renaming it leaves behind.
    expect((await sb.run('mkdir -p sub && echo half > .big.txt.0a1b2c3d.ic-partial && echo half > sub/.n.txt.0a1b2c3d.ic-partial')).exitCode).toBe(0);
    expect((await sb.diff()).files.map((f) => f.path).sort()).toEqual(['big.txt', 'run.sh']);
  });

  it('squashInto merges with later parent edits and reports overlapping ones as conflicts', async () => {
    const repo = await makeRepo({ 'a.txt': lines(20), 'b.txt': lines(20) });
    const session = await s.open(repo);
    const parent = await session.create('parent');
    const child = await session.create('child', parent);
    await parent.writeFile('a.txt', lines(20).replace('line 2\n', 'line 2 parent\n'));
    await parent.writeFile('b.txt', lines(20).replace('line 7\n', 'line 7 parent\n'));
    await child.writeFile('a.txt', lines(20).replace('line 19\n', 'line 19 child\n'));
    await child.writeFile('b.txt', lines(20).replace('line 7\n', 'line 7 child\n'));

    const result = await child.squashInto();

    expect(result).toMatchObject({ clean: false, conflicts: ['b.txt'] });
    const a = await parent.readText('a.txt');
    expect(a).toContain('line 2 parent\n');
    expect(a).toContain('line 19 child\n');
    expect(await parent.readText('b.txt')).toMatch(/<<<<<<< [^\n]*\nline 7 parent\n=======\nline 7 child\n>>>>>>> /);
  });

  it("a child's report merged into a parent whose command turned the file into a link to one outside, holding the same text, writes nothing outside; a file the parent left alone takes the child's version", async () => {
    // The outside file holds what the child started from: a merge that followed the link would
    // find the preimage there and write the child's version through it.
    const outside = await tempDir('ic-outside-');
    const victim = path.join(outside, 'victim.txt');
    await writeFile(victim, 'a\n');
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const session = await s.open(repo);
    const parent = await session.create('parent');
    const child = await session.create('child', parent);
    await child.writeFile('a.txt', 'written by the child\n');
    await child.writeFile('b.txt', 'B from the child\n');
    expect((await parent.run(`rm a.txt && ln -s '${victim}' a.txt`)).exitCode).toBe(0);

    // git may report a conflict or refuse: either way, nothing reaches the outside file.
    await child.squashInto().catch(() => undefined);
    expect(await readFile(victim, 'utf8')).toBe('a\n');
    expect((await parent.stat('b.txt')).type).toBe('file');
    const calm = await session.create('calm', parent);
    await calm.writeFile('b.txt', 'B again\n');
    expect(await calm.squashInto()).toMatchObject({ clean: true });
    expect(await parent.readText('b.txt')).toBe('B again\n');
    expect(await readFile(victim, 'utf8')).toBe('a\n');
  });

  // A file replaced by a directory, a directory by a file or a link: the paths a change touches
  // then include one a view has as a directory or behind a link, which git refuses to stage. Every
  // such change used to fail whole (the diff on overlay backends, the apply on every backend).
  it('a file replaced by a directory, and a directory by a file or a link, diff, squash and apply; a directory of the user\'s holding what the agent never saw is left out, saying so, and the rest applies', async () => {
    const repo = await makeRepo({ a: 'a\n', 'd/x': 'x\n', 's/y': 'y\n', 'keep/k': 'k\n', 'o.txt': 'o\n', '.gitignore': '*.log\n' });
    // Ignored, so never in the snapshot: the agent turns its directory into a file without seeing it.
    await writeFile(path.join(repo, 'keep/build.log'), 'mine\n');
    const session = await s.open(repo);
    const parent = await session.create('parent');
    const child = await session.create('child', parent);
    const cmd = await child.run('rm a && mkdir a && echo in > a/f && rm -r d && echo file > d && rm -r s && ln -s o.txt s && rm -r keep && echo k2 > keep && echo O > o.txt');
    expect(cmd.exitCode).toBe(0);
    const own = await child.diff();
    expect(own.files.map((f) => [f.path, f.status])).toEqual([
      ['a', 'deleted'],
      ['a/f', 'added'],
      ['d', 'added'],
      ['d/x', 'deleted'],
      ['keep', 'added'],
      ['keep/k', 'deleted'],
      ['o.txt', 'modified'],
      ['s', 'added'],
      ['s/y', 'deleted'],
    ]);
    expect(await child.squashInto(parent)).toMatchObject({ clean: true, conflicts: [] });
    expect(await viewTree(parent)).toEqual(await viewTree(child));

    const diff = await parent.workingTreeDiff();
    expect(diff.files.map((f) => f.path)).toEqual(['a', 'a/f', 'd', 'd/x', 'keep/k', 'o.txt', 's', 's/y']);
    expect(diff.omitted).toEqual([
      {
        path: 'keep',
        rule: 'in-the-way',
        reason:
          'your working tree has a directory here holding files the agent never saw (yours, or ignored by your git rules), so the file could not take its place: left as it was',
      },
    ]);
    expect(await parent.applyToWorkingTree(diff)).toMatchObject({ clean: true, conflicts: [] });
    expect(await readFile(path.join(repo, 'a/f'), 'utf8')).toBe('in\n');
    expect(await readFile(path.join(repo, 'd'), 'utf8')).toBe('file\n');
    expect(await readlink(path.join(repo, 's'))).toBe('o.txt');
    expect(await readFile(path.join(repo, 'o.txt'), 'utf8')).toBe('O\n');
    expect(await readdir(path.join(repo, 'keep'))).toEqual(['build.log']);
    expect(await readFile(path.join(repo, 'keep/build.log'), 'utf8')).toBe('mine\n');
  });

  it('applyToWorkingTree merges with a user edit elsewhere in the same file, leaving the index alone', async () => {
    const repo = await makeRepo({ 'shared.txt': lines(20), 'other.txt': 'o\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    await sb.writeFile('shared.txt', lines(20).replace('line 18\n', 'line 18 from the agent\n'));
    await sb.writeFile('brand/new.txt', 'new\n');
    await sb.remove('other.txt');
    await writeFile(path.join(repo, 'shared.txt'), lines(20).replace('line 2\n', 'line 2 from the user\n'));
    const indexBefore = await readFile(path.join(repo, '.git', 'index'));

    const result = await sb.applyToWorkingTree();

    expect(result).toMatchObject({ clean: true, conflicts: [] });
    const merged = await readFile(path.join(repo, 'shared.txt'), 'utf8');
    expect(merged).toContain('line 2 from the user\n');
    expect(merged).toContain('line 18 from the agent\n');
    expect(await readFile(path.join(repo, 'brand/new.txt'), 'utf8')).toBe('new\n');
    await expect(readFile(path.join(repo, 'other.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(path.join(repo, '.git', 'index'))).toEqual(indexBefore);
    expect(await git(repo, 'diff', '--cached', '--name-only')).toBe('');
  });

  it('a deletion or rename the target already has is no conflict: the user removed the file too; a squash run twice changes nothing', async () => {
    const repo = await makeRepo({ 'gone [1].txt': 'bye\n', 'old.txt': lines(40, 'moving'), 'mod.txt': lines(10), 'dir/x.txt': 'x\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    expect((await sb.run("rm 'gone [1].txt' dir/x.txt && mv old.txt 'new [2].txt'")).exitCode).toBe(0);
    await sb.writeFile('mod.txt', lines(10).replace('line 5\n', 'line five\n'));
    // The user deleted the same files meanwhile (names with glob characters: excluded literally).
    await rm(path.join(repo, 'gone [1].txt'));
    await rm(path.join(repo, 'dir'), { recursive: true });

    expect(await sb.applyToWorkingTree()).toMatchObject({ clean: true, conflicts: [] });
    expect((await readdir(repo)).filter((n) => n !== '.git').sort()).toEqual(['mod.txt', 'new [2].txt']);
    expect(await readFile(path.join(repo, 'new [2].txt'), 'utf8')).toBe(lines(40, 'moving'));
    expect(await readFile(path.join(repo, 'mod.txt'), 'utf8')).toContain('line five\n');

    // A squash repeated (a crash between merging a child and moving it onto its parent's new state).
    const parent = await session.create('parent');
    const child = await session.create('child', parent);
    expect((await child.run("rm 'gone [1].txt' && mv old.txt 'new [2].txt'")).exitCode).toBe(0);
    await child.writeFile('new [2].txt', lines(40, 'moving').replace('moving 30\n', 'moved 30\n'));
    await child.writeFile('mod.txt', lines(10).replace('line 5\n', 'line five\n'));
    expect((await child.diff()).files.find((f) => f.path === 'new [2].txt')).toMatchObject({ status: 'renamed' });
    expect(await child.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    expect(await child.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    expect(await viewTree(parent)).toEqual(await viewTree(child));
  });

  it('a rename the user made without the edits the agent made to that file is not taken as applied: the apply fails, dropping nothing', async () => {
    const repo = await makeRepo({ 'old.txt': lines(40, 'moving') });
    const session = await s.open(repo);
    const sb = await session.create();
    expect((await sb.run('mv old.txt new.txt')).exitCode).toBe(0);
    await sb.writeFile('new.txt', lines(40, 'moving').replace('moving 30\n', 'moved 30\n'));
    expect(await git(repo, 'mv', 'old.txt', 'new.txt')).toBe('');

    await expect(sb.applyToWorkingTree()).rejects.toMatchObject({ name: 'ApplyError' });
    expect(await readFile(path.join(repo, 'new.txt'), 'utf8')).toBe(lines(40, 'moving'));
  });

  it('a commit a command makes past the sandbox hooks still diffs, squashes and applies', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const session = await s.open(repo);
    const parent = await session.create('parent');
    const child = await session.create('child', parent);
    // At the path commands see the repository at (its own path on overlay backends), so git
    // writes the commit's objects into the sandbox's private .git. The sandbox's hooks refuse
    // commits (see suite-git-view.ts); a command can still switch them off.
    const commit = await child.run(
      `echo committed > a.txt && echo new > c.txt && git -C ${JSON.stringify(child.root)} add -A && ` +
        'git -c core.hooksPath=/dev/null -c user.name=a -c user.email=a@b commit -qm agent && git status --porcelain',
    );
    expect(commit).toMatchObject({ exitCode: 0, stdout: '' });

    const diff = await child.diff();
    expect(diff.files.map((f) => [f.path, f.status])).toEqual([
      ['a.txt', 'modified'],
      ['c.txt', 'added'],
    ]);
    expect(diff.patch).toContain('+committed\n');
    expect((await child.diff({ since: 'snapshot' })).files).toHaveLength(2);

    expect(await child.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    expect(await parent.readText('a.txt')).toBe('committed\n');
    expect(await parent.readText('c.txt')).toBe('new\n');
    expect(await parent.applyToWorkingTree()).toMatchObject({ clean: true, conflicts: [] });
    expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toBe('committed\n');
    expect(await readFile(path.join(repo, 'c.txt'), 'utf8')).toBe('new\n');
    // The commit itself stayed in the sandbox.
    expect(await git(repo, 'log', '--format=%s')).toBe('initial');
  });

  it('workingTreeDiff offers only what the working tree has not received: the rest of a partial apply, then nothing, then new work; kept across a resume; a refresh starts afresh', async () => {
    const repo = await makeRepo({ 'a.txt': lines(40), 'b.txt': 'b\n' });
    const stateDir = await tempDir('ic-state-delivered-');
    const session = await s.open(repo, { stateDir });
    const sb = await session.create('root');
    await sb.writeFile('a.txt', lines(40).replace('line 3\n', 'line 3 agent\n').replace('line 35\n', 'line 35 agent\n'));
    await sb.writeFile('c.txt', 'new\n');

    // The first hunk of a.txt and all of c.txt, not the second hunk.
    const whole = await sb.workingTreeDiff();
    expect(whole.files.map((f) => f.path)).toEqual(['a.txt', 'c.txt']);
    const part = selectHunks(
      whole,
      patchFiles(whole.patchBytes).flatMap((f) => (f.path === 'a.txt' || f.path === 'c.txt' ? [f.decisionIds[0]] : [])),
    );
    expect(await sb.applyToWorkingTree(part)).toMatchObject({ clean: true, conflicts: [] });
    expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toContain('line 3 agent\n');
    expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).not.toContain('line 35 agent');

    const rest = await sb.workingTreeDiff();
    expect(rest.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(rest.patch).toContain('+line 35 agent');
    expect(rest.patch).not.toContain('line 3 agent');
    expect(await sb.applyToWorkingTree(rest)).toMatchObject({ clean: true });
    expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toBe(lines(40).replace('line 3\n', 'line 3 agent\n').replace('line 35\n', 'line 35 agent\n'));
    expect((await sb.workingTreeDiff()).isEmpty).toBe(true);

    // New work (and undoing a delivered change) is offered, and only that; the same after a resume.
    await sb.writeFile('b.txt', 'b agent\n');
    await sb.remove('c.txt');
    await session.close({ keep: true });
    const resumed = await s.open(repo, { stateDir, resume: session.id });
    const again = resumed.get('root')!;
    const next = await again.workingTreeDiff();
    expect(next.files.map((f) => [f.path, f.status])).toEqual([
      ['b.txt', 'modified'],
      ['c.txt', 'deleted'],
    ]);
    // The whole story is still there since the snapshot.
    expect((await again.diff({ since: 'snapshot' })).files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);

    expect(await again.applyToWorkingTree(next)).toMatchObject({ clean: true });
    expect(await readFile(path.join(repo, 'b.txt'), 'utf8')).toBe('b agent\n');
    await expect(readFile(path.join(repo, 'c.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await again.workingTreeDiff()).isEmpty).toBe(true);

    // A refresh takes the working tree (what was delivered included) as the new snapshot.
    await writeFile(path.join(repo, 'user.txt'), 'mine\n');
    await resumed.refreshBase();
    expect((await again.workingTreeDiff()).isEmpty).toBe(true);
    await again.writeFile('d.txt', 'd\n');
    expect((await again.workingTreeDiff()).files.map((f) => f.path)).toEqual(['d.txt']);
  });

  it('applyToWorkingTree reports an overlapping edit as a conflict with markers', async () => {
    const repo = await makeRepo({ 'shared.txt': lines(20), 'clean.txt': 'c\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    await sb.writeFile('shared.txt', lines(20).replace('line 10\n', 'line 10 agent\n'));
    await sb.writeFile('clean.txt', 'c2\n');
    await writeFile(path.join(repo, 'shared.txt'), lines(20).replace('line 10\n', 'line 10 user\n'));
    const indexBefore = await readFile(path.join(repo, '.git', 'index'));

    const result = await sb.applyToWorkingTree();

    expect(result.clean).toBe(false);
    expect(result.conflicts).toEqual(['shared.txt']);
    const text = await readFile(path.join(repo, 'shared.txt'), 'utf8');
    expect(text).toMatch(/<<<<<<< [^\n]*\nline 10 user\n=======\nline 10 agent\n>>>>>>> /);
    expect(await readFile(path.join(repo, 'clean.txt'), 'utf8')).toBe('c2\n');
    expect(await readFile(path.join(repo, '.git', 'index'))).toEqual(indexBefore);
  });

  it('gc keeps a SIGKILLed session resumable but stops what it left running; gc({ all }) leaves no processes, mounts, layers or worktrees', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const stateDir = await tempDir('ic-state-crash-');
    const before = await hashTree(repo);
    await runAndKill(repo, stateDir, s.backend, 'busy');
    const sessions = path.join(stateDir, 'sessions');
    expect(await readdir(sessions)).toHaveLength(1);

    const kept = await gc({ stateDir });
    expect(kept).toMatchObject({ removedSessions: [], keptSessions: [expect.any(String)] });
    expect(await leftovers(stateDir, repo)).toEqual({ processes: [], mounts: [] });
    expect(await readdir(sessions)).toHaveLength(1);

    const report = await gc({ stateDir, all: true });

    expect(report.removedSessions).toHaveLength(1);
    expect(await readdir(sessions)).toEqual([]);
    expect(await leftovers(stateDir, repo)).toEqual({ processes: [], mounts: [] });
    expect(await git(repo, 'worktree', 'list', '--porcelain')).not.toContain('\nworktree ');
    expect(await hashTree(repo)).toEqual(before);
  });
}
