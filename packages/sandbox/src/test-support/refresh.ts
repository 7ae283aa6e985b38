// A base refresh scenario: a repository, agent work in a stacked pair of sandboxes, and user edits
// made to the working tree meanwhile; shared by the refresh tests and the crash child (so no
// vitest imports here).
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sandbox, SandboxSession } from '../index.js';
import { lines, type FileSpec } from './fixtures.js';

export const REFRESH_REPO: Record<string, FileSpec> = {
  'mod.txt': lines(10, 'mod'),
  'del.txt': 'deleted by the user\n',
  'dir/x.txt': 'x\n',
  'dir/y.txt': 'y\n',
  'shared.txt': lines(20, 'shared'),
  'swap': 'a file the user turns into a directory\n',
  'link': { symlink: 'mod.txt' },
  'script.sh': '#!/bin/sh\necho hi\n',
  'agent.txt': lines(20, 'agent'),
};

/** What the user's edits change, as refreshBase reports it. */
export const USER_FILES = [
  'added.txt',
  'del.txt',
  'dir/x.txt',
  'dir/y.txt',
  'link',
  'mod.txt',
  'newdir/deep/n.txt',
  'script.sh',
  'shared.txt',
  'swap',
  'swap/inner.txt',
];

export const USER_MOD = lines(10, 'mod').replace('mod 2\n', 'mod 2 user\n');
export const USER_SHARED = lines(20, 'shared').replace('shared 17\n', 'shared 17 user\n');
export const AGENT_SHARED = lines(20, 'shared').replace('shared 3\n', 'shared 3 agent\n');
export const ROOT_AGENT = lines(20, 'agent').replace('agent 5\n', 'agent 5 root\n');
export const CHILD_AGENT = ROOT_AGENT.replace('agent 15\n', 'agent 15 child\n');

/**
 * Edits the user makes to the working tree after the session opened: a modification, files and
 * a nested directory added, a file and a whole directory deleted, a file turned into a directory,
 * a symlink retargeted, an executable bit set, and an edit to a file the agent edits too.
 */
export async function userEdits(repo: string): Promise<void> {
  await writeFile(path.join(repo, 'mod.txt'), USER_MOD);
  await writeFile(path.join(repo, 'added.txt'), 'added by the user\n');
  await mkdir(path.join(repo, 'newdir/deep'), { recursive: true });
  await writeFile(path.join(repo, 'newdir/deep/n.txt'), 'n\n');
  await rm(path.join(repo, 'del.txt'));
  await rm(path.join(repo, 'dir'), { recursive: true });
  await writeFile(path.join(repo, 'shared.txt'), USER_SHARED);
  await rm(path.join(repo, 'swap'));
  await mkdir(path.join(repo, 'swap'));
  await writeFile(path.join(repo, 'swap/inner.txt'), 'inner\n');
  await rm(path.join(repo, 'link'));
  await symlink('added.txt', path.join(repo, 'link'));
  await chmod(path.join(repo, 'script.sh'), 0o755);
}

/**
 * root (edits agent.txt and shared.txt, adds a file) ← child (stacked on root's frozen layer:
 * edits agent.txt further, adds a file); root writes once more after the spawn.
 */
export async function agentWork(session: SandboxSession): Promise<{ root: Sandbox; child: Sandbox }> {
  const root = await session.create('root');
  await root.writeFile('agent.txt', ROOT_AGENT);
  await root.writeFile('shared.txt', AGENT_SHARED);
  await root.writeFile('root-new.txt', 'root new\n');
  const child = await session.create('child', root);
  await child.writeFile('agent.txt', CHILD_AGENT);
  await child.writeFile('child.txt', 'child\n');
  await root.writeFile('root-late.txt', 'written after child was spawned\n');
  return { root, child };
}

/** Shell check, run in a sandbox, of the user's edits as a command sees them. */
export const SEE_USER_EDITS =
  'cat mod.txt added.txt newdir/deep/n.txt swap/inner.txt && readlink link && ' +
  'test ! -e del.txt && test ! -e dir && test -x script.sh && echo seen';

export const SEEN_USER_EDITS = `${USER_MOD}added by the user\nn\ninner\nadded.txt\nseen\n`;
