// A session's sandboxes to and from its registry file: what survives a restart of the process.
import type { BackendSandbox } from './backend.js';
import { isDelivered } from './delivered.js';
import type { SandboxRegistry, SavedEntry } from './registry.js';
import { Sandbox, type SandboxOwner } from './sandbox.js';

/** Live sandboxes in creation order, each preceded by its ancestors (discarded ones as markers). */
export function registryOf(sandboxes: Iterable<Sandbox>, nextName: number): SandboxRegistry {
  const entries: SavedEntry[] = [];
  const seen = new Set<string>();
  const add = (sb: Sandbox): void => {
    if (seen.has(sb.key)) return;
    if (sb.parent) add(sb.parent);
    seen.add(sb.key);
    const parent = sb.parent ? { id: sb.parent.id, name: sb.parent.key } : null;
    entries.push(
      sb.isDiscarded
        ? { id: sb.id, name: sb.key, parent, discarded: true }
        : { id: sb.id, name: sb.key, parent, state: sb.handle.saveState(), ...(sb.delivered ? { delivered: sb.delivered } : {}) },
    );
  };
  for (const sb of sandboxes) add(sb);
  return { version: 1, nextName, sandboxes: entries };
}

/**
 * Rebuilds the Sandbox objects of a registry, parents first; discarded parents come back as
 * placeholders. Returns the live ones by id, and the highest sandbox number used so far.
 */
export function sandboxesOf(
  registry: SandboxRegistry,
  handles: ReadonlyMap<string, BackendSandbox>,
  owner: SandboxOwner,
): { live: Map<string, Sandbox>; counter: number } {
  const byName = new Map<string, Sandbox>();
  const live = new Map<string, Sandbox>();
  for (const e of registry.sandboxes) {
    const parent = e.parent ? (byName.get(e.parent.name) ?? Sandbox.placeholder(e.parent.id, e.parent.name, undefined, owner)) : undefined;
    const handle = e.discarded ? undefined : handles.get(e.name);
    const delivered = isDelivered(e.delivered) ? e.delivered : undefined;
    const sb = handle ? new Sandbox(e.id, e.name, parent, handle, owner, delivered) : Sandbox.placeholder(e.id, e.name, parent, owner);
    byName.set(e.name, sb);
    if (handle) live.set(e.id, sb);
  }
  const used = registry.sandboxes.map((e) => Number(e.name.slice(1)));
  return { live, counter: Math.max(registry.nextName - 1, ...used, 0) };
}
