import { lstat, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
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
  // Commands own this git dir: links in it (to the user's .git, say) are not followed.
  if (!(await lstat(gitDir).catch(() => undefined))?.isDirectory()) return;
  const headFile = path.join(gitDir, 'HEAD');
  if (!(await lstat(headFile).catch(() => undefined))?.isFile()) return;
  const head = (await readFile(headFile, 'utf8').catch(() => '')).trim();
  if (head !== from) return;
  const index = path.join(gitDir, 'index');
  // git replaces an index by rename, so a seeded index hard-linked to the base's stays intact.
  if ((await lstat(index).catch(() => undefined))?.isFile()) await applyToIndex(ctx, index, changes);
  const tmp = `${headFile}.refresh`;
  // Created afresh: a link a command left under this name is replaced, never written through.
  await rm(tmp, { force: true });
  await writeFile(tmp, `${to}\n`, { flag: 'wx' });
  await rename(tmp, headFile);
}
