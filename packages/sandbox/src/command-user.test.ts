import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_UID, commandUserFor, compileHelper, idmapHelper, outermost, probeIdmap, trustworthy } from './command-user.js';
import { madeParents, type ViewSpec } from './confined-view.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the command user', () => {
  it('idmaps the outermost directories only, the read-only ones marked optional unless they hold one commands must own', async () => {
    expect(outermost(['/a/b', '/a', '/c/d', '/c/d/e', '/ab'])).toEqual(['/a', '/ab', '/c/d']);
    const user = await commandUserFor(['/state/s1', '/repo'], ['/home/u/.cargo', '/state', '/repo/sub']);
    if (process.getuid?.() !== 0) {
      expect(user).toBeUndefined();
      return;
    }
    expect(user).toMatchObject({ uid: COMMAND_UID, idmap: ['?/home/u/.cargo', '/repo', '/state'] });
  });

  it("shows root's files as the command user's, and the command user's as root's, through idmap-exec", async () => {
    if (process.getuid?.() !== 0) {
      expect(await commandUserFor(['/x'])).toBeUndefined();
      return;
    }
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ic-idmap-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'root.txt'), 'r\n');
    const helper = await idmapHelper();
    // The helper is root's and no one else may change it: it runs as root.
    expect(statSync(helper).uid).toBe(0);
    expect(statSync(helper).mode & 0o022).toBe(0);
    const out = execFileSync(helper, [String(COMMAND_UID), dir, '--', 'sh', '-c', `stat -c %u ${dir}/root.txt; touch ${dir}/made; stat -c %u ${dir}/made`], {
      encoding: 'utf8',
    });
    expect(out).toBe(`${COMMAND_UID}\n0\n`);
    // Outside the helper's namespace the disk says what it always said.
    expect(statSync(path.join(dir, 'root.txt')).uid).toBe(0);
    expect(statSync(path.join(dir, 'made')).uid).toBe(COMMAND_UID);
  });

  it('opens the directories bubblewrap makes on the way to a mount point inside a tmpfs, and no real directory', () => {
    const spec: ViewSpec = {
      userns: false,
      stateDir: '/home/u/.local/state/ic',
      hidden: [{ path: '/home/u/.config/gh', dir: true }],
      covered: { dirs: ['/home/u'], keep: ['/home/u/.cargo/bin', '/home/u/proj'] },
      readOnly: ['/tmp/proj/repo'],
      extraWritable: [],
      writable: ['/home/u/.local/state/ic/sessions/s1'],
      network: false,
      scratchBytes: 1,
      commandUid: COMMAND_UID,
    };
    expect(madeParents(spec)).toEqual([
      '/home/u/.cargo',
      '/home/u/.config',
      '/home/u/.local',
      '/home/u/.local/state',
      '/home/u/.local/state/ic/sessions',
      '/tmp/proj',
    ]);
    // A bind at the very path of a tmpfs is on top of it: what is under it is real.
    expect(madeParents({ ...spec, covered: { dirs: ['/home/u'], keep: ['/home/u'] }, stateDir: '/var/ic', writable: [] })).toEqual([
      '/tmp/proj',
    ]);
  });
});

describe('the idmap helper, where it cannot be trusted or built', () => {
  it('trusts a helper only where no one but its owner (or root) may rename a directory on its way; a sticky one is fine', () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'ic-trust-'));
    dirs.push(base);
    let n = 0;
    const place = (mode: number): string => {
      const open = path.join(base, `open-${mode.toString(8)}-${n++}`);
      mkdirSync(open);
      chmodSync(open, mode);
      const dir = path.join(open, 'infinity-code');
      mkdirSync(dir, { mode: 0o700 });
      const helper = path.join(dir, 'idmap-exec');
      writeFileSync(helper, '', { mode: 0o755 });
      return helper;
    };
    chmodSync(base, 0o755);
    expect(trustworthy(place(0o755))).toBe(true);
    // Anyone may rename infinity-code/ in it, and put a directory of their own there.
    expect(trustworthy(place(0o777))).toBe(false);
    expect(trustworthy(place(0o775))).toBe(false);
    // As in /tmp: no one renames what is not theirs.
    expect(trustworthy(place(0o1777))).toBe(true);
    const helper = place(0o755);
    chmodSync(helper, 0o777);
    expect(trustworthy(helper)).toBe(false);
  });

  it('says to install a C compiler when the helper cannot be built', async () => {
    const dest = path.join(mkdtempSync(path.join(os.tmpdir(), 'ic-cc-')), 'idmap-exec');
    dirs.push(path.dirname(dest));
    const before = process.env.CC;
    process.env.CC = path.join(path.dirname(dest), 'no-such-cc');
    try {
      await expect(compileHelper(dest)).rejects.toThrow(/could not be run.*Install a C compiler \(Debian\/Ubuntu: apt install gcc\), or run infinity-code as a regular user/);
    } finally {
      if (before === undefined) delete process.env.CC;
      else process.env.CC = before;
    }
    expect(existsSync(dest)).toBe(false);
  });

  it('says idmapped mounts are needed where a directory cannot be idmapped', async () => {
    // /proc takes no idmapping on any kernel; as a regular user nothing does.
    expect(await probeIdmap('/proc')).toMatch(/commands cannot be mapped to an unprivileged user here \(idmapped mounts: Linux 5\.19 or later\)/);
  });
});
