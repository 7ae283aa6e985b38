import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProbeOutcome } from './backend.js';
import { bwrapUnavailable } from './bwrap-probe.js';
import { COMMAND_UID, idmapHelper, needsCommandUser, probeIdmap } from './command-user.js';
import type { OverlayMode } from './overlay-mounts.js';
import { onPath } from './path-lookup.js';
import { runProcess } from './run-process.js';
import { inheritedEnv } from './secret-env.js';

// Two lowers, an upper, a write (copy-up target), a delete (whiteout) and a read-only
// lowers-only mount: every overlay feature the backend relies on (volatile needs Linux 5.10).
// The read-only one is made from a table, as sandboxes' mounts are (see overlay-mounts.ts).
const PROBE_SCRIPT = `
set -e
O=$1
mount -n -t overlay overlay -o "\${O}volatile,lowerdir=l1:l2,upperdir=u,workdir=w" m
echo new > m/new
rm m/old
test -f u/new
test -c u/old
printf '%s\\n' "infinity-code-probe r overlay ro,\${O}lowerdir=l1:l2 0 0" > table
mount -n -a -T table
test -f r/old
`;

/**
 * Whether overlay sandboxes work here, checked with a real mount in `scratch` (on the state
 * dir's filesystem, since upper dirs go there). Fails on kernels older than 5.11, with AppArmor's
 * unprivileged-userns restriction, under seccomp profiles that block unshare, or on filesystems
 * without user xattrs.
 */
export async function probeOverlay(mode: OverlayMode, scratch: string): Promise<ProbeOutcome> {
  if (process.platform !== 'linux') return { ok: false, detail: 'overlayfs needs Linux' };
  if (mode === 'root' && !needsCommandUser()) return { ok: false, detail: 'needs root (uid 0)' };
  if (mode === 'userns' && needsCommandUser()) {
    return { ok: false, detail: "as root, commands in a user namespace would still be the host's root (overlay-root runs them as an unprivileged user)" };
  }
  for (const tool of ['unshare', 'nsenter', 'mount', 'prlimit']) {
    if (!onPath(tool)) return { ok: false, detail: `${tool} (util-linux) is not installed` };
  }
  // Commands are confined by bubblewrap around the overlay view; without it there is no overlay backend.
  const noBwrap = await bwrapUnavailable();
  if (noBwrap) return { ok: false, detail: noBwrap };
  for (const d of ['l1', 'l2', 'u', 'w', 'm', 'r']) await mkdir(path.join(scratch, d), { recursive: true });
  await writeFile(path.join(scratch, 'l1', 'old'), 'old\n');
  const ns = mode === 'userns' ? ['--user', '--map-current-user', '--keep-caps'] : [];
  // As root, over layers idmapped for the command user, as sandboxes are (see command-user.ts).
  let prefix = ['unshare'];
  if (mode === 'root') {
    const why = await probeIdmap(scratch);
    if (why) return { ok: false, detail: why };
    prefix = [await idmapHelper(), String(COMMAND_UID), scratch, '--', 'unshare'];
  }
  const [file, ...pre] = prefix;
  const r = await runProcess(
    file,
    [...pre, ...ns, '--mount', '--propagation', 'private', '--pid', '--fork', '--kill-child', '--', 'sh', '-c', PROBE_SCRIPT, 'probe', mode === 'userns' ? 'userxattr,' : ''],
    { cwd: scratch, env: inheritedEnv() },
  );
  if (r.exitCode !== 0) {
    return { ok: false, detail: `probe mount failed: ${r.stderr.toString().trim() || `exit ${r.exitCode}`}` };
  }
  return { ok: true, detail: `overlay mount in a ${mode === 'userns' ? 'user' : 'private mount'} namespace works` };
}
