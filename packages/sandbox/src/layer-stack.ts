import { mkdir, readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { copyTree, removeTree } from './fs-util.js';

/** Bottom layers every sandbox of a session shares, relative to the session dir. */
export const META_LAYER = 'meta';
export const BASE_LAYER = 'base';
const LAYERS_DIR = 'layers';

/**
 * A sandbox's frozen layers, top first, as session-relative names (`layers/L3`). Its writable
 * upper sits above them and the meta and base layers below. The first `own` layers were frozen
 * from this sandbox itself (when it spawned children); the rest belong to its ancestors and
 * form, with meta and base, the view it was spawned on.
 */
export interface LayerStack {
  readonly frozen: readonly string[];
  readonly own: number;
}

export const EMPTY_STACK: LayerStack = { frozen: [], own: 0 };

/** lowerdir for the merged view. */
export function mergedLowers(stack: LayerStack): string {
  return [...stack.frozen, META_LAYER, BASE_LAYER].join(':');
}

/** lowerdir for the read-only view the sandbox was spawned on (always >= 2 layers, as overlay needs). */
export function spawnLowers(stack: LayerStack): string {
  return [...stack.frozen.slice(stack.own), META_LAYER, BASE_LAYER].join(':');
}

/** The stack a child of a sandbox with `stack` starts with: everything, none of it its own. */
export function childStack(stack: LayerStack): LayerStack {
  return { frozen: [...stack.frozen], own: 0 };
}

/**
 * Freezes a sandbox's writable upper: rename it into a new frozen layer and give the sandbox a
 * fresh, empty upper. O(1) whatever the size of the repository or of the upper. The overlay must
 * not be mounted (a mounted upper renamed into another stack's lower is undefined behaviour).
 */
export async function freezeUpper(
  sessionDir: string,
  upperDir: string,
  workDir: string,
  stack: LayerStack,
  layerId: string,
): Promise<LayerStack> {
  const name = `${LAYERS_DIR}/${layerId}`;
  await mkdir(path.join(sessionDir, LAYERS_DIR), { recursive: true });
  await rename(upperDir, path.join(sessionDir, name));
  await mkdir(upperDir);
  // The kernel leaves work/work with mode 000; a clean work dir avoids stale state from the old mount.
  await removeTree(workDir);
  await mkdir(workDir);
  return { frozen: [name, ...stack.frozen], own: stack.own + 1 };
}

/**
 * Freezes a copy of a mounted upper (reading an upper under a live mount is allowed, changing it
 * is not). Whatever commands write meanwhile may or may not make it into the copy.
 */
export async function copyUpper(sessionDir: string, upperDir: string, layerId: string): Promise<string> {
  const name = `${LAYERS_DIR}/${layerId}`;
  await mkdir(path.join(sessionDir, name), { recursive: true });
  await copyTree(upperDir, path.join(sessionDir, name));
  return name;
}

/** Deletes frozen layers that no live stack references. */
export async function dropUnusedLayers(sessionDir: string, live: readonly LayerStack[]): Promise<string[]> {
  const used = new Set(live.flatMap((s) => s.frozen));
  const names = await readdir(path.join(sessionDir, LAYERS_DIR)).catch(() => [] as string[]);
  const dropped: string[] = [];
  for (const n of names) {
    const rel = `${LAYERS_DIR}/${n}`;
    if (used.has(rel)) continue;
    await removeTree(path.join(sessionDir, rel));
    dropped.push(rel);
  }
  return dropped;
}
