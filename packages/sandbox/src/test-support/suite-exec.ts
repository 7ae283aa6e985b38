import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { expect, it } from 'vitest';
import type { SuiteContext } from './backend-suite.js';
import { git, hashTree, makeRepo, pidsWithArg, pidsWithEnvContaining, startTaggedDaemon, writeFiles } from './fixtures.js';

// npm must not phone home from a test (update notifier, audit): loopback only.
const NPM_OFFLINE = {
  npm_config_update_notifier: 'false',
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};

// PF_EXITING in /proc/<pid>/stat's flags field: the kernel is tearing the process down.
const PF_EXITING = 0x4;

/**
 * Dead for every purpose: gone, a zombie, or already inside exit. A killed process closes its
 * files (which is what lets the command's output streams close) a moment before it turns into
 * a zombie, and on a loaded machine a check can land in between.
 */
function isGoneOrZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' || fields[0] === 'X' || (Number(fields[6]) & PF_EXITING) !== 0;
  } catch {
    return true;
  }
}

export function registerExecTests(s: SuiteContext): void {
  it('exec sees the merged view and its writes land only in the sandbox', async () => {
    const repo = await makeRepo({
      'pkg/package.json': JSON.stringify({ name: 'fixture', version: '1.0.0', private: true, type: 'commonjs', scripts: { test: 'node test.js' } }),
      'pkg/test.js': "require('fs').writeFileSync('test-output.txt', 'ran\\n'); console.log('tests ok');\n",
      'tracked.txt': 'v1\n',
    });
    const before = await hashTree(repo);
    const session = await s.open(repo);
    const sb = await session.create();
    await sb.writeFile('tracked.txt', 'v2 from file op\n');

    const node = await sb.run(
      `node -e "const fs=require('fs'); fs.mkdirSync('gen/out',{recursive:true}); fs.writeFileSync('gen/out/x.txt', fs.readFileSync('tracked.txt'))"`,
    );
    expect(node).toMatchObject({ exitCode: 0, cancelled: false });
    expect(await sb.readText('gen/out/x.txt')).toBe('v2 from file op\n');

    const status = await sb.run('git status --porcelain');
    expect(status.exitCode).toBe(0);
    expect(status.stdout).toContain(' M tracked.txt');
    expect(status.stdout).toContain('?? gen/');

    const npm = await sb.run('npm test', { cwd: 'pkg', env: NPM_OFFLINE });
    expect(npm.stdout).toContain('tests ok');
    expect(npm.exitCode).toBe(0);
    expect(await sb.readText('pkg/test-output.txt')).toBe('ran\n');

    if (s.mountsAtRepoPath) {
      const abs = await sb.run(`pwd && echo absolute > ${JSON.stringify(path.join(repo, 'abs.txt'))}`);
      expect(abs.stdout.trim()).toBe(repo);
      expect(await sb.readText('abs.txt')).toBe('absolute\n');
      // A commit past the sandbox's hooks writes objects, refs and the index: none reach the user's .git.
      const gitWrite = await sb.run('git add -A && git -c core.hooksPath=/dev/null -c user.name=a -c user.email=a@b commit -qm agent && git log --oneline | wc -l');
      expect(gitWrite).toMatchObject({ exitCode: 0, stdout: '2\n' });
    }
    expect(existsSync(path.join(repo, 'gen'))).toBe(false);
    expect(await hashTree(repo)).toEqual(before);
  });

  it('shares the ignored node_modules copy-on-write: commands resolve it, writes stay private, diffs skip it', async () => {
    // Own package.json files: module type must not depend on whatever sits above the temp dir.
    const repo = await makeRepo({
      '.gitignore': 'node_modules/\n',
      'package.json': '{ "name": "fixture", "private": true, "type": "commonjs" }\n',
      'app.js': "console.log(require('dep').name);\n",
    });
    await writeFiles(repo, {
      'node_modules/dep/package.json': '{ "name": "dep", "type": "commonjs" }\n',
      'node_modules/dep/index.js': "exports.name = 'dep from user';\n",
    });
    const before = await hashTree(repo);
    const session = await s.open(repo);
    const sb = await session.create();
    expect((await sb.run('node app.js')).stdout).toBe('dep from user\n');
    const patch = await sb.run(`echo "exports.name = 'patched';" > node_modules/dep/index.js && node app.js`);
    expect(patch.stdout).toBe('patched\n');
    await sb.writeFile('app.js', "console.log('v2', require('dep').name);\n");
    const diff = await sb.diff();
    expect(diff.files.map((f) => f.path)).toEqual(['app.js']);
    expect(await hashTree(repo)).toEqual(before);
    const other = await session.create();
    expect((await other.run('node app.js')).stdout).toBe('dep from user\n');
  });

  it('streams stdout and stderr, passes env and reports the exit code', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    const proc = await sb.exec('for i in 1 2 3; do echo "line $i"; done; echo "$GREETING" >&2; exit 3', {
      env: { GREETING: 'hello from env' },
    });
    const chunks: string[] = [];
    proc.stdout.on('data', (b: Buffer) => chunks.push(b.toString()));
    let stderr = '';
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const result = await proc.done;
    expect(result).toEqual({ exitCode: 3, signal: null, cancelled: false });
    expect(chunks.join('')).toBe('line 1\nline 2\nline 3\n');
    expect(stderr).toBe('hello from env\n');
    await expect(sb.exec('true', { cwd: 'missing-dir' })).rejects.toMatchObject({ code: 'not-found' });
    await expect(sb.exec('true', { cwd: '../..' })).rejects.toMatchObject({ code: 'path-escape' });
  });

  it('with stdin: true a command reads what is written to its standard input; without, it reads nothing', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    const echo = await sb.exec('while read -r line; do echo "got $line"; done', { stdin: true });
    let out = '';
    echo.stdout.on('data', (b: Buffer) => (out += b.toString()));
    echo.stdin!.write('one\ntwo\n');
    echo.stdin!.end();
    expect(await echo.done).toMatchObject({ exitCode: 0 });
    expect(out).toBe('got one\ngot two\n');
    const closed = await sb.run('cat; echo "end"');
    expect(closed).toMatchObject({ exitCode: 0, stdout: 'end\n' });
  });

  it('cancelling through the abort signal kills the whole process group', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    const ac = new AbortController();
    // The background child runs (it said so) and outlives the shell's wait; commands have a /proc
    // of their own, so the host finds it by its tag.
    const tag = `bg-${randomUUID()}`;
    const proc = await sb.exec(`${startTaggedDaemon(tag)}; wait`, { signal: ac.signal });
    let seen = '';
    while (!seen.includes('daemon up\n')) {
      const [chunk] = (await once(proc.stdout, 'data')) as [Buffer];
      seen += chunk.toString();
    }
    const [bgPid, ...more] = await pidsWithArg(tag);
    expect(more).toEqual([]);
    expect(isGoneOrZombie(bgPid)).toBe(false);
    ac.abort();
    const result = await proc.done;
    expect(result.cancelled).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(isGoneOrZombie(bgPid)).toBe(true);
  });

  registerContainmentTests(s);

  it('spawning a child while a command runs in the parent leaves that command running in the parent', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const parent = await session.create('parent');
    await parent.writeFile('p.txt', 'before spawn\n');
    expect((await parent.run('mkfifo gate')).exitCode).toBe(0);
    // Blocks on the FIFO until the test opens it for writing: no timing involved.
    const gated = await parent.exec('read line < gate && echo "$line" > after-spawn.txt && rm gate');
    const child = await session.create('child', parent);

    await parent.writeFile('gate', 'released\n');
    expect(await gated.done).toMatchObject({ exitCode: 0, cancelled: false });
    expect(await parent.readText('after-spawn.txt')).toBe('released\n');
    expect(await child.readText('p.txt')).toBe('before spawn\n');
    expect(await child.exists('after-spawn.txt')).toBe(false);
    await child.writeFile('c.txt', 'c\n');
    expect(await parent.exists('c.txt')).toBe(false);
    expect((await child.diff()).files.map((f) => f.path)).toEqual(['c.txt']);
    expect((await parent.diff()).files.map((f) => f.path).sort()).toEqual(['after-spawn.txt', 'p.txt']);

    const later = await session.create('later', parent);
    expect(await later.readText('after-spawn.txt')).toBe('released\n');
  });

  if (s.mountsAtRepoPath) {
    it('mounts a repository whose path has a space, a tab and a backslash, node_modules included; commands cannot write the session storage', async () => {
      const repo = await makeRepo(
        {
          '.gitignore': 'node_modules/\n',
          'package.json': '{ "name": "fixture", "private": true, "type": "commonjs" }\n',
          'app.js': "console.log(require('dep').name);\n",
          'a.txt': 'user\n',
        },
        'ic-repo odd\tname\\x-',
      );
      await writeFiles(repo, { 'node_modules/dep/package.json': '{ "name": "dep", "type": "commonjs" }\n', 'node_modules/dep/index.js': "exports.name = 'dep';\n" });
      const session = await s.open(repo);
      const other = await session.create();
      await other.writeFile('mine.txt', 'other sandbox\n');
      const sb = await session.create();
      const { sessionDir, baseDir } = session.ctx;
      const [otherUpper] = (await readdir(path.join(sessionDir, 'sandboxes'))).map((d) => path.join(sessionDir, 'sandboxes', d, 'upper')).filter((u) => existsSync(path.join(u, 'mine.txt')));
      expect(otherUpper).toBeDefined();
      const q = (p: string): string => `'${p.replaceAll("'", "'\\''")}'`;
      const r = await sb.run(
        `node app.js; cat a.txt; git status --porcelain; echo pwned > ${q(path.join(baseDir, 'a.txt'))}; echo pwned > ${q(path.join(otherUpper, 'mine.txt'))}; ` +
          `echo pwned > ${q(path.join(sessionDir, 'planted'))}; echo pwned > a.txt; echo end`,
      );
      expect(r.stdout).toBe('dep\nuser\nend\n');
      expect(r.stderr).toMatch(/Read-only file system/);
      expect(await readFile(path.join(baseDir, 'a.txt'), 'utf8')).toBe('user\n');
      expect(await readFile(path.join(otherUpper, 'mine.txt'), 'utf8')).toBe('other sandbox\n');
      expect(existsSync(path.join(sessionDir, 'planted'))).toBe(false);
      expect(await sb.readText('a.txt')).toBe('pwned\n');
      expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toBe('user\n');
      expect((await sb.diff()).files.map((f) => f.path)).toEqual(['a.txt']);
    });

    it("the user's .git, node_modules and objects, bound into each sandbox's storage for its overlays, cannot be written there by commands", async () => {
      const repo = await makeRepo({ '.gitignore': 'node_modules/\n', 'a.txt': 'a\n' });
      await writeFiles(repo, { 'node_modules/dep/index.js': "exports.name = 'dep';\n" });
      const before = await hashTree(repo);
      const session = await s.open(repo);
      await (await session.create()).run('true');
      const sb = await session.create();
      const dirs = path.join(session.ctx.sessionDir, 'sandboxes');
      // Every sandbox dir: its own binds are live in its namespace (the one line read from the
      // user's config), a sibling's are plain directories of the read-only storage there.
      const r = await sb.run(
        `for d in ${JSON.stringify(dirs)}/*; do head -1 "$d/stage/git/config"; ` +
          `echo pwned >> "$d/stage/git/config"; mkdir -p "$d/stage/git/hooks"; printf '#!/bin/sh\\ntouch /tmp/ic-hook-ran\\n' > "$d/stage/git/hooks/post-checkout"; ` +
          `echo pwned > "$d/stage/nm0/dep/index.js"; echo pwned > "$d/real-objects/planted"; ` +
          `mount -o remount,rw "$d/stage/git" 2>/dev/null && echo remounted; done; echo end`,
      );
      expect(r.stdout).toBe('[core]\nend\n');
      expect(r.stderr).toMatch(/Read-only file system/);
      expect(await hashTree(repo)).toEqual(before);
      expect(existsSync(path.join(repo, '.git', 'hooks', 'post-checkout'))).toBe(false);
    });

    it('commands run without capabilities and cannot unmount the view to reach the user tree', async () => {
      const repo = await makeRepo({ 'a.txt': 'user\n' });
      const session = await s.open(repo);
      const sb = await session.create();
      const caps = await sb.run('grep CapEff /proc/self/status');
      expect(caps.stdout).toMatch(/CapEff:\s+[0-9a-f]+/);
      if (process.getuid?.() !== 0 || s.backend === 'overlay-userns') expect(caps.stdout).toMatch(/CapEff:\s+0+\n/);
      const escape = await sb.run(`umount -l ${JSON.stringify(repo)}; echo agent > a.txt; cat ${JSON.stringify(path.join(repo, 'a.txt'))}`);
      expect(escape.stdout).toBe('agent\n');
      expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toBe('user\n');
    });
  }

  it("reads the user's HEAD through git inside the sandbox, with its own index, not the user's", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await writeFile(path.join(repo, 'b.txt'), 'b, staged by the user\n');
    await git(repo, 'add', 'b.txt');
    const session = await s.open(repo);
    const sb = await session.create();
    const head = await sb.run('git rev-parse HEAD');
    expect(head.stdout.trim()).toBe(session.snapshot.parent);
    expect(await sb.run('git status --porcelain')).toMatchObject({ exitCode: 0, stdout: ' M b.txt\n' });
    expect(await sb.run('echo model >> a.txt && git add a.txt && git status --porcelain')).toMatchObject({ exitCode: 0, stdout: 'M  a.txt\n M b.txt\n' });
    expect(await readFile(path.join(repo, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(await git(repo, 'status', '--porcelain')).toBe('M  b.txt');
  });
}

/**
 * What a command must not get away with: daemons that leave its process group (setsid) outliving
 * it or its cancel, and the model credentials, in its environment or in any process's it can see.
 */
export function registerContainmentTests(s: SuiteContext): void {
  it('a daemon that left the process group (setsid) dies when its command ends', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    const tag = `daemon-${randomUUID()}`;
    const proc = await sb.exec(startTaggedDaemon(tag, 'setsid'));
    let seen = '';
    proc.stdout.on('data', (b: Buffer) => (seen += b.toString()));
    // The command exits only once its daemon runs: output streams aside, it is already detached.
    const result = await proc.done;
    expect(result).toEqual({ exitCode: 0, signal: null, cancelled: false });
    expect(seen).toBe('daemon up\n');
    expect((await pidsWithArg(tag)).filter((pid) => !isGoneOrZombie(pid))).toEqual([]);
  });

  it('a daemon that left the process group (setsid) dies when its command is cancelled', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    const tag = `daemon-${randomUUID()}`;
    const ac = new AbortController();
    const proc = await sb.exec(`${startTaggedDaemon(tag, 'setsid')}; read x < ${tag}.never`, { signal: ac.signal });
    let seen = '';
    while (!seen.includes('daemon up\n')) {
      const [chunk] = (await once(proc.stdout, 'data')) as [Buffer];
      seen += chunk.toString();
    }
    const pids = await pidsWithArg(tag);
    expect(pids).toHaveLength(1);
    expect(isGoneOrZombie(pids[0])).toBe(false);
    ac.abort();
    expect(await proc.done).toMatchObject({ cancelled: true });
    expect(isGoneOrZombie(pids[0])).toBe(true);
  });

  it('commands see no model credentials: not in their environment, nor in any process they can see', async () => {
    const key = `sk-ant-suite-${randomUUID()}`;
    const saved = { ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN: process.env.ANTHROPIC_AUTH_TOKEN };
    process.env.ANTHROPIC_API_KEY = key;
    process.env.ANTHROPIC_AUTH_TOKEN = `${key}-token`;
    // Stands in for the CLI: a process whose environment (as /proc shows it) holds the key.
    const cli = spawn('sleep', ['300'], { stdio: 'ignore' });
    try {
      const repo = await makeRepo({ 'a.txt': 'a\n' });
      const session = await s.open(repo);
      const sb = await session.create();
      expect(await pidsWithEnvContaining(key)).toEqual([cli.pid]);
      const hunt = await sb.run(
        `grep -a -l -F ${key} /proc/[0-9]*/environ /proc/[0-9]*/task/[0-9]*/environ 2>/dev/null; ` +
          'echo "key=[$ANTHROPIC_API_KEY] token=[$ANTHROPIC_AUTH_TOKEN]"',
      );
      const visible = s.commandsSeeHostProcesses ? [`/proc/${cli.pid}/environ`, `/proc/${cli.pid}/task/${cli.pid}/environ`] : [];
      expect(hunt.stdout).toBe([...visible, 'key=[] token=[]'].join('\n') + '\n');
      // Nothing the sandbox started (namespace holders, git, the command) inherited it.
      expect(await pidsWithEnvContaining(key)).toEqual([cli.pid]);
      // A caller that passes it on purpose still can.
      const explicit = await sb.run('echo "$ANTHROPIC_API_KEY"', { env: { ANTHROPIC_API_KEY: 'explicit' } });
      expect(explicit.stdout).toBe('explicit\n');
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      cli.kill('SIGKILL');
    }
  });
}
