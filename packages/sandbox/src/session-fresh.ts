import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxBackend, SessionContext } from './backend.js';
import { pickBackend, type BackendChoice } from './backend-choice.js';
import { materializeBase, objectEnv, takeSnapshot } from './base-snapshot.js';
import { removeTree } from './fs-util.js';
import { ensurePlumbingGitDir } from './plumbing-git-dir.js';
import { identify } from './proc.js';
import { writeRegistry } from './registry.js';
import { findHeavyDirs, type RepoInfo } from './repo.js';
import { writeRecord, type SessionRecord } from './session-record.js';
import { sessionsDir } from './state-dir.js';

export interface Started {
  ctx: SessionContext;
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
  const backend = await pickBackend(choice, stateDir, repo);
  const sessionId = `${Date.now().toString(36)}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const sessionDir = path.join(sessionsDir(stateDir), sessionId);
  await mkdir(sessionDir, { recursive: true });
  // Owned from the start (gc leaves it alone); unresumable until the snapshot is in it.
  let record: SessionRecord = {
    version: 2,
    owner: await identify(process.pid),
    repo: repo.root,
    backend: backend.name,
    heavyDirs: [],
    createdAt: new Date().toISOString(),
  };
  await writeRecord(sessionDir, record);
  try {
    const objectsDir = path.join(sessionDir, 'objects');
    const tmpDir = path.join(sessionDir, 'tmp');
    await mkdir(objectsDir, { recursive: true });
    await mkdir(tmpDir, { recursive: true });
    const plumbingGitDir = await ensurePlumbingGitDir(sessionDir, repo);
    // Both walk the whole working tree (stat calls mostly): side by side, the waits overlap.
    const [heavyDirs, snapshot] = await Promise.all([findHeavyDirs(repo), takeSnapshot(repo, objectsDir, tmpDir)]);
    const baseDir = path.join(sessionDir, 'base');
    const baseIndex = path.join(sessionDir, 'base.index');
    await materializeBase(repo, snapshot, objectsDir, baseDir, baseIndex);
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
    return { ctx, backend, record };
  } catch (err) {
    await removeTree(sessionDir);
    throw err;
  }
}
