import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { SandboxBackend, SessionContext } from './backend.js';
import { pickBackend, type BackendChoice } from './backend-choice.js';
import { takePooledBase } from './base-pool.js';
import { objectEnv, takeSnapshot } from './base-snapshot.js';
import { removeTree } from './fs-util.js';
import { ensurePlumbingGitDir } from './plumbing-git-dir.js';
import { identify } from './proc.js';
import { writeRegistry } from './registry.js';
import { findHeavyDirs, type RepoInfo } from './repo.js';
import { sandboxViewIndex } from './sandbox-view-index.js';
import { writeRecord, type SessionRecord } from './session-record.js';
import { sessionsDir } from './state-dir.js';

export interface Started {
  ctx: SessionContext;
  backend: SandboxBackend;
  record: SessionRecord;
}

/** A new session laid out as far as its id, directory and owned record (see beginFreshSession). */
export interface Begun {
  repo: RepoInfo;
  stateDir: string;
  sessionId: string;
  sessionDir: string;
  backend: SandboxBackend;
  record: SessionRecord;
}

/**
 * Lays out a new session of `repo` in the state directory: record, snapshot of the working tree,
 * the base checked out from it, an empty registry. Nothing is left behind when it fails. The
 * backend is not opened yet: the caller opens it with `ctx`, and removes the session directory if
 * that fails.
 */
export async function startFreshSession(repo: RepoInfo, stateDir: string, choice: BackendChoice): Promise<Started> {
  return completeFreshSession(await beginFreshSession(repo, stateDir, choice));
}

/**
 * The cheap first part of startFreshSession: the backend, the session's id and directory, and its
 * record naming this process as the owner (gc leaves it alone from here on). Unresumable until
 * completeFreshSession put the snapshot in it; a crash in between leaves what gc removes.
 */
export async function beginFreshSession(repo: RepoInfo, stateDir: string, choice: BackendChoice): Promise<Begun> {
  const backend = await pickBackend(choice, stateDir, repo);
  const sessionId = `${Date.now().toString(36)}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const sessionDir = path.join(sessionsDir(stateDir), sessionId);
  // Synchronous file operations up to the snapshot's git process (here and in
  // completeFreshSession): see writeJsonAtomic in registry.ts for why.
  mkdirSync(sessionDir, { recursive: true });
  const record: SessionRecord = {
    version: 2,
    owner: await identify(process.pid),
    repo: repo.root,
    backend: backend.name,
    heavyDirs: [],
    createdAt: new Date().toISOString(),
  };
  try {
    await writeRecord(sessionDir, record);
  } catch (err) {
    await removeTree(sessionDir);
    throw err;
  }
  return { repo, stateDir, sessionId, sessionDir, backend, record };
}

/**
 * The costly second part: the snapshot, the base materialised from it, the empty registry, and
 * the record naming the snapshot (resumable from then on). Removes the session directory when it
 * fails.
 */
export async function completeFreshSession(begun: Begun): Promise<Started> {
  const { repo, stateDir, sessionId, sessionDir, backend } = begun;
  let record = begun.record;
  try {
    const objectsDir = path.join(sessionDir, 'objects');
    const tmpDir = path.join(sessionDir, 'tmp');
    mkdirSync(objectsDir, { recursive: true });
    mkdirSync(tmpDir, { recursive: true });
    const baseDir = path.join(sessionDir, 'base');
    const baseIndex = path.join(sessionDir, 'base.index');
    // The two walks of the working tree (stat calls mostly) and the git dir's config reads are
    // independent: side by side, their waits overlap.
    // The snapshot's run checks the base out too: moving a pooled base to the snapshot path by
    // path (only what differs is written), or else a full checkout.
    const [plumbingGitDir, heavyDirs, snapshot] = await Promise.all([
      ensurePlumbingGitDir(sessionDir, repo),
      findHeavyDirs(repo),
      takePooledBase(stateDir, repo, baseDir, baseIndex).then((pooled) => takeSnapshot(repo, objectsDir, tmpDir, { dir: baseDir, index: baseIndex, pooled })),
    ]);
    // The empty registry, then the snapshot in the record: the session is resumable from here on.
    await writeRegistry(sessionDir, { version: 1, nextName: 1, sandboxes: [] });
    record = { ...record, heavyDirs, snapshot };
    await writeRecord(sessionDir, record);
    const ctx: SessionContext = {
      sessionId,
      sessionDir,
      repo,
      snapshot,
      baseDir,
      baseTree: snapshot.tree,
      baseDirIndex: baseIndex,
      baseIndex,
      deltaLayer: undefined,
      objectsDir,
      tmpDir,
      heavyDirs,
      objectEnv: objectEnv(repo, objectsDir),
      plumbingGitDir,
    };
    // What new sandboxes' git starts with (see sandboxViewIndex), built while the backend opens
    // rather than when the first sandbox is made; a failure is met again, and reported, there.
    // A folder's sandboxes have no git.
    if (!repo.folder) void sandboxViewIndex(ctx);
    return { ctx, backend, record };
  } catch (err) {
    await removeTree(sessionDir);
    throw err;
  }
}
