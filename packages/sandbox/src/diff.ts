import type { OmittedFile } from './apply-policy.js';
import type { SessionContext } from './backend.js';
import { readObjects } from './blobs.js';
import { NO_MODE, parseRawZ, type RawChange } from './raw-changes.js';
import { sealedGit } from './trusted-git.js';
import { nulNames } from './utf8-names.js';

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type-changed';

export interface ChangedFile {
  /** Repo-relative path after the change (for deletions: the deleted path). */
  path: string;
  /** Path before a rename or copy. */
  oldPath?: string;
  status: ChangeStatus;
  binary: boolean;
  /** Git modes, e.g. '100644', '100755', '120000'; absent on the side that does not exist. */
  oldMode?: string;
  newMode?: string;
  /** Lines added/removed; undefined for binary files. */
  additions?: number;
  deletions?: number;
  /** Where the file points after the change, when it is a symlink then (newMode 120000). */
  linkTarget?: string;
}

export interface SandboxDiff {
  /** The change as a git patch (`git apply` format, binary hunks included). */
  readonly patch: string;
  /** The exact bytes of `patch`; apply these when files may not be valid UTF-8. */
  readonly patchBytes: Buffer;
  readonly files: readonly ChangedFile[];
  /**
   * Changes the sandbox made that this diff leaves out, each with its reason (see OmitRule):
   * they are in neither `patch` nor `files`, and stay at their old version wherever the diff is
   * applied. Show them to the user next to the diff.
   */
  readonly omitted: readonly OmittedFile[];
  /** Tree ids compared (`to` is the sandbox's tree with the omitted changes undone). */
  readonly from: string;
  readonly to: string;
  /** No file to apply (there may still be `omitted` ones to report). */
  readonly isEmpty: boolean;
}

const SYMLINK = '120000';

const STATUS: Record<string, ChangeStatus> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type-changed',
};

const PLAIN = ['--no-ext-diff', '--no-textconv'];

/** The patch from `from` to `to` (see diffTrees), alone. */
export async function patchOf(ctx: SessionContext, from: string, to: string): Promise<Buffer> {
  const out = await sealedGit(ctx.plumbingGitDir)(['diff-tree', '-r', '-p', '--binary', '-M', '--no-color', ...PLAIN, from, to], {
    cwd: ctx.tmpDir,
    env: { ...ctx.objectEnv },
  });
  return out.stdout;
}

/**
 * Plumbing diff between two trees with the session's own git dir: no diff config, external tool or
 * textconv applies. `raw` (diff-tree --raw -M of the same trees) and `patch` (patchOf) may be
 * given when the caller already has them; the line counts come from the patch itself.
 */
export async function diffTrees(
  ctx: SessionContext,
  from: string,
  to: string,
  extra: { omitted?: readonly OmittedFile[]; raw?: readonly RawChange[]; patch?: Buffer } = {},
): Promise<SandboxDiff> {
  const git = sealedGit(ctx.plumbingGitDir);
  const opts = { cwd: ctx.tmpDir, env: { ...ctx.objectEnv } };
  const [patchBytes, raw] = await Promise.all([
    extra.patch ?? (from === to ? Buffer.alloc(0) : patchOf(ctx, from, to)),
    extra.raw ?? git(['diff-tree', '-r', '-z', '-M', '--raw', ...PLAIN, from, to], opts).then((o) => parseRawZ(o.stdout)),
  ]);
  const targets = await readObjects(ctx, raw.filter((c) => c.newMode === SYMLINK).map((c) => c.newId));
  const files = raw.map((c): ChangedFile => {
    const file: ChangedFile = { path: c.path, status: STATUS[c.letter] ?? 'modified', binary: false };
    if (c.oldPath !== undefined) file.oldPath = c.oldPath;
    if (c.oldMode !== NO_MODE) file.oldMode = c.oldMode;
    if (c.newMode !== NO_MODE) file.newMode = c.newMode;
    const target = c.newMode === SYMLINK ? targets.get(c.newId) : undefined;
    if (target !== undefined) file.linkTarget = target.toString('utf8');
    return file;
  });
  const counted = patchLineCounts(patchBytes);
  if (counted.length === files.length) {
    counted.forEach((n, i) => Object.assign(files[i], n.binary ? { binary: true } : { additions: n.additions, deletions: n.deletions }));
  } else {
    // A type change is two patches for one change: git counts those itself.
    applyNumstat(files, (await git(['diff-tree', '-r', '-z', '-M', '--numstat', ...PLAIN, from, to], opts)).stdout);
  }
  const diff: SandboxDiff = {
    patch: patchBytes.toString('utf8'),
    patchBytes,
    files,
    omitted: extra.omitted ?? [],
    from,
    to,
    isEmpty: files.length === 0,
  };
  whole.set(diff, raw);
  return diff;
}

// The raw changes behind each diff made whole from two trees (not a selection of its hunks).
const whole = new WeakMap<SandboxDiff, readonly RawChange[]>();

/**
 * @internal The changes of a diff exactly as its patch holds them, with both sides' object ids,
 * when it was made whole from its two trees; undefined for any other (a selection of hunks).
 */
export function wholeChanges(diff: SandboxDiff): readonly RawChange[] | undefined {
  return whole.get(diff);
}

/**
 * Lines added and removed per file, in patch order (the order of diff-tree's --raw entries), read
 * from the patch as `--numstat` counts them: `+` and `-` lines inside hunks; binary for a binary
 * hunk. Saves a git process per diff. A section starts at "diff --git ": hunk lines start with
 * one of " +-\\", and base85 lines of a binary hunk never contain a space.
 */
export function patchLineCounts(patch: Buffer): Array<{ binary: boolean; additions: number; deletions: number }> {
  const counts: Array<{ binary: boolean; additions: number; deletions: number }> = [];
  let current: { binary: boolean; additions: number; deletions: number } | undefined;
  let inHunks = false;
  let at = 0;
  while (at < patch.length) {
    let eol = patch.indexOf(0x0a, at);
    if (eol === -1) eol = patch.length;
    const first = patch[at];
    if (first === 0x64 /* d */ && patch.subarray(at, at + 11).toString('latin1') === 'diff --git ') {
      current = { binary: false, additions: 0, deletions: 0 };
      counts.push(current);
      inHunks = false;
    } else if (current) {
      if (inHunks) {
        if (first === 0x2b /* + */) current.additions++;
        else if (first === 0x2d /* - */) current.deletions++;
      } else if (first === 0x40 /* @ */ && patch.subarray(at, at + 3).toString('latin1') === '@@ ') {
        inHunks = true;
      } else {
        const line = patch.subarray(at, eol).toString('latin1');
        if (line === 'GIT binary patch' || (line.startsWith('Binary files ') && line.endsWith(' differ'))) current.binary = true;
      }
    }
    at = eol + 1;
  }
  return counts;
}

function applyNumstat(files: ChangedFile[], buf: Buffer): void {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const fields = nulNames(buf);
  for (let i = 0; i < fields.length; ) {
    const [added, deleted, p] = fields[i++].split('\t');
    let target = p;
    if (p === '') {
      i++; // rename source
      target = fields[i++];
    }
    const file = target === undefined ? undefined : byPath.get(target);
    if (!file) continue;
    if (added === '-') file.binary = true;
    else {
      file.additions = Number(added);
      file.deletions = Number(deleted);
    }
  }
}
