// What of an agent's diff may reach a user's files: the rules, without any I/O. The facts they
// need (sizes, symlink targets, nested repositories, paths too long to read, the user's ignored
// files and what their tree has in the way) are gathered by policy-diff.ts, the backends and
// working-tree-facts.ts; the diff that is applied is the original minus what this leaves out.
import { MAX_PATH_BYTES, MAX_PATH_DEPTH, pathBytes, tooLongPrefix } from './long-paths.js';
import { hasOddBytes, shownName } from './utf8-names.js';

const MB = 1024 * 1024;
const MAX_LINK_HOPS = 40;
const SYMLINK = '120000';
const GITLINK = '160000';

export type OmitRule =
  /**
   * A path whose name is not valid UTF-8 (a Latin-1 "café"): patches, file views and messages
   * carry names as UTF-8, so the change cannot be carried faithfully (see utf8-names.ts).
   */
  | 'non-utf8-name'
  /**
   * A path too long (or too deep) to be carried (see long-paths.ts). Reported once per directory
   * where the limit is crossed, with a trailing `/`, for everything under it.
   */
  | 'path-too-long'
  /** A path inside a `.git` directory, at any depth. */
  | 'git-dir'
  /** A path inside one of ApplyPolicyOptions.reservedDirs (the CLI's `.infinity`). */
  | 'reserved-dir'
  /** Files of a git repository the agent made (or changed) inside the repository, or a gitlink. */
  | 'nested-repo'
  /** A symlink leading out of the repository, or into `.git` or a reserved directory. */
  | 'outside-symlink'
  /** A file the user's working tree has, ignored by the user's rules: the agent never saw it. */
  | 'user-ignored'
  /**
   * The user's working tree has something in the way the change cannot go through or replace:
   * a symlink or a file where the path needs a directory, or a directory holding files the
   * agent never saw where the change puts a file (see Obstacle).
   */
  | 'in-the-way'
  /** Bigger than ApplyPolicyOptions.maxFileBytes. */
  | 'too-large'
  /** The diff as a whole would outgrow what git's output can carry. */
  | 'diff-too-large'
  /** Kept at its old version because another file left out occupies its place in the tree. */
  | 'blocked';

/** A change left out of a diff, and why, in words for the user. */
export interface OmittedFile {
  /**
   * Repo-relative path; for 'nested-repo', the repository's directory with a trailing `/`; for
   * 'non-utf8-name', with git's octal escapes for the bytes that are not UTF-8 (`caf\351.txt`).
   */
  path: string;
  rule: OmitRule;
  /** A sentence for the user (it does not repeat `path`, except for nested repositories). */
  reason: string;
  /** Bytes of the bigger side, for 'too-large' and 'diff-too-large'. */
  size?: number;
  /** Where the link points, for 'outside-symlink'. */
  target?: string;
}

/** What the user's working tree has in the way of a change (see OmitRule 'in-the-way'). */
export type Obstacle =
  /** A symlink or a file at `at`, a directory above one of the change's paths, that the diff keeps. */
  | { kind: 'symlink' | 'file'; at: string }
  /** A directory at the path the change writes a file to, holding what the diff does not remove. */
  | { kind: 'dir' };

export interface ApplyPolicyOptions {
  /** A file bigger than this, before or after the change, is left out at its old version. */
  maxFileBytes: number;
  /** Top-level directories no diff may touch (the CLI keeps its config and sessions in `.infinity`). */
  reservedDirs: readonly string[];
  /**
   * Estimated patch bytes the whole diff may hold: git's output is read into one buffer (100 MB,
   * execa's default, in git.ts), and a diff that overflows it fails whole.
   */
  maxDiffBytes: number;
}

export const DEFAULT_MAX_FILE_BYTES = 20 * MB;

export const DEFAULT_APPLY_POLICY: ApplyPolicyOptions = {
  maxFileBytes: DEFAULT_MAX_FILE_BYTES,
  reservedDirs: ['.infinity'],
  maxDiffBytes: 90 * MB,
};

/** One change as the rules see it. */
export interface PolicyChange {
  /** Path after the change (the deleted path for deletions); names that are not UTF-8 escaped (see utf8-names.ts). */
  path: string;
  /** Source of a rename. */
  oldPath?: string;
  /** Git modes; absent on the side where the path does not exist. */
  oldMode?: string;
  newMode?: string;
  /** Bytes of each side's blob. */
  oldSize?: number;
  newSize?: number;
  /** Where the new side points, when it is a symlink. */
  linkTarget?: string;
}

export interface PolicyFacts {
  /** Directories (repo-relative, no trailing slash) that hold a git repository of their own. */
  nestedRepos: ReadonlySet<string>;
  /**
   * Symlinks of the tree the diff leads to, with their targets: at least those the new links'
   * targets lead through (links may lead through links).
   */
  links: LinkLookup;
  /**
   * Paths the user's working tree has, ignored there by the user's rules (so never part of the
   * snapshot the agent started from). Only known when the diff is meant for the working tree.
   */
  userIgnored?: ReadonlySet<string>;
  /**
   * What the user's working tree has in the way of a change, by the change's path. Only known
   * when the diff is meant for the working tree.
   */
  obstacles?: ReadonlyMap<string, Obstacle>;
  /**
   * Paths the sandbox holds that were too long to read (see long-paths.ts), as tooLongPrefix
   * gives them: they are in neither tree, and are only reported.
   */
  tooLong?: readonly string[];
}

export interface Classified<C extends PolicyChange> {
  kept: C[];
  /** The changes left out, to be undone in the tree the diff leads to. */
  dropped: C[];
  /** What to tell the user: one entry per dropped change, one per nested repository. */
  omitted: OmittedFile[];
}

/**
 * Splits `changes` into those that may be applied and those left out, each with its reason.
 * First rule that matches wins, in this order: names that are not UTF-8, paths too long, .git,
 * reserved directories, nested repositories, symlinks leading out, the user's ignored files,
 * what the working tree has in the way, size per file, size of the whole diff.
 */
export function classifyChanges<C extends PolicyChange>(changes: readonly C[], facts: PolicyFacts, opts: ApplyPolicyOptions): Classified<C> {
  const kept: C[] = [];
  const dropped: C[] = [];
  const omitted: OmittedFile[] = [];
  const repos = new Map<string, OmittedFile>();
  const nestedRepoOf = (p: string): string | undefined => (facts.nestedRepos.size === 0 ? undefined : ancestors(p).find((a) => facts.nestedRepos.has(a)));
  const repoEntry = (dir: string, reason: string): OmittedFile => {
    let entry = repos.get(dir);
    if (!entry) {
      entry = { path: `${dir}/`, rule: 'nested-repo', reason };
      repos.set(dir, entry);
    }
    return entry;
  };
  for (const dir of [...facts.nestedRepos].sort()) repoEntry(dir, nestedRepoReason(dir));
  // One entry per directory where the limit is crossed, whether the backend met it or the diff has it.
  const tooLong = new Map<string, OmittedFile>();
  const tooLongEntry = (prefix: string): OmittedFile => {
    let entry = tooLong.get(prefix);
    if (!entry) {
      entry = { path: prefix, rule: 'path-too-long', reason: tooLongReason(prefix) };
      tooLong.set(prefix, entry);
    }
    return entry;
  };
  for (const prefix of facts.tooLong ?? []) tooLongEntry(prefix);

  let budget = opts.maxDiffBytes;
  for (const c of changes) {
    const paths = c.oldPath === undefined ? [c.path] : [c.oldPath, c.path];
    const drop = (entry: OmittedFile | undefined): void => {
      dropped.push(c);
      if (entry) omitted.push(entry);
    };
    const oddName = paths.find(hasOddBytes);
    if (oddName !== undefined) {
      drop({ path: shownName(oddName), rule: 'non-utf8-name', reason: nonUtf8Reason(c.newMode === undefined) });
      continue;
    }
    const long = paths.map(tooLongPrefix).find((p) => p !== undefined);
    if (long !== undefined) {
      const known = tooLong.has(long);
      const entry = tooLongEntry(long);
      drop(known ? undefined : entry);
      continue;
    }
    const gitPath = paths.find(isInGitDir);
    if (gitPath !== undefined) {
      drop({ path: c.path, rule: 'git-dir', reason: 'inside a .git directory, which belongs to git: the agent may not change it' });
      continue;
    }
    const reserved = paths.map((p) => reservedDirOf(p, opts.reservedDirs)).find((d) => d !== undefined);
    if (reserved !== undefined) {
      drop({ path: c.path, rule: 'reserved-dir', reason: reservedReason(reserved) });
      continue;
    }
    const repo = paths.map(nestedRepoOf).find((d) => d !== undefined);
    if (repo !== undefined) {
      repoEntry(repo, nestedRepoReason(repo));
      drop(undefined);
      continue;
    }
    if (c.oldMode === GITLINK || c.newMode === GITLINK) {
      repoEntry(c.path, `${c.path}/ is a git repository of its own (a submodule or nested repository); changes to it were not included`);
      drop(undefined);
      continue;
    }
    if (c.newMode === SYMLINK) {
      const why = linkProblem(c.path, c.linkTarget, facts.links, opts.reservedDirs);
      if (why !== undefined) {
        drop({ path: c.path, rule: 'outside-symlink', reason: why, ...(c.linkTarget !== undefined ? { target: c.linkTarget } : {}) });
        continue;
      }
    }
    if (createsPath(c) && facts.userIgnored?.has(c.path)) {
      drop({
        path: c.path,
        rule: 'user-ignored',
        reason: 'your working tree has its own copy, ignored by your git rules: the agent never saw it, so yours was left as it is',
      });
      continue;
    }
    const obstacle = facts.obstacles?.get(c.path);
    if (obstacle !== undefined) {
      drop({ path: c.path, rule: 'in-the-way', reason: obstacleReason(obstacle) });
      continue;
    }
    const size = Math.max(c.oldSize ?? 0, c.newSize ?? 0);
    if (size > opts.maxFileBytes) {
      drop({
        path: c.path,
        rule: 'too-large',
        size,
        reason: `${formatBytes(size)}, over the ${formatBytes(opts.maxFileBytes)} limit for one file: left as it was`,
      });
      continue;
    }
    const cost = patchCost(c);
    if (cost > budget) {
      drop({
        path: c.path,
        rule: 'diff-too-large',
        size,
        reason: `${formatBytes(size)}: the diff had reached ${formatBytes(opts.maxDiffBytes - budget)}, near the most git's output can carry: left as it was`,
      });
      continue;
    }
    budget -= cost;
    kept.push(c);
  }
  const blocked = blockedByDropped(kept, dropped);
  for (const { change, by } of blocked) {
    kept.splice(kept.indexOf(change), 1);
    dropped.push(change);
    omitted.push({ path: change.path, rule: 'blocked', reason: `its place is taken by ${shownName(by)}, which was left as it was` });
  }
  // Nested repositories come first in the report (one line each, however many files), then the
  // files in diff order. Paths too long the backend met, and no change has, come with them.
  const unmet = [...tooLong.values()].filter((e) => !omitted.includes(e));
  return { kept, dropped, omitted: [...repos.values(), ...unmet, ...omitted] };
}

/** Whether a change brings its path into being: an addition, or the new side of a rename. */
export function createsPath(c: PolicyChange): boolean {
  return c.newMode !== undefined && (c.oldMode === undefined || c.oldPath !== undefined);
}

/**
 * Kept changes that cannot coexist with the old version of a dropped one: a file restored where
 * the kept change needs a directory, or the other way round. Repeated until nothing moves, since
 * each change dropped here restores an old version too.
 */
function blockedByDropped<C extends PolicyChange>(kept: readonly C[], dropped: readonly C[]): Array<{ change: C; by: string }> {
  const out: Array<{ change: C; by: string }> = [];
  const restored = new Set<string>();
  const restoredDirs = new Map<string, string>();
  const restore = (c: C): void => {
    if (c.oldMode === undefined) return;
    const p = c.oldPath ?? c.path;
    restored.add(p);
    for (const a of ancestors(p)) if (!restoredDirs.has(a)) restoredDirs.set(a, p);
  };
  dropped.forEach(restore);
  if (restored.size === 0) return out;
  let remaining = kept.filter((c) => c.newMode !== undefined);
  for (let moved = true; moved; ) {
    moved = false;
    for (const c of remaining) {
      const under = ancestors(c.path).find((a) => restored.has(a));
      const over = restoredDirs.get(c.path);
      const by = under ?? over;
      if (by === undefined) continue;
      out.push({ change: c, by });
      restore(c);
      moved = true;
    }
    remaining = remaining.filter((c) => !out.some((o) => o.change === c));
  }
  return out;
}

/**
 * Directories above `p`, outermost first ("a/b/c" → "a", "a/b"). Slices of `p`, not joins of its
 * parts: a path may be a thousand directories deep.
 */
function ancestors(p: string): string[] {
  const out: string[] = [];
  for (let at = p.indexOf('/'); at > 0; at = p.indexOf('/', at + 1)) out.push(p.slice(0, at));
  return out;
}

function isInGitDir(p: string): boolean {
  return p.split('/').some((part) => part.toLowerCase() === '.git');
}

function reservedDirOf(p: string, reserved: readonly string[]): string | undefined {
  const top = p.split('/')[0];
  return reserved.find((d) => d === top);
}

function reservedReason(dir: string): string {
  return `inside ${dir}/, which holds infinity-code's own configuration and sessions: the agent may not change it`;
}

/** What to do about a change left out for its name (see OmitRule 'non-utf8-name'). */
function nonUtf8Reason(deleted: boolean): string {
  const why = 'its name is not valid UTF-8, which Infinity Code cannot carry: left as it was';
  return deleted ? `${why}; the agent deleted it, so delete it yourself if it should go` : `${why}; give it a UTF-8 name in the sandbox to include it`;
}

/** Why a path was left out for its length (see OmitRule 'path-too-long'), and what to do. */
function tooLongReason(prefix: string): string {
  const dir = prefix.endsWith('/');
  const parts = prefix.split('/').filter((p) => p !== '').length;
  const levels = dir ? parts : parts - 1;
  const size = `${pathBytes(dir ? prefix.slice(0, -1) : prefix).toLocaleString('en-US')} bytes, ${levels.toLocaleString('en-US')} directories deep`;
  const limit = `a path may be up to ${MAX_PATH_DEPTH} levels deep and ${MAX_PATH_BYTES.toLocaleString('en-US')} bytes long`;
  return dir
    ? `path too deep/long to apply (${size}; ${limit}): nothing under it was included; move what is there to a shorter path in the sandbox to include it`
    : `path too deep/long to apply (${size}; ${limit}): left as it was; give it a shorter path in the sandbox to include it`;
}

/** Why a change was left out for what the working tree has in its way, and what to do. */
function obstacleReason(o: Obstacle): string {
  if (o.kind === 'dir') {
    return 'your working tree has a directory here holding files the agent never saw (yours, or ignored by your git rules), so the file could not take its place: left as it was';
  }
  const what = o.kind === 'symlink' ? `a symbolic link at ${o.at}` : `a file at ${o.at}`;
  return `your working tree has ${what}, where this path needs a directory: nothing was written through it or in its place; left as it was`;
}

function nestedRepoReason(dir: string): string {
  return `${dir}/ holds a nested git repository; its files were not included`;
}

/** Why a symlink may not be applied, or undefined when it stays inside the repository. */
function linkProblem(linkPath: string, target: string | undefined, links: LinkLookup, reserved: readonly string[]): string | undefined {
  if (target === undefined) return 'a symbolic link whose target could not be read';
  const dest = resolveLink(linkPath, target, links);
  if (dest.kind === 'outside') return `a symbolic link to ${target}, which is outside the repository`;
  if (dest.kind === 'loop') return `a symbolic link to ${target}, which goes round in a loop of links`;
  if (isInGitDir(dest.path)) return `a symbolic link to ${target}, which leads into .git`;
  const dir = reservedDirOf(dest.path, reserved);
  if (dir !== undefined) return `a symbolic link to ${target}, which leads into ${dir}/`;
  return undefined;
}

/** Where the symlink at a path points, or undefined where there is none (a Map will do). */
export interface LinkLookup {
  get(path: string): string | undefined;
}

export type LinkDestination = { kind: 'inside'; path: string } | { kind: 'outside' } | { kind: 'loop' };

/**
 * Where a symlink at `linkPath` with `target` leads, as the user's filesystem would resolve it:
 * from the link's own directory, through the links of the tree on the way. Absolute targets
 * always count as outside: the repository may be checked out anywhere.
 */
export function resolveLink(linkPath: string, target: string, links: LinkLookup): LinkDestination {
  const cur = linkPath.split('/').slice(0, -1);
  const queue = target.split('/');
  if (target.startsWith('/')) return { kind: 'outside' };
  let hops = 0;
  while (queue.length > 0) {
    const seg = queue.shift()!;
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (cur.length === 0) return { kind: 'outside' };
      cur.pop();
      continue;
    }
    cur.push(seg);
    const next = links.get(cur.join('/'));
    if (next === undefined) continue;
    if (++hops > MAX_LINK_HOPS) return { kind: 'loop' };
    if (next.startsWith('/')) return { kind: 'outside' };
    cur.pop();
    queue.unshift(...next.split('/'));
  }
  return { kind: 'inside', path: cur.join('/') };
}

/**
 * What a change may cost in patch bytes, from above: text lines get a one-byte prefix (a file of
 * empty lines doubles), binary hunks are base85 (5 bytes per 4, plus framing) in both directions.
 */
function patchCost(c: PolicyChange): number {
  return 2 * ((c.oldSize ?? 0) + (c.newSize ?? 0)) + 1024;
}

export function formatBytes(n: number): string {
  if (n >= MB) return `${trimZero((n / MB).toFixed(1))} MB`;
  if (n >= 1024) return `${trimZero((n / 1024).toFixed(1))} KB`;
  return `${n} bytes`;
}

function trimZero(s: string): string {
  return s.replace(/\.0$/, '');
}
