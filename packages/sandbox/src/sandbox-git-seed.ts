import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Snapshot } from './base-snapshot.js';
import { sandboxHead } from './sandbox-git-head.js';

/** The sandbox's hooks directory, inside its private git dir. */
export const HOOKS_DIR = 'infinity-code-hooks';

/** What a command's git prints when it would make a commit in a sandbox. */
export const COMMIT_REFUSAL =
  'Commits are not made in this sandbox: Infinity Code delivers the changes in the working tree to the user ' +
  'as a diff to review, and the user commits them. Leave your changes uncommitted (`git diff` shows them; ' +
  '`git stash` works).';

// Every way git makes a commit runs one of these first: commit (prepare-commit-msg too, which
// --no-verify does not skip), merge, cherry-pick and revert (prepare-commit-msg), am
// (applypatch-msg), rebase (pre-rebase). A commit made in a sandbox would be lost: only its files
// reach the user.
const REFUSING_HOOKS = ['pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'applypatch-msg', 'pre-rebase'];

const HOOK_SCRIPT = `#!/bin/sh\ncat >&2 <<'EOF'\n${COMMIT_REFUSAL}\nEOF\nexit 1\n`;

export interface SeedOptions {
  /** The user's git config as commands may see it (scrubbed, see git-config-scrub.ts). */
  config: string;
  /** The user's `config.worktree`, when there is one: git reads it after `config`. */
  worktreeConfig?: string;
  /**
   * core.hooksPath as commands' git finds the hooks directory: absolute, or relative to the top
   * of the work tree (where git runs hooks from).
   */
  hooksPath: string;
}

/**
 * Writes what a sandbox's private git dir holds besides its index and objects, before any
 * command runs in it: HEAD where the user's stood (see sandboxHead), the branch pinned there, the
 * hooks that refuse commits, and the config naming them. Synchronous: small files, written while
 * a sandbox is made (see OverlaySession.makeDirs for why that matters).
 */
export function seedSandboxGit(gitDir: string, snapshot: Snapshot, opts: SeedOptions): void {
  const { head, branch, commit } = sandboxHead(snapshot);
  writeFileSync(path.join(gitDir, 'HEAD'), `${head}\n`);
  if (branch) {
    const ref = path.join(gitDir, ...branch.split('/'));
    if (commit) {
      mkdirSync(path.dirname(ref), { recursive: true });
      writeFileSync(ref, `${commit}\n`);
    } else {
      // Unborn: a copy of the user's refs taken since may hold their first commit.
      rmSync(ref, { force: true });
    }
  }
  const hooks = path.join(gitDir, HOOKS_DIR);
  mkdirSync(hooks, { recursive: true });
  for (const name of REFUSING_HOOKS) {
    writeFileSync(path.join(hooks, name), HOOK_SCRIPT);
    chmodSync(path.join(hooks, name), 0o755);
  }
  writeFileSync(path.join(gitDir, 'config'), withHooksPath(opts.config, opts.hooksPath));
  if (opts.worktreeConfig !== undefined) writeFileSync(path.join(gitDir, 'config.worktree'), withHooksPath(opts.worktreeConfig, opts.hooksPath));
}

/**
 * `config` with core.hooksPath set to `hooksPath` at its very end, where it wins over the
 * user's own (the last value git reads is the one it uses), includes before it included.
 */
export function withHooksPath(config: string, hooksPath: string): string {
  const sep = config === '' || config.endsWith('\n') ? '' : '\n';
  return `${config}${sep}[core]\n\thooksPath = ${configValue(hooksPath)}\n`;
}

/** A value as git config reads it back verbatim. */
function configValue(v: string): string {
  return `"${v.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
}
