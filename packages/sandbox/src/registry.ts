import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SandboxError } from './errors.js';
import { removeTree } from './fs-util.js';

/** The durable list of a session's sandboxes, rewritten whenever one is created or discarded. */
export const REGISTRY_FILE = 'sandboxes.json';

/** One sandbox as the registry keeps it. */
export interface SavedEntry {
  /** The id it was created with (the agent's thread id). */
  id: string;
  /** Storage name inside the session (`s<N>`): unique for the session's lifetime, unlike ids. */
  name: string;
  /** The sandbox it was stacked on, by storage name, so a reused id cannot be mistaken for it. */
  parent: { id: string; name: string } | null;
  /**
   * A discarded sandbox kept only because live descendants still name it as their parent;
   * it comes back as a discarded placeholder, with no storage.
   */
  discarded?: true;
  /** What the backend needs, besides the files under the sandbox's dir, to rebuild it. */
  state?: unknown;
  /** What the user's working tree has received from it (see delivered.ts); checked when read. */
  delivered?: unknown;
}

export interface SandboxRegistry {
  version: 1;
  /** Next storage name number. */
  nextName: number;
  /** Creation order; a parent always comes before its children. */
  sandboxes: SavedEntry[];
}

/**
 * Writes JSON so that readers (and a process resuming after a crash) see either the old file
 * or the new one, never a torn one: a unique temp file in the same directory, then rename.
 */
export function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  // Synchronous: a few hundred bytes, no fsync. A session's open and a sandbox's creation write
  // several of these on the way to their first git process or mount; each asynchronous call would
  // wait its turn in an event loop that start-up keeps busy (loading modules, the first request).
  try {
    writeFileSync(tmp, JSON.stringify(value));
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  return Promise.resolve();
}

export async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8')) as unknown;
}

export function writeRegistry(sessionDir: string, registry: SandboxRegistry): Promise<void> {
  return writeJsonAtomic(path.join(sessionDir, REGISTRY_FILE), registry);
}

/** The registry, or undefined when it is missing or not one we can read (the session is then not resumable). */
export async function readRegistry(sessionDir: string): Promise<SandboxRegistry | undefined> {
  const raw = await readJson(path.join(sessionDir, REGISTRY_FILE)).catch(() => undefined);
  return isRegistry(raw) ? raw : undefined;
}

/** Deleting the registry first makes a session unresumable before its storage starts to go. */
export async function dropRegistry(sessionDir: string): Promise<void> {
  await rm(path.join(sessionDir, REGISTRY_FILE), { force: true });
}

function isRegistry(v: unknown): v is SandboxRegistry {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Partial<SandboxRegistry>;
  return (
    r.version === 1 &&
    typeof r.nextName === 'number' &&
    Array.isArray(r.sandboxes) &&
    r.sandboxes.every(
      (e: Partial<SavedEntry>) =>
        typeof e?.id === 'string' &&
        typeof e.name === 'string' &&
        /^s\d+$/.test(e.name) &&
        (e.parent === null || (typeof e.parent?.id === 'string' && typeof e.parent.name === 'string')),
    )
  );
}

/** The error for saved state that cannot be rebuilt; callers then open a fresh session. */
export function damagedSession(sessionId: string, why: string): SandboxError {
  return new SandboxError(
    'not-found',
    `Sandbox session ${sessionId} is damaged (${why}) and cannot be resumed; a fresh session is needed: open one without resume.`,
  );
}

/**
 * Deletes the entries of `dir` not named in `keep`: storage of sandboxes whose creation a crash
 * interrupted before the registry listed them.
 */
export async function removeUnlisted(dir: string, keep: ReadonlySet<string>): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (keep.has(name)) continue;
    await removeTree(path.join(dir, name));
    removed.push(name);
  }
  return removed;
}
