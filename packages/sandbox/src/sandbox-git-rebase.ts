import { constants } from 'node:fs';
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
import { lstatIn, O_DIR, under } from './fd-path.js';
import { applyToIndex, type TreeChange } from './tree-changes.js';

/**
 * Moves a sandbox's private git state onto a refreshed snapshot, so `git status` and `git diff`
 * run by commands in the sandbox keep showing only its own work. Only while it stands where the
 * session put it (HEAD detached at the old snapshot commit): after a commit made in the sandbox,
 * its history and index are the sandbox's own and stay as they are. The index takes the new
 * snapshot's entries at the changed paths (other entries, stat data included, stay), then HEAD
 * moves: in that order, so a crash in between leaves HEAD behind and a repeat does both again.
 */
export async function moveSandboxGit(ctx: SessionContext, gitDir: string, from: string, to: string, changes: readonly TreeChange[]): Promise<void> {
  // Commands own this git dir: links in it (to the user's .git, say) are not followed, and it is
  // held open so that a link swapped in for it later leads nowhere (see fd-path.ts).
  const dir = await open(gitDir, O_DIR).catch(() => undefined);
  if (!dir) return;
  try {
    if (!(await lstatIn(dir, 'HEAD'))?.isFile()) return;
    const head = (await readFile(under(dir, 'HEAD'), { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW }).catch(() => '')).trim();
    if (head !== from) return;
    // git replaces an index by rename, so a seeded index hard-linked to the base's stays intact.
    // git is another process: it reaches our descriptor through our pid, not /proc/self.
    const pinned = `/proc/${process.pid}/fd/${dir.fd}`;
    if ((await lstatIn(dir, 'index'))?.isFile()) await applyToIndex(ctx, path.join(pinned, 'index'), changes);
    const tmp = under(dir, 'HEAD.refresh');
    // Created afresh: a link a command left under this name is replaced, never written through.
    await rm(tmp, { force: true });
    await writeFile(tmp, `${to}\n`, { flag: 'wx' });
    await rename(tmp, under(dir, 'HEAD'));
  } finally {
    await dir.close();
  }
}
