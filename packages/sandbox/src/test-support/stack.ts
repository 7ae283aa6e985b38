// A stack of sandboxes with every kind of state a resume must bring back; shared by the resume
// tests and the crash child (so no vitest imports here).
import type { ExecProcess, SandboxSession } from '../index.js';
import { binary, lines, viewTree, type FileSpec } from './fixtures.js';

export const STACK_REPO: Record<string, FileSpec> = {
  'a.txt': lines(20),
  'gone.txt': 'gone\n',
  'dir/f.txt': 'f\n',
  'run.sh': '#!/bin/sh\necho run\n',
  '.gitignore': 'node_modules/\n',
};

/** Ignored, so not in the snapshot: shared into sandboxes copy-on-write. */
export const STACK_UNTRACKED: Record<string, FileSpec> = {
  'node_modules/dep/index.js': "exports.name = 'dep';\n",
};

export const STACK_IDS = ['root', 'child', 'grand', 'orphan'];

/**
 * root (edits, a delete) ← child (edits, binary, rename and chmod by command; more edits after
 * its own child was spawned) ← grand (stacked while a command ran in child, so on a copy of its
 * layer; deletes a file root added). root also edits after spawning child, and `orphan` stacks
 * on `temp`, which is then discarded. Returns the command still running in child.
 */
export async function buildStack(session: SandboxSession): Promise<ExecProcess> {
  const root = await session.create('root');
  await root.writeFile('a.txt', lines(20).replace('line 3\n', 'line 3 root\n'));
  await root.writeFile('root/new.txt', 'root new\n');
  await root.remove('gone.txt');
  const child = await session.create('child', root);
  await root.writeFile('root-late.txt', 'written after child was spawned\n');
  await child.writeFile('a.txt', (await child.readText('a.txt')).replace('line 15\n', 'line 15 child\n'));
  await child.writeFile('bin.dat', binary(7));
  const cmd = await child.run('mkdir moved && mv dir/f.txt moved/f.txt && chmod +x run.sh');
  if (cmd.exitCode !== 0) throw new Error(`stack command failed: ${cmd.stderr}`);
  const busy = await child.exec('sleep 300');
  const grand = await session.create('grand', child);
  await child.writeFile('child-late.txt', 'written after grand was spawned\n');
  await grand.writeFile('grand.txt', 'grand\n');
  await grand.remove('root/new.txt');
  const temp = await session.create('temp', root);
  await temp.writeFile('temp.txt', 't\n');
  const orphan = await session.create('orphan', temp);
  await orphan.writeFile('orphan.txt', 'o\n');
  await temp.discard();
  return busy;
}

export interface SandboxPrint {
  id: string;
  parent: string | null;
  parentDiscarded: boolean;
  view: Array<[string, string]>;
  spawn: { from: string; to: string; patch: string };
  snapshot: { from: string; to: string; patch: string };
}

/** Everything observable about each sandbox: parent, merged view, and both diffs (trees and patch). */
export async function fingerprint(session: SandboxSession): Promise<SandboxPrint[]> {
  const out: SandboxPrint[] = [];
  for (const sb of session.list()) {
    const spawn = await sb.diff();
    const snapshot = await sb.diff({ since: 'snapshot' });
    out.push({
      id: sb.id,
      parent: sb.parent?.id ?? null,
      parentDiscarded: sb.parent?.isDiscarded ?? false,
      view: [...(await viewTree(sb)).entries()].sort(([a], [b]) => a.localeCompare(b)),
      spawn: { from: spawn.from, to: spawn.to, patch: spawn.patch },
      snapshot: { from: snapshot.from, to: snapshot.to, patch: snapshot.patch },
    });
  }
  return out;
}
