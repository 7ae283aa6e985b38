import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
import { GitError } from './errors.js';
import { cleanGitEnv, nulParts } from './git.js';
import { runProcess } from './run-process.js';
import { timed } from './timing.js';
import { sealedGit, sealedScript } from './trusted-git.js';
import { escapedName } from './utf8-names.js';

/** Git's mode for "no entry on this side". */
export const NO_MODE = '000000';

/** One entry of `diff-tree --raw -z`: a changed path with both sides' modes and object ids. */
export interface RawChange {
  /** A, M, D, R, T (C only with copy detection, which is not used). */
  letter: string;
  /** Path after the change; for deletions, the deleted path. Not UTF-8: escaped (see utf8-names.ts). */
  path: string;
  /** The same path as git wrote it: file names need not be UTF-8, and index edits must name the real file. */
  pathBytes: Buffer;
  /** Source of a rename. */
  oldPath?: string;
  oldPathBytes?: Buffer;
  /** NO_MODE on the side where the path does not exist. */
  oldMode: string;
  newMode: string;
  oldId: string;
  newId: string;
}

/** Every change between two trees, renames paired (`-M`), as git lists them. */
export async function rawChanges(ctx: SessionContext, from: string, to: string): Promise<RawChange[]> {
  // A sandbox that changed nothing: no git process to learn that.
  if (from === to) return [];
  // Trees of sandbox content: the session's own git dir, no config anyone else wrote.
  const out = await sealedGit(ctx.plumbingGitDir)(['diff-tree', '-r', '-z', '-M', '--raw', from, to], {
    cwd: ctx.tmpDir,
    env: { ...ctx.objectEnv },
  });
  return parseRawZ(out.stdout);
}

/** Parses `--raw -z` output without decoding paths first (see RawChange.pathBytes). */
export function parseRawZ(buf: Buffer): RawChange[] {
  const fields = nulParts(buf);
  const changes: RawChange[] = [];
  for (let i = 0; i < fields.length; ) {
    // ":<old mode> <new mode> <old id> <new id> <status>"
    const [oldMode, newMode, oldId, newId, status] = fields[i++].toString('latin1').replace(/^:/, '').split(' ');
    const letter = status.charAt(0);
    const first = fields[i++];
    const change: RawChange = {
      letter,
      path: escapedName(first),
      pathBytes: first,
      oldMode: oldMode,
      newMode: newMode,
      oldId: oldId,
      newId: newId,
    };
    if (letter === 'R' || letter === 'C') {
      const second = fields[i++];
      change.oldPath = change.path;
      change.oldPathBytes = first;
      change.path = escapedName(second);
      change.pathBytes = second;
    }
    changes.push(change);
  }
  return changes;
}

// rawChanges, the sizes of both sides' blobs and, for at most $4 changes, the patch (see patchOf),
// in one process: three git processes each cost a spawn of this (large) process and a trip
// through its event loop, on the way from a model's last reply to the applied change. "$@" is
// git's own arguments (the seal, see sealedScript). The sizes come from the ids in the plain raw
// listing (fields 3 and 4), which cat-file looks up without inflating anything. Independent git
// runs go side by side (git's start-up is most of their cost, and there are two cores): the NUL
// listing beside the plain one, the patch beside the sizes.
const FACTS_SCRIPT = `
from=$1; to=$2; out=$3; max=$4; shift 4
git "$@" diff-tree -r -z -M --raw "$from" "$to" > "$out.raw" & listing=$!
# A failure waits for what runs beside it, so nothing writes after the caller cleans up.
git "$@" diff-tree -r --no-abbrev -M --raw "$from" "$to" > "$out.txt" || { c=$?; wait; exit $c; }
# Counted by the shell (up to one past max, all that matters): no process for it.
n=0
while [ "$n" -le "$max" ] && IFS= read -r line; do n=$((n+1)); done < "$out.txt"
patch=
if [ "$n" -gt 0 ] && [ "$n" -le "$max" ]; then
  git "$@" diff-tree -r -p --binary -M --no-color --no-ext-diff --no-textconv "$from" "$to" > "$out.patch" & patch=$!
fi
# ":<old mode> <new mode> <old id> <new id> <status>\\t<path>": both ids, one per line; by the
# shell for a few lines (two processes saved), by cut and tr for many (faster than its loop).
ids() {
  if [ "$n" -le "$max" ]; then
    while read -r m1 m2 a b rest; do printf '%s\\n%s\\n' "$a" "$b"; done < "$out.txt"
  else
    cut -d' ' -f3,4 "$out.txt" | tr ' ' '\\n'
  fi
}
ids | git "$@" cat-file --batch-check='%(objectname) %(objectsize)' > "$out.sizes" || { c=$?; wait; exit $c; }
wait $listing || exit $?
if [ -n "$patch" ]; then wait $patch || exit $?; fi
exit 0
`;

export interface DiffFacts {
  raw: RawChange[];
  /** Sizes in bytes of the blobs on either side, by id. */
  sizes: Map<string, number>;
  /** The patch from `from` to `to`, when there were at most `patchUpTo` changes. */
  patch?: Buffer;
}

/** rawChanges and objectSizes of its blobs, and the patch of a small diff, from one process. */
export async function diffFacts(ctx: SessionContext, from: string, to: string, patchUpTo: number): Promise<DiffFacts> {
  if (from === to) return { raw: [], sizes: new Map() };
  const { gitArgs, env } = sealedScript(ctx.plumbingGitDir);
  const out = path.join(ctx.tmpDir, `facts-${randomUUID()}`);
  const files = ['raw', 'txt', 'sizes', 'patch'].map((ext) => `${out}.${ext}`);
  try {
    const startedAt = performance.now();
    const r = await runProcess('/bin/sh', ['-c', FACTS_SCRIPT, 'diff-facts', from, to, out, String(patchUpTo), ...gitArgs], {
      cwd: ctx.tmpDir,
      env: cleanGitEnv({ ...ctx.objectEnv, ...env }),
    });
    timed('git', startedAt, () => 'diff-tree (facts)');
    if (r.exitCode !== 0) {
      throw new GitError(['diff-tree', from, to], r.stderr.toString('utf8') || String(r.error?.message ?? r.signal ?? ''), r.exitCode, r.error);
    }
    const [raw, sizesText, patch] = await Promise.all([readFile(files[0]), readFile(files[2], 'latin1'), readFile(files[3]).catch(() => undefined)]);
    const sizes = new Map<string, number>();
    for (const line of sizesText.split('\n')) {
      const [id, size] = line.split(' ');
      if (id && size && /^\d+$/.test(size)) sizes.set(id, Number(size));
    }
    return { raw: parseRawZ(raw), sizes, ...(patch ? { patch } : {}) };
  } finally {
    await Promise.all(files.map((f) => rm(f, { force: true })));
  }
}
