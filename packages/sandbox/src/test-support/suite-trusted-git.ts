import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SandboxPathError } from '../index.js';
import type { SuiteContext } from './backend-suite.js';
import { git, lines, makeRepo, tempDir } from './fixtures.js';

/**
 * Programs that do nothing but leave a mark when something runs them, made by the test in a
 * directory outside the repository that this process can write (commands may not be able to).
 * Filters and textconv pass the content through, so a run changes nothing but the mark.
 */
export interface Traps {
  dir: string;
  /** Absolute path of the trap `name`. */
  program(name: TrapName): string;
  /** A directory of hooks (every hook git may run while we use it), each a trap. */
  hooksDir: string;
  /** Names of the traps that ran. */
  fired(): Promise<string[]>;
}

type TrapName = 'clean' | 'smudge' | 'textconv' | 'external-diff' | 'merge-driver' | 'fsmonitor';

const HOOKS = ['post-index-change', 'post-checkout', 'post-merge', 'pre-commit', 'post-commit', 'reference-transaction', 'pre-auto-gc', 'post-rewrite'];

export async function makeTraps(): Promise<Traps> {
  // Commands must see the trap programs to plant them (outside their private /tmp); the session
  // makes the dir writable in the sandbox view (see its open), so a trap our own git ran there
  // could leave its mark: an absent mark then means it never ran, not that it could not write.
  const dir = await tempDir('ic-traps-', '/var/tmp');
  const hooksDir = path.join(dir, 'hooks');
  const marks = path.join(dir, 'fired');
  await mkdir(hooksDir);
  await mkdir(marks);
  const trap = async (file: string, mark: string, then: string): Promise<void> => {
    await writeFile(file, `#!/bin/sh\ntouch '${path.join(marks, mark)}'\n${then}\n`);
    await chmod(file, 0o755);
  };
  const passThrough: Record<TrapName, string> = {
    clean: 'exec cat',
    smudge: 'exec cat',
    textconv: 'exec cat "$1"',
    'external-diff': 'exit 0',
    'merge-driver': 'exit 0',
    fsmonitor: 'exit 0',
  };
  for (const [name, then] of Object.entries(passThrough)) await trap(path.join(dir, `${name}.sh`), name, then);
  for (const hook of HOOKS) await trap(path.join(hooksDir, hook), `hook ${hook}`, 'exit 0');
  return {
    dir,
    hooksDir,
    program: (name) => path.join(dir, `${name}.sh`),
    fired: async () => (await readdir(marks)).sort(),
  };
}

/** git config that would run a trap for every kind of program git runs from config. */
function trapConfig(t: Traps): [string, string][] {
  return [
    ['filter.pwn.clean', t.program('clean')],
    ['filter.pwn.smudge', t.program('smudge')],
    ['diff.pwn.textconv', t.program('textconv')],
    ['diff.external', t.program('external-diff')],
    ['merge.pwn.driver', `${t.program('merge-driver')} %O %A %B`],
    ['core.fsmonitor', t.program('fsmonitor')],
  ];
}

export const ATTRIBUTES = '* filter=pwn diff=pwn merge=pwn\n';

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * What a hostile command can do to the git dir its own git commands use: config naming the traps,
 * hooks in `.git/hooks` (or `core.hooksPath` naming the test's hook traps), and a `.gitattributes`
 * selecting the planted drivers for every file.
 */
export function plantInSandbox(t: Traps, hooks: 'dot-git-hooks' | 'hooks-path'): string {
  const config = trapConfig(t).map(([k, v]) => `git config ${k} ${quote(v)}`);
  const hookCmds =
    hooks === 'hooks-path'
      ? [`git config core.hooksPath ${quote(t.hooksDir)}`]
      : ['mkdir -p .git/hooks', `cp ${quote(t.hooksDir)}/* .git/hooks/`];
  return [...config, ...hookCmds, `printf ${quote(ATTRIBUTES)} > .gitattributes`].join(' && ');
}

export function registerTrustedGitTests(s: SuiteContext): void {
  const restoreEnv: (() => void)[] = [];
  afterEach(() => {
    while (restoreEnv.length > 0) restoreEnv.pop()!();
  });
  const setEnv = (name: string, value: string): void => {
    const before = process.env[name];
    restoreEnv.push(() => {
      if (before === undefined) delete process.env[name];
      else process.env[name] = before;
    });
    process.env[name] = value;
  };

  it('runs nothing a command planted in the sandbox git dir (config drivers, fsmonitor, hooks, attributes) while diffing, squashing, refreshing and applying', async () => {
    const traps = await makeTraps();
    const repo = await makeRepo({ 'a.txt': lines(10), 'b.txt': 'b\n' });
    const session = await s.open(repo, { containment: { writable: [traps.dir] } });
    const parent = await session.create('parent');
    expect(await parent.run(plantInSandbox(traps, 'dot-git-hooks'))).toMatchObject({ exitCode: 0, stderr: '' });
    const child = await session.create('child', parent);
    expect(await child.run(plantInSandbox(traps, 'hooks-path'))).toMatchObject({ exitCode: 0, stderr: '' });
    // The plants are in place: a git that read this sandbox's config would run them.
    expect((await child.run('git config filter.pwn.clean')).stdout.trim()).toBe(traps.program('clean'));
    const childA = lines(10).replace('line 9\n', 'line 9 child\n');
    await child.writeFile('a.txt', childA);
    await child.writeFile('c.txt', 'new\n');

    const own = await child.diff();
    expect(own.files.map((f) => f.path)).toEqual(['a.txt', 'c.txt']);
    expect(own.patch).toContain('+line 9 child\n');
    const all = await child.diff({ since: 'snapshot' });
    expect(all.files.map((f) => f.path)).toEqual(['.gitattributes', 'a.txt', 'c.txt']);
    expect(all.patch).toContain(`+${ATTRIBUTES}`);

    // The parent's edit next to the child's makes the squash fall back to a 3-way merge.
    await parent.writeFile('a.txt', lines(10).replace('line 7\n', 'line 7 parent\n'));
    expect(await child.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    const merged = lines(10).replace('line 7\n', 'line 7 parent\n').replace('line 9\n', 'line 9 child\n');
    expect(await parent.readText('a.txt')).toBe(merged);
    expect(await parent.readText('c.txt')).toBe('new\n');

    await writeFile(path.join(repo, 'b.txt'), 'b from the user\n');
    expect(await session.changedSinceSnapshot()).toEqual(['b.txt']);
    expect((await session.refreshBase()).files).toEqual(['b.txt']);
    expect(await parent.readText('b.txt')).toBe('b from the user\n');
    expect(await child.readText('b.txt')).toBe('b from the user\n');
    expect((await parent.diff({ since: 'snapshot' })).files.map((f) => f.path)).toEqual(['.gitattributes', 'a.txt', 'c.txt']);

    expect(await parent.applyToWorkingTree()).toMatchObject({ clean: true, conflicts: [] });
    expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toBe(merged);
    expect(await readFile(path.join(repo, 'c.txt'), 'utf8')).toBe('new\n');
    expect(await readFile(path.join(repo, 'b.txt'), 'utf8')).toBe('b from the user\n');
    expect(await readFile(path.join(repo, '.gitattributes'), 'utf8')).toBe(ATTRIBUTES);

    expect(await traps.fired()).toEqual([]);
  });

  it('a nested repository among the changes does not make our git read the sandbox .git: a planted fsmonitor never runs', async () => {
    const traps = await makeTraps();
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo, { containment: { writable: [traps.dir] } });
    const sb = await session.create();
    expect(await sb.run(plantInSandbox(traps, 'dot-git-hooks'))).toMatchObject({ exitCode: 0, stderr: '' });
    // `git init sub` makes the backend report a nested repository: whether git ignores where it
    // is was asked with the repository's git dir, which in the view is the sandbox's own.
    expect(await sb.run('git init -q sub && echo x > sub/f.txt && echo changed > a.txt')).toMatchObject({ exitCode: 0 });
    const diff = await sb.diff({ since: 'snapshot' });
    expect(diff.files.map((f) => f.path)).toContain('a.txt');
    expect(diff.omitted.map((o) => o.path)).toContain('sub/');
    expect(await traps.fired()).toEqual([]);
  });

  it("runs nothing from the user's global git config over sandbox content", async () => {
    const traps = await makeTraps();
    // Made before the global config exists: the test's own git would run its hooks.
    const repo = await makeRepo({ 'a.txt': lines(10), 'b.txt': 'b\n' });
    // Outside /tmp, so that commands (whose /tmp is their own) see this home too.
    const home = await tempDir('ic-home-', '/var/tmp');
    const config =
      trapConfig(traps)
        .map(([k, v]) => {
          const dot = k.lastIndexOf('.');
          const [section, sub] = k.slice(0, dot).split('.');
          return `[${section}${sub ? ` "${sub}"` : ''}]\n\t${k.slice(dot + 1)} = ${v}\n`;
        })
        .join('') + `[core]\n\thooksPath = ${traps.hooksDir}\n`;
    await writeFile(path.join(home, '.gitconfig'), config);
    await mkdir(path.join(home, '.config', 'git'), { recursive: true });
    await writeFile(path.join(home, '.config', 'git', 'config'), config);
    setEnv('HOME', home);
    setEnv('XDG_CONFIG_HOME', path.join(home, '.config'));

    // The home shown to commands (it is not by default), so the global config is theirs too.
    const session = await s.open(repo, { containment: { writable: [traps.dir], readable: [home] } });
    const parent = await session.create('parent');
    const child = await session.create('child', parent);
    expect((await child.run('git config --global filter.pwn.clean')).stdout.trim()).toBe(traps.program('clean'));
    await child.writeFile('.gitattributes', ATTRIBUTES);
    await child.writeFile('a.txt', lines(10).replace('line 9\n', 'line 9 child\n'));

    expect((await child.diff()).files.map((f) => f.path)).toEqual(['.gitattributes', 'a.txt']);
    expect((await child.diff({ since: 'snapshot' })).patch).toContain('+line 9 child\n');
    await parent.writeFile('a.txt', lines(10).replace('line 7\n', 'line 7 parent\n'));
    expect(await child.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    expect(await parent.readText('a.txt')).toBe(lines(10).replace('line 7\n', 'line 7 parent\n').replace('line 9\n', 'line 9 child\n'));

    // A refresh writes the user's new version into sandboxes that select the drivers.
    await writeFile(path.join(repo, 'b.txt'), 'b from the user\n');
    expect(await session.changedSinceSnapshot()).toEqual(['b.txt']);
    expect((await session.refreshBase()).files).toEqual(['b.txt']);
    expect(await child.readText('b.txt')).toBe('b from the user\n');
    expect((await parent.diff({ since: 'snapshot' })).files.map((f) => f.path)).toEqual(['.gitattributes', 'a.txt']);

    // applyToWorkingTree is left out: in the user's own tree their global config is theirs to use.
    expect(await traps.fired()).toEqual([]);
  });

  it('a refresh moving the sandbox git state onto the new snapshot writes through no link a command left in its .git', async () => {
    const victim = path.join(await tempDir('ic-victim-'), 'precious.txt');
    await writeFile(victim, 'precious\n');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    // Where the move writes: HEAD and the branch HEAD names, each through a temporary file.
    const plant = `ln -s ${quote(victim)} .git/HEAD.refresh && ln -s ${quote(victim)} .git/REF.refresh && ln -s ${quote(victim)} .git/refs/heads/topic`;
    expect((await sb.run(plant)).exitCode).toBe(0);

    // The user commits on a new branch and edits on: HEAD, the branch and the index move.
    await git(repo, 'checkout', '-qb', 'topic');
    await writeFile(path.join(repo, 'b.txt'), 'b from the user\n');
    await git(repo, 'add', 'b.txt');
    await git(repo, 'commit', '-qm', 'user');
    await writeFile(path.join(repo, 'a.txt'), 'a from the user\n');
    expect((await session.refreshBase()).files).toEqual(['a.txt', 'b.txt']);
    expect(await readFile(victim, 'utf8')).toBe('precious\n');
    expect(await sb.readText('a.txt')).toBe('a from the user\n');
    expect((await sb.run('git symbolic-ref HEAD && git rev-parse HEAD')).stdout).toBe(`refs/heads/topic\n${await git(repo, 'rev-parse', 'HEAD')}\n`);
    expect(await sb.run('git status --porcelain')).toMatchObject({ exitCode: 0, stdout: ' M a.txt\n' });
  });

  it('a refresh leaves a sandbox alone whose branch a command made a link, following none', async () => {
    const victim = path.join(await tempDir('ic-victim-'), 'precious.txt');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const head = await git(repo, 'rev-parse', 'HEAD');
    await writeFile(victim, `${head}\n`);
    const session = await s.open(repo);
    const sb = await session.create();
    // Reads as the pinned commit through the link: never followed, so not taken for the pin.
    expect((await sb.run(`rm .git/refs/heads/main && ln -s ${quote(victim)} .git/refs/heads/main`)).exitCode).toBe(0);

    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'user');
    await writeFile(path.join(repo, 'a.txt'), 'a from the user\n');
    expect((await session.refreshBase()).files).toEqual(['a.txt']);
    expect(await readFile(victim, 'utf8')).toBe(`${head}\n`);
    expect((await sb.run('cat .git/HEAD && readlink .git/refs/heads/main')).stdout).toBe(`ref: refs/heads/main\n${victim}\n`);
  });

  it("ignore rules from outside the tree still apply to sandbox diffs: the repository's info/exclude and the user's global excludes", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    await writeFile(path.join(repo, '.git', 'info', 'exclude'), '*.local\n');
    const home = await tempDir('ic-home-');
    await writeFile(path.join(home, 'global-ignore'), '*.bak\n!keep.bak\n');
    await writeFile(path.join(home, '.gitconfig'), `[core]\n\texcludesFile = ${path.join(home, 'global-ignore')}\n`);
    setEnv('HOME', home);
    setEnv('XDG_CONFIG_HOME', path.join(home, '.config'));

    const session = await s.open(repo);
    const sb = await session.create();
    expect((await sb.run('echo x > notes.local && echo y > old.bak && echo z > keep.bak && echo a2 > a.txt')).exitCode).toBe(0);
    expect((await sb.diff()).files.map((f) => f.path)).toEqual(['a.txt', 'keep.bak']);
    expect((await sb.diff({ since: 'snapshot' })).files.map((f) => f.path)).toEqual(['a.txt', 'keep.bak']);
  });

  it("reads sandbox files as the user's git reads theirs: line-ending settings from their config apply", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    await git(repo, 'config', 'core.autocrlf', 'input');
    const session = await s.open(repo);
    const sb = await session.create();
    await sb.writeFile('crlf.txt', 'one\r\ntwo\r\n');
    const diff = await sb.diff();
    expect(diff.patch).toContain('+one\n+two\n');
    expect(diff.patch).not.toContain('\r');
  });

  it('works in a repository with sha256 object names', async () => {
    const repo = await tempDir('ic-repo-');
    await git(repo, 'init', '-q', '--object-format=sha256', '-b', 'main');
    await writeFile(path.join(repo, 'a.txt'), lines(10));
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'initial');

    const session = await s.open(repo);
    const parent = await session.create('parent');
    const child = await session.create('child', parent);
    await child.writeFile('a.txt', lines(10).replace('line 9\n', 'line 9 child\n'));
    await parent.writeFile('a.txt', lines(10).replace('line 7\n', 'line 7 parent\n'));
    const diff = await child.diff();
    expect(diff.from).toMatch(/^[0-9a-f]{64}$/);
    expect(diff.patch).toContain('+line 9 child\n');
    expect(await child.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    expect(await parent.applyToWorkingTree()).toMatchObject({ clean: true, conflicts: [] });
    expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toBe(lines(10).replace('line 7\n', 'line 7 parent\n').replace('line 9\n', 'line 9 child\n'));
  });

  it('file tools refuse to write into .git, directly or through a symlink, and still read it', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    expect((await sb.run('ln -s .git/config cfg && ln -s .git/hooks hooks && ln -s .git dotgit')).exitCode).toBe(0);
    const config = await sb.readText('.git/config');
    expect(config).toContain('[core]');
    expect(await sb.readText('cfg')).toBe(config);

    const refused = [
      () => sb.writeFile('.git/config', '[core]\n\tfsmonitor = /bin/true\n'),
      () => sb.writeFile('cfg', '[core]\n\tfsmonitor = /bin/true\n'),
      () => sb.writeFile(path.join(sb.root, '.git', 'config'), 'x'),
      () => sb.writeFile('./sub/../.git/config', 'x'),
      () => sb.writeFile('hooks/post-checkout', '#!/bin/sh\n'),
      () => sb.writeFile('dotgit/hooks/pre-commit', '#!/bin/sh\n'),
      () => sb.mkdir('.git/hooks/new'),
      () => sb.mkdir('dotgit/info'),
      () => sb.chmod('cfg', 0o777),
      () => sb.remove('.git/HEAD'),
      () => sb.remove('.git', { recursive: true }),
      () => sb.rename('a.txt', '.git/hooks/pre-commit'),
      () => sb.rename('a.txt', 'hooks/pre-commit'),
      () => sb.rename('.git/config', 'stolen-config'),
      () => sb.rename('.git', 'moved-git'),
    ];
    for (const op of refused) {
      const err = await op().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SandboxPathError);
      expect((err as Error).message).toMatch(/\.git/);
    }
    expect(await sb.readText('.git/config')).toBe(config);
    expect((await sb.run('cat .git/config')).stdout).toBe(config);
    expect(await sb.exists('.git/hooks/pre-commit')).toBe(false);
    expect(await sb.readText('a.txt')).toBe('a\n');

    // Names that only start like .git, nested repositories' .git, and the links themselves are fair game.
    await sb.writeFile('.gitignore', 'x\n');
    await sb.writeFile('.github/workflows/ci.yml', 'on: push\n');
    await sb.writeFile('vendor/lib/.git/config', '[core]\n');
    await sb.remove('cfg');
    await sb.rename('hooks', 'hooks-link');
    expect(await sb.readText('.git/config')).toBe(config);
  });
}
