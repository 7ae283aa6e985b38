import type { GitRunner } from './git.js';
import { nulList } from './utf8-names.js';

export interface StageRequest {
  /** Bound to the git dir to use (see trusted-git.ts). */
  git: GitRunner;
  /** Work tree as `git` sees it. */
  workTree: string;
  /** Index file to update in place. */
  index: string;
  /** Names that are not UTF-8 escaped (see utf8-names.ts). */
  paths: readonly string[];
  /** Extra env (object directory routing). */
  env: Readonly<Record<string, string>>;
  cwd: string;
}

function run(req: StageRequest, flags: string[]): Promise<unknown> {
  if (req.paths.length === 0) return Promise.resolve();
  return req.git([`--work-tree=${req.workTree}`, 'update-index', '-z', ...flags, '--stdin'], {
    cwd: req.cwd,
    env: { ...req.env, GIT_INDEX_FILE: req.index },
    input: nulList(req.paths),
  });
}

/**
 * Drops `paths` from the index. git trusts matching stat data, and overlay keeps a file's inode
 * across copy-up, so a same-size rewrite within the second of the base checkout looks unchanged
 * to `update-index`: without its entry, git has to hash the file.
 */
export function dropPaths(req: StageRequest): Promise<unknown> {
  return run(req, ['--force-remove']);
}

/** Stages what the work tree has at `paths` (missing there: removed from the index). */
export function addPaths(req: StageRequest): Promise<unknown> {
  return run(req, ['--add', '--remove', '--replace']);
}
