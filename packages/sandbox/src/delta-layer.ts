import { copyFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
import { checkoutWorkers } from './base-snapshot.js';
import { removeTree } from './fs-util.js';
import { makeGitRunner } from './git.js';
import { BASE_LAYER } from './layer-stack.js';
import type { OverlayMode } from './overlay-mounts.js';
import { USER_REPO_SWITCHES } from './trusted-git.js';

/** Where a delta layer and its index live, session-relative. */
export interface DeltaNames {
  layer: string;
  index: string;
}

export const DELTAS_DIR = 'deltas';

export function deltaNames(number: number): DeltaNames {
  return { layer: `${DELTAS_DIR}/r${number}`, index: `${DELTAS_DIR}/r${number}.index` };
}

// cd first: the overlay options name layers relative to the session dir, as the holders' do.
const MOUNT_THEN_EXEC = 'cd "$1" && mount -n -t overlay overlay -o "$2" "$3" && shift 3 && exec "$@"';

/**
 * Builds the delta layer that turns the base (the snapshot checked out at open) into the tree
 * `next`: the upper of a short-lived overlay over the base alone, written by git itself
 * (`read-tree -u` of the two trees touches only the paths that differ). Deletions, replaced
 * directories and type changes thus come out as the kernel's own whiteouts and opaque
 * directories, for this mode's xattr namespace; and the index git leaves has stat data for
 * every file as the sandboxes' overlays show it, so `git status` in them stays fast. Always made
 * from the base, never from an earlier delta, so one layer covers every refresh: cost follows
 * the files that differ from the base, not the repository. Nothing uses the names until the
 * session records them, so a crash here leaves only garbage, and a retry starts over.
 */
export async function buildDeltaLayer(ctx: SessionContext, mode: OverlayMode, next: string, names: DeltaNames): Promise<void> {
  const { sessionDir } = ctx;
  const name = path.basename(names.layer);
  const scratch = path.join(ctx.tmpDir, `delta-${name}`);
  const layer = path.join(sessionDir, names.layer);
  const index = path.join(sessionDir, names.index);
  const partialIndex = `${index}.partial`;
  for (const p of [scratch, layer]) await removeTree(p);
  for (const p of [index, partialIndex, `${partialIndex}.lock`]) await rm(p, { force: true });
  await mkdir(layer, { recursive: true });
  await mkdir(path.join(scratch, 'work'), { recursive: true });
  await mkdir(path.join(scratch, 'view'), { recursive: true });
  await copyFile(ctx.baseDirIndex, partialIndex);
  try {
    const options = [
      ...(mode === 'userns' ? ['userxattr'] : []),
      // No sync at unmount, as for the sandboxes' own layers (see the holder).
      'volatile',
      `lowerdir=${BASE_LAYER}`,
      `upperdir=${names.layer}`,
      `workdir=${path.relative(sessionDir, path.join(scratch, 'work'))}`,
    ].join(',');
    const ns = mode === 'userns' ? ['--user', '--map-current-user', '--keep-caps'] : [];
    const view = path.join(scratch, 'view');
    const git = makeGitRunner(['unshare', ...ns, '--mount', '--propagation', 'private', '--', 'sh', '-c', MOUNT_THEN_EXEC, 'delta-layer', sessionDir, options, view]);
    const workers = `checkout.workers=${checkoutWorkers()}`;
    // The user's snapshot into a layer of ours: their repository and config, as for the base.
    await git([`--git-dir=${ctx.repo.gitDir}`, `--work-tree=${view}`, ...USER_REPO_SWITCHES, '-c', workers, 'read-tree', '--reset', '-u', ctx.baseTree, next], {
      cwd: sessionDir,
      env: { ...ctx.objectEnv, GIT_INDEX_FILE: partialIndex },
    });
    await rename(partialIndex, index);
  } finally {
    await removeTree(scratch);
    await rm(partialIndex, { force: true });
  }
}

/**
 * Deletes what the deltas directory holds besides the current refresh's layer and index: the
 * previous refresh's (superseded once the sandboxes moved on), or a build a crash interrupted.
 */
export async function dropUnusedDeltas(sessionDir: string, current: { layer?: string; index: string } | undefined): Promise<void> {
  const keep = new Set([current?.layer, current?.index].filter((n): n is string => n !== undefined));
  for (const name of await readdir(path.join(sessionDir, DELTAS_DIR)).catch(() => [] as string[])) {
    const rel = `${DELTAS_DIR}/${name}`;
    if (!keep.has(rel)) await removeTree(path.join(sessionDir, rel));
  }
}
