import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BackendName, ProbeOutcome, SandboxBackend } from './backend.js';
import { copyBackend } from './copy-backend.js';
import { SandboxError } from './errors.js';
import { removeTree } from './fs-util.js';
import { overlayRootBackend, overlayUsernsBackend } from './overlay-backend.js';

export interface ProbeReport {
  chosen: BackendName;
  results: Array<{ name: BackendName } & ProbeOutcome>;
  /** True when the results came from the per-boot cache. */
  cached: boolean;
}

/**
 * Preference order. As root, overlay-root comes first: in a user namespace only root's own uid
 * is mapped, so files owned by anyone else (a CI checkout) could not be modified.
 */
export function backendsInPreferenceOrder(isRoot = process.getuid?.() === 0): SandboxBackend[] {
  return isRoot
    ? [overlayRootBackend, overlayUsernsBackend, copyBackend]
    : [overlayUsernsBackend, overlayRootBackend, copyBackend];
}

export function backendByName(name: BackendName): SandboxBackend {
  const found = backendsInPreferenceOrder().find((b) => b.name === name);
  if (!found) throw new SandboxError('invalid-argument', `Unknown sandbox backend "${name}". Use overlay-userns, overlay-root or copy.`);
  return found;
}

function cacheKey(): string {
  // Read at once (as the cache itself below): a session's open waits for the backend's name.
  let boot = 'no-boot-id';
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8');
  } catch {
    // No boot id (not Linux): one cache for every boot.
  }
  return `${boot.trim()}:${process.getuid?.() ?? 'nouid'}:${process.platform}:confined-v2`;
}

/**
 * Whether one given backend works here: the per-boot cache answers when it has this backend's
 * result, otherwise a probe of that backend alone (for resuming a session made with it).
 */
export async function probeBackend(backend: SandboxBackend, stateDir: string): Promise<ProbeOutcome> {
  if (backendsInPreferenceOrder().includes(backend)) {
    try {
      const cached = JSON.parse(await readFile(path.join(stateDir, 'probe.json'), 'utf8')) as { key: string; report: ProbeReport };
      const hit = cached.key === cacheKey() ? cached.report.results.find((r) => r.name === backend.name) : undefined;
      if (hit) return { ok: hit.ok, detail: hit.detail };
    } catch {
      // No cache yet: probe below.
    }
  }
  const scratch = path.join(stateDir, 'tmp', `probe-${randomUUID()}`);
  await mkdir(scratch, { recursive: true });
  try {
    return await backend.probe(scratch);
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  } finally {
    await removeTree(scratch);
  }
}

/**
 * Tries each backend with a real mount in a scratch directory on the state dir's filesystem
 * (overlay needs user xattrs there). Results are cached per boot and user: kernels, AppArmor
 * policy and sysctls do not change without a reboot often enough to pay ~25 ms per start.
 */
export async function probeBackends(stateDir: string, opts: { fresh?: boolean } = {}): Promise<ProbeReport> {
  const cacheFile = path.join(stateDir, 'probe.json');
  const key = cacheKey();
  if (!opts.fresh) {
    try {
      const cached = JSON.parse(readFileSync(cacheFile, 'utf8')) as { key: string; report: ProbeReport };
      if (cached.key === key) return { ...cached.report, cached: true };
    } catch {
      // No cache yet, or unreadable: probe again.
    }
  }
  const results: ProbeReport['results'] = [];
  for (const backend of backendsInPreferenceOrder()) {
    const scratch = path.join(stateDir, 'tmp', `probe-${randomUUID()}`);
    await mkdir(scratch, { recursive: true });
    try {
      results.push({ name: backend.name, ...(await backend.probe(scratch)) });
    } catch (err) {
      results.push({ name: backend.name, ok: false, detail: (err as Error).message });
    } finally {
      await removeTree(scratch);
    }
  }
  const chosen = results.find((r) => r.ok)?.name ?? 'copy';
  const report: ProbeReport = { chosen, results, cached: false };
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify({ key, report }));
  await rename(tmp, cacheFile);
  return report;
}
