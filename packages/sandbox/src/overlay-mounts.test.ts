import { chmod, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fstabField, overlayFstab, overlaySetup, type MountPlan } from './overlay-mounts.js';
import { probeOverlay } from './overlay-probe.js';
import { runProcess } from './run-process.js';
import { unavailableReason } from './test-support/availability.js';
import { cleanupTempDirs, tempDir } from './test-support/fixtures.js';

const plan: MountPlan = {
  sessionDir: '/state/sessions/s 1',
  sandboxRel: 'sandboxes/s2',
  repoRoot: '/home/me/my repo\t\\x',
  lowers: 'layers/s1.1:meta:base',
  spawnLowers: 'layers/s1.1:meta:base',
  snapshotLowers: undefined,
  heavyDirs: ['node_modules', 'web/node_modules'],
  realObjects: '/home/me/my repo\t\\x/.git/objects',
};

describe('overlayFstab', () => {
  it('escapes whitespace and backslashes the way libmount reads them back', () => {
    expect(fstabField('/a b\tc\nd\\e')).toBe('/a\\040b\\011c\\012d\\134e');
    expect(fstabField('/plain/path')).toBe('/plain/path');
  });

  it('binds the real .git and node_modules before the merged view covers them, then stacks the private overlays on the binds', () => {
    const lines = overlayFstab('root', plan, 'tag-1', () => true);
    const targets = lines.map((l) => l.split(' ')[1]);
    const repo = fstabField(plan.repoRoot);
    expect(targets).toEqual([
      '/state/sessions/s\\0401/sandboxes/s2/real-objects',
      '/state/sessions/s\\0401/sandboxes/s2/stage/git',
      '/state/sessions/s\\0401/sandboxes/s2/stage/nm0',
      '/state/sessions/s\\0401/sandboxes/s2/stage/nm1',
      '/state/sessions/s\\0401/sandboxes/s2/lv',
      repo,
      `${repo}/.git`,
      `${repo}/node_modules`,
      `${repo}/web/node_modules`,
      '/state/sessions/s\\0401/objects',
      '/state/sessions/s\\0401/tmp',
    ]);
    // Every field is one word: nothing unescaped splits a line.
    for (const l of lines) expect(l.split(' ')).toHaveLength(6);
    expect(lines[1]).toBe(`${repo}/.git /state/sessions/s\\0401/sandboxes/s2/stage/git none bind,ro 0 0`);
    expect(lines[5]).toBe(`tag-1 ${repo} overlay volatile,lowerdir=layers/s1.1:meta:base,upperdir=sandboxes/s2/upper,workdir=sandboxes/s2/work 0 0`);
    expect(lines[8]).toContain('lowerdir=sandboxes/s2/stage/nm1,upperdir=sandboxes/s2/nm1/upper');
    expect(lines.at(-1)).toMatch(/ none bind 0 0$/);
  });

  it('skips a node_modules the user deleted, keeping the others at their positions; userns overlays get userxattr; the snapshot view when there is one', () => {
    const lines = overlayFstab('userns', { ...plan, snapshotLowers: 'deltas/d1:base' }, 'tag-2', (p) => !p.endsWith('/web/node_modules'));
    expect(lines.some((l) => l.includes('nm1'))).toBe(false);
    expect(lines.filter((l) => l.includes('nm0'))).toHaveLength(2);
    expect(lines.filter((l) => l.includes(' overlay ')).every((l) => l.includes('userxattr,'))).toBe(true);
    expect(lines.find((l) => l.includes('/sv '))).toBe('tag-2 /state/sessions/s\\0401/sandboxes/s2/sv overlay ro,userxattr,lowerdir=deltas/d1:base 0 0');
  });

  it('a folder without a repository: no .git bind or overlay, and no objects of a git dir to keep reachable', () => {
    const lines = overlayFstab('root', { ...plan, folder: true }, 'tag-3', () => true);
    const repo = fstabField(plan.repoRoot);
    expect(lines.map((l) => l.split(' ')[1])).toEqual([
      '/state/sessions/s\\0401/sandboxes/s2/stage/nm0',
      '/state/sessions/s\\0401/sandboxes/s2/stage/nm1',
      '/state/sessions/s\\0401/sandboxes/s2/lv',
      repo,
      `${repo}/node_modules`,
      `${repo}/web/node_modules`,
      '/state/sessions/s\\0401/objects',
      '/state/sessions/s\\0401/tmp',
    ]);
    expect(lines.join('\n')).not.toMatch(/\.git|real-objects|stage\/git/);
  });

  it('gives each holder its own overlay source, and tells the script how many mounts to expect', () => {
    const a = overlaySetup('root', plan);
    const b = overlaySetup('root', plan);
    const tag = (s: typeof a): string => s.args[2].split('\n').find((l) => l.includes(' overlay '))!.split(' ')[0];
    expect(tag(a)).toMatch(/^infinity-code-[0-9a-f]{12}$/);
    expect(tag(a)).not.toBe(tag(b));
    expect(Number(a.args[3])).toBe(a.args[2].trim().split('\n').length);
  });
});

// The holder's script itself, in a private mount namespace (needs root, as the overlay-root backend).
const reason = await unavailableReason('overlay-root');
describe.skipIf(reason !== undefined)(`the holder's mount script${reason === undefined ? '' : ` (not run here: ${reason})`}`, () => {
  afterAll(cleanupTempDirs);

  async function runScript(tableFor: (sessionDir: string) => string[]): Promise<{ exitCode: number | undefined; stderr: string; mounts: string; sessionDir: string }> {
    const { script } = overlaySetup('root', plan);
    const dir = await tempDir('ic-mount-script-');
    const table = tableFor(dir);
    await mkdir(path.join(dir, 'sb'));
    // The script's caller shows it the session dir as a mount of its own (bubblewrap's --bind).
    const sh = `mount --bind "$0" "$0" && sh -c "$1" holder "$0" sb "$2" "$3" && cat /proc/self/mountinfo`;
    const r = await runProcess('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', sh, dir, script, `${table.join('\n')}\n`, String(table.length)], { cwd: dir });
    return { exitCode: r.exitCode, stderr: r.stderr.toString(), mounts: r.stdout.toString(), sessionDir: dir };
  }

  it('makes every mount of the table, then the session dir read-only', async () => {
    const dir = await tempDir('ic-mount-src-');
    await mkdir(path.join(dir, 'from'));
    await writeFile(path.join(dir, 'from', 'f'), 'x');
    const target = await tempDir('ic-mount-to-');
    const r = await runScript(() => [`${fstabField(path.join(dir, 'from'))} ${fstabField(target)} none bind,ro 0 0`]);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    // mountinfo: "<id> <parent> <dev> <root> <mount point> <options> ..."; the last mount at a point is the one seen.
    const options = (at: string): string | undefined => r.mounts.split('\n').map((l) => l.split(' ')).findLast((f) => f[4] === fstabField(at))?.[5];
    expect(options(target)).toMatch(/^ro,/);
    expect(options(r.sessionDir)).toMatch(/^ro,/);
  });

  it('the overlay probe fails where mount(8) cannot read a table, before any sandbox would', async () => {
    const bin = await tempDir('ic-old-mount-');
    // A mount(8) from before tables (-T): everything else goes to the real one.
    await writeFile(path.join(bin, 'mount'), `#!/bin/sh\nfor a; do [ "$a" = -T ] && { echo "mount: unrecognized option '-T'" >&2; exit 1; }; done\nexec /usr/bin/mount "$@"\n`);
    await chmod(path.join(bin, 'mount'), 0o755);
    const saved = process.env.PATH;
    process.env.PATH = `${bin}:${saved ?? ''}`;
    try {
      const outcome = await probeOverlay('root', await tempDir('ic-probe-'));
      expect(outcome.ok).toBe(false);
      expect(outcome.detail).toContain("unrecognized option '-T'");
    } finally {
      process.env.PATH = saved;
    }
    expect((await probeOverlay('root', await tempDir('ic-probe-'))).ok).toBe(true);
  });

  it('the overlay probe needs no setpriv (the holder is bubblewrap alone)', async () => {
    const bin = await tempDir('ic-no-setpriv-');
    const saved = process.env.PATH ?? '';
    // Every program on PATH but setpriv.
    for (const dir of saved.split(':').filter(Boolean).reverse()) {
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (name !== 'setpriv') await symlink(path.join(dir, name), path.join(bin, name)).catch(() => undefined);
      }
    }
    process.env.PATH = bin;
    try {
      expect(await probeOverlay('root', await tempDir('ic-probe-'))).toMatchObject({ ok: true });
    } finally {
      process.env.PATH = saved;
    }
  });

  it('fails when mount -a skips an entry it takes for already mounted, instead of going on without it', async () => {
    // A remount of what is mounted (here the session dir): `mount -a` says "already mounted" and exits 0.
    const r = await runScript((dir) => [`${fstabField(dir)} ${fstabField(dir)} none remount,bind,ro 0 0`]);
    expect(r.stderr).toContain("only 0 of the sandbox's 1 mounts were made");
    expect(r.exitCode).not.toBe(0);
  });
});
