// What a sandbox has already delivered to the user's working tree. A working-tree diff starts
// from it, so a change applied once (all of it, or the hunks the user picked) is not offered
// again, while what was left out of an apply still is.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
import { text } from './git.js';
import { sealedGit } from './trusted-git.js';

/**
 * The tree the working tree has received from a sandbox: the snapshot with every patch applied
 * from it. Valid only on the snapshot it was built from: a base refresh takes the working tree,
 * delivered changes included, as the new snapshot.
 */
export interface Delivered {
  /** Tree id of the snapshot the deliveries stand on. */
  snapshot: string;
  tree: string;
}

export function isDelivered(v: unknown): v is Delivered {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Partial<Delivered>;
  return typeof d.snapshot === 'string' && typeof d.tree === 'string';
}

/** Where a working-tree diff starts: what was delivered on the current snapshot, else the snapshot (undefined). */
export function deliveredTree(delivered: Delivered | undefined, snapshotTree: string): string | undefined {
  return delivered && delivered.snapshot === snapshotTree ? delivered.tree : undefined;
}

/**
 * `base` with `patch` applied, as a tree in the session's object store: exact, no merge (the
 * patch was taken from `base`, or from a tree the same at the paths it touches). Undefined when
 * it does not apply there, which leaves the caller's record as it was.
 */
export async function treeWithPatch(ctx: SessionContext, base: string, patch: Buffer): Promise<string | undefined> {
  const git = sealedGit(ctx.plumbingGitDir);
  const index = path.join(ctx.tmpDir, `delivered-${randomUUID()}.index`);
  const opts = { cwd: ctx.tmpDir, env: { ...ctx.objectEnv, GIT_INDEX_FILE: index } };
  try {
    await git(['read-tree', base], opts);
    const applied = await git(['apply', '--cached', '--whitespace=nowarn', '-'], { ...opts, input: patch, okExitCodes: [1, 128] });
    if (applied.exitCode !== 0) return undefined;
    return text(await git(['write-tree'], opts));
  } finally {
    await rm(index, { force: true });
    await rm(`${index}.lock`, { force: true });
  }
}
