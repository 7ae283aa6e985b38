import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { BackendName } from './backend.js';
import { resolveRepo } from './repo.js';
import { inspectSession } from './session-record.js';
import { defaultStateDir, sessionsDir } from './state-dir.js';

export interface SessionSummary {
  id: string;
  repo: string;
  backend: BackendName;
  createdAt: string;
  /**
   * 'live': a running process owns it; 'resumable': openSession({ resume: id }) can take it
   * over; 'broken': it cannot be resumed (gc removes it).
   */
  status: 'live' | 'resumable' | 'broken';
  /** When it was left, for resumable sessions (ISO time). */
  leftAt?: string;
}

/**
 * Sandbox sessions in the state dir, most recently used first, optionally only those of one repository
 * (any path inside it). Read-only: lets a caller that lost track of its session id (or a
 * `/sessions` listing) find what can be resumed.
 */
export async function listSessions(opts: { stateDir?: string; repo?: string } = {}): Promise<SessionSummary[]> {
  const root = sessionsDir(path.resolve(opts.stateDir ?? defaultStateDir()));
  const repoRoot = opts.repo !== undefined ? (await resolveRepo(opts.repo)).root : undefined;
  const out: SessionSummary[] = [];
  for (const id of await readdir(root).catch(() => [] as string[])) {
    const state = await inspectSession(path.join(root, id)).catch(() => undefined);
    const record = state?.record;
    if (!state || !record || (repoRoot !== undefined && record.repo !== repoRoot)) continue;
    out.push({
      id,
      repo: record.repo,
      backend: record.backend,
      createdAt: record.createdAt,
      status: state.kind,
      ...(state.kind === 'resumable' ? { leftAt: new Date(state.leftAt).toISOString() } : {}),
    });
  }
  // Most recently used first: in use now, then by when they were left.
  const used = (s: SessionSummary): number => (s.status === 'live' ? Infinity : Date.parse(s.leftAt ?? s.createdAt));
  return out.sort((a, b) => used(b) - used(a) || b.createdAt.localeCompare(a.createdAt));
}
