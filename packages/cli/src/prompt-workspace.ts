import { execFileSync } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { ATTACH_LIMITS, type MentionTarget } from './mentions.js';
import { loadProjectCommands } from './project-commands-load.js';
import type { ProjectCommands } from './project-commands.js';

/**
 * What the prompt reads of the user's repository: its project commands, its paths (for `@`
 * completion) and the files a message mentions. Always the user's working tree, as they see it
 * in their editor, never a sandbox's copy.
 */
export interface PromptWorkspace {
  /** The project commands as their files are now (read again on each call: a few small files). */
  commands(): ProjectCommands;
  /**
   * The repository's files, repository-relative: tracked ones and untracked ones git doesn't
   * ignore, never under `node_modules`. Listed on first use and again when asked `fresh`.
   */
  paths(opts?: { fresh?: boolean }): readonly string[];
  /** What a repository-relative path holds, for an `@` mention. */
  read(path: string): MentionTarget;
  /**
   * The directory the user works in, repository-relative ('' at the root): `@` paths are read
   * from there first, then from the root.
   */
  base?: string;
}

// git in the user's repository runs no program of its own accord (see the sandbox package's
// trusted-git.ts): no fsmonitor, no hooks.
const USER_GIT = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null'];

/**
 * `gitArgs`: what git needs to list a folder without a repository (see projectGitArgs). `cwd`:
 * where the user started us, which `@` paths are relative to (the root itself by default).
 */
export function promptWorkspace(root: string, gitArgs: readonly string[] = [], cwd: string = root): PromptWorkspace {
  let listed: readonly string[] | undefined;
  let realRoot: string | undefined;
  const paths = (opts: { fresh?: boolean } = {}) => {
    if (listed === undefined || opts.fresh === true) listed = listRepositoryFiles(root, gitArgs);
    return listed;
  };
  return {
    base: baseOf(root, cwd),
    commands: () => loadProjectCommands(root),
    paths,
    read(path) {
      realRoot ??= realpathSync(root);
      return readMentioned(root, realRoot, path, paths);
    },
  };
}

/** `cwd` relative to `root`, '/'-separated; '' when it is the root or not under it. */
function baseOf(root: string, cwd: string): string {
  let rel: string;
  try {
    rel = relative(realpathSync(root), realpathSync(cwd));
  } catch {
    return '';
  }
  const parts = rel.split(sep);
  return rel === '' || parts[0] === '..' || isAbsolute(rel) ? '' : parts.join('/');
}

/** Tracked and untracked-but-not-ignored files; none when git can't list them. */
export function listRepositoryFiles(root: string, gitArgs: readonly string[] = []): string[] {
  try {
    const out = execFileSync('git', [...gitArgs, ...USER_GIT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 512 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = new Set(out.split('\0').filter((p) => p !== '' && !/(^|\/)node_modules\//.test(p)));
    return [...files].sort();
  } catch {
    return [];
  }
}

function readMentioned(root: string, realRoot: string, path: string, paths: (o?: { fresh?: boolean }) => readonly string[]): MentionTarget {
  const full = join(root, path);
  let real: string;
  try {
    real = realpathSync(full);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? { kind: 'missing' } : { kind: 'unreadable', reason: `cannot be read (${code})` };
  }
  // A symlink may lead anywhere: only what is inside the repository goes to the model.
  if (real !== realRoot && !real.startsWith(realRoot + sep)) return { kind: 'outside' };
  try {
    const stat = statSync(real);
    if (stat.isDirectory()) {
      const dir = path.replace(/\/$/, '');
      const entries = childrenOf(dir, paths());
      return { kind: 'directory', entries: entries.length > 0 ? entries : childrenOf(dir, paths({ fresh: true })) };
    }
    // Reading a FIFO or a device would wait, or never end.
    if (!stat.isFile()) return { kind: 'unreadable', reason: 'not a regular file' };
    return readHead(real, ATTACH_LIMITS.fileBytes);
  } catch (err) {
    return { kind: 'unreadable', reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

/** The first `limit` bytes and the size: a large file is never read whole. */
function readHead(path: string, limit: number): MentionTarget {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(size, limit));
    let got = 0;
    while (got < head.length) {
      const n = readSync(fd, head, got, head.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return { kind: 'file', head: head.subarray(0, got), size };
  } finally {
    closeSync(fd);
  }
}

/** The files and folders (ending in `/`) directly in `dir`, from the repository's file list. */
export function childrenOf(dir: string, paths: readonly string[]): string[] {
  const prefix = dir === '' ? '' : `${dir}/`;
  const out = new Set<string>();
  for (const p of paths) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const slash = rest.indexOf('/');
    out.add(slash === -1 ? rest : rest.slice(0, slash + 1));
  }
  return [...out].sort();
}
