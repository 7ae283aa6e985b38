import path from 'node:path';
import type { SandboxBackend, SessionContext } from './backend.js';
import { recordedBackend, type BackendChoice } from './backend-choice.js';
import { objectEnv } from './base-snapshot.js';
import { dropUnusedDeltas } from './delta-layer.js';
import { SandboxError } from './errors.js';
import { pathExists } from './fs-util.js';
import { stopLeftovers } from './gc.js';
import { ensurePlumbingGitDir, PLUMBING_GIT_DIR } from './plumbing-git-dir.js';
import { identify, type ProcessIdentity } from './proc.js';
import { damagedSession, dropRegistry, readRegistry, type SandboxRegistry } from './registry.js';
import type { RepoInfo } from './repo.js';
import { inspectSession, withClaim, writeRecord, type SessionRecord } from './session-record.js';
import { sessionsDir } from './state-dir.js';

export interface TakenOver {
  ctx: SessionContext;
  backend: SandboxBackend;
  record: SessionRecord;
  registry: SandboxRegistry;
}

function notFound(id: string, stateDir: string, why: string): SandboxError {
  return new SandboxError(
    'not-found',
    `Sandbox session ${id} cannot be resumed: ${why}. A fresh session is needed: open one without resume ` +
      `(sessions are kept in ${sessionsDir(stateDir)}).`,
  );
}

function inUse(id: string, owner: ProcessIdentity): SandboxError {
  const who = owner.pid === process.pid ? 'this process' : `process ${owner.pid}`;
  return new SandboxError(
    'in-use',
    `Sandbox session ${id} is in use by ${who}. Close it there first (or end that process), or open a fresh session.`,
  );
}

/**
 * Makes this process the owner of an earlier session of `repo` whose owner is gone (closed with
 * keep, or killed): checks it, takes the record over under the session's claim, stops anything
 * a crash left running in it, and returns what is needed to rebuild its sandboxes.
 */
export async function takeOverSession(o: {
  id: string;
  repo: RepoInfo;
  stateDir: string;
  backend: BackendChoice;
}): Promise<TakenOver> {
  const { id, repo, stateDir } = o;
  // Ids are our own directory names; anything else (a path, "..") cannot name a session.
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(id)) throw notFound(id, stateDir, 'that is not a session id');
  const sessionDir = path.join(sessionsDir(stateDir), id);
  if (!(await pathExists(sessionDir))) throw notFound(id, stateDir, 'it no longer exists (it was closed or collected)');
  const first = await inspectSession(sessionDir).catch(() => undefined);
  if (!first) throw notFound(id, stateDir, 'it no longer exists (it was closed or collected)');
  if (first.record && first.record.repo !== repo.root) {
    throw new SandboxError(
      'invalid-argument',
      `Sandbox session ${id} belongs to the repository ${first.record.repo}, not ${repo.root}. ` +
        'Resume it from that repository, or open a fresh session here.',
    );
  }
  if (first.kind === 'live') throw inUse(id, first.owner);
  if (first.kind === 'broken') throw notFound(id, stateDir, first.why);
  const backend = await recordedBackend(id, first.record.backend, o.backend, stateDir, repo);

  const claimed = await withClaim(sessionDir, async () => {
    const now = await inspectSession(sessionDir);
    if (now.kind === 'live') throw inUse(id, now.owner);
    if (now.kind === 'broken') throw notFound(id, stateDir, now.why);
    const crashed = now.record.owner !== null;
    const record: SessionRecord = { ...now.record, owner: await identify(process.pid) };
    delete record.leftAt;
    await writeRecord(sessionDir, record);
    // A crash can leave commands running in copies (without pid namespaces they have none to die with).
    if (crashed) await stopLeftovers(sessionDir);
    return record;
  }).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(id, stateDir, 'it was collected meanwhile');
    throw err;
  });
  if (!claimed.ok) throw inUse(id, claimed.holder);
  const record = claimed.value;

  try {
    return { ctx: await contextOf(id, sessionDir, repo, record), backend, record, registry: await registryOf(id, sessionDir) };
  } catch (err) {
    await giveBack(sessionDir, record, err);
    throw err;
  }
}

/**
 * Undoes a takeover that failed after it: a damaged session is made unresumable (gc then removes
 * it); otherwise it is let go again, to be resumed once the problem is fixed.
 */
export async function giveBack(sessionDir: string, record: SessionRecord, err: unknown): Promise<void> {
  if (err instanceof SandboxError && err.code === 'not-found') await dropRegistry(sessionDir).catch(() => undefined);
  await writeRecord(sessionDir, { ...record, owner: null, leftAt: new Date().toISOString() }).catch(() => undefined);
}

async function registryOf(id: string, sessionDir: string): Promise<SandboxRegistry> {
  const registry = await readRegistry(sessionDir);
  if (!registry) throw damagedSession(id, 'its sandbox list is gone');
  return registry;
}

async function contextOf(id: string, sessionDir: string, repo: RepoInfo, record: SessionRecord): Promise<SessionContext> {
  const opened = record.snapshot!;
  const refreshed = record.refreshed;
  const baseDirIndex = path.join(sessionDir, 'base.index');
  const ctx: SessionContext = {
    sessionId: id,
    sessionDir,
    repo,
    snapshot: refreshed?.snapshot ?? opened,
    baseDir: path.join(sessionDir, 'base'),
    baseTree: opened.tree,
    baseDirIndex,
    baseIndex: refreshed ? path.join(sessionDir, refreshed.index) : baseDirIndex,
    deltaLayer: refreshed?.layer,
    objectsDir: path.join(sessionDir, 'objects'),
    tmpDir: path.join(sessionDir, 'tmp'),
    heavyDirs: record.heavyDirs,
    objectEnv: objectEnv(repo, path.join(sessionDir, 'objects')),
    plumbingGitDir: path.join(sessionDir, PLUMBING_GIT_DIR),
  };
  const needed = [ctx.baseDir, baseDirIndex, ctx.objectsDir, ctx.baseIndex, ...(ctx.deltaLayer ? [path.join(sessionDir, ctx.deltaLayer)] : [])];
  for (const p of needed) {
    if (!(await pathExists(p))) throw damagedSession(id, `its ${path.relative(sessionDir, p)} is missing`);
  }
  // What a crash during a refresh left before the record named it.
  await dropUnusedDeltas(sessionDir, refreshed);
  // Sessions kept by a version that had none get theirs now.
  await ensurePlumbingGitDir(sessionDir, repo);
  return ctx;
}
