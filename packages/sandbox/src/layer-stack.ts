import { mkdir, readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { copyTree, removeTree } from './fs-util.js';

/** Bottom layers every sandbox of a session shares, relative to the session dir. */
export const META_LAYER = 'meta';
export const BASE_LAYER = 'base';
const LAYERS_DIR = 'layers';

/**
 * A sandbox's frozen layers, top first, as session-relative names (`layers/s2.3`). Its writable
 * upper sits above them and the meta layer, the session's delta layer (once the base was
 * refreshed) and the base below. The first `own` layers were frozen from this sandbox itself
 * (when it spawned children); the rest belong to its ancestors and form, with the layers below,
 * the view it was spawned on.
 */
export interface LayerStack {
  readonly frozen: readonly string[];
  readonly own: number;
}

export const EMPTY_STACK: LayerStack = { frozen: [], own: 0 };

/** The layers every sandbox shares, top first: meta, the delta layer if any, the base. */
function sharedLowers(delta: string | undefined): string[] {
  return [META_LAYER, ...(delta ? [delta] : []), BASE_LAYER];
}

/** lowerdir for the merged view. */
export function mergedLowers(stack: LayerStack, delta: string | undefined): string {
  return [...stack.frozen, ...sharedLowers(delta)].join(':');
}

/** lowerdir for the read-only view the sandbox was spawned on (always >= 2 layers, as overlay needs). */
export function spawnLowers(stack: LayerStack, delta: string | undefined): string {
  return [...stack.frozen.slice(stack.own), ...sharedLowers(delta)].join(':');
}

/**
 * lowerdir for the read-only view of the session's current snapshot (the delta over the base),
 * or undefined while there is no delta: the base directory itself is that view.
 */
export function snapshotLowers(delta: string | undefined): string | undefined {
  return delta ? [delta, BASE_LAYER].join(':') : undefined;
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
 * is not). Whatever commands write meanwhile may or may not make it into the copy. The copy is
 * made under a temporary name and renamed into place complete, so a layer name never stands for
 * a partial copy (a crash mid-copy leaves only the temporary, which nothing references).
 */
export async function copyUpper(sessionDir: string, upperDir: string, layerId: string): Promise<string> {
  const name = `${LAYERS_DIR}/${layerId}`;
  const tmp = path.join(sessionDir, LAYERS_DIR, `.${layerId}.partial`);
  await removeTree(tmp);
  await mkdir(tmp, { recursive: true });
  try {
    await copyTree(upperDir, tmp);
    await rename(tmp, path.join(sessionDir, name));
  } catch (err) {
    await removeTree(tmp).catch(() => undefined);
    throw err;
  }
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

// Layer names: `<sandbox>.<n>` when frozen from that sandbox's upper, `c<n>` for a copy of a busy
// upper. `n` counts across the session, so a name is never reused.
const FROZEN_NAME = /^(s\d+)\.(\d+)$/;
const COPY_NAME = /^c(\d+)$/;

function parseStack(state: unknown): LayerStack | undefined {
  const s = state as Partial<LayerStack> | undefined;
  if (!Array.isArray(s?.frozen) || !s.frozen.every((l) => typeof l === 'string')) return undefined;
  if (typeof s.own !== 'number' || s.own < 0 || s.own > s.frozen.length) return undefined;
  return { frozen: [...s.frozen], own: s.own };
}

/** What restoreStacks made of a registry's stacks. */
export interface RestoredStacks {
  stacks: Map<string, LayerStack>;
  /** Sandboxes whose saved stack cannot be rebuilt (a layer is gone), by name, with the reason. */
  lost: Map<string, string>;
  /** The highest layer number on disk, so new names never collide with old ones. */
  maxLayerNumber: number;
}

/**
 * The stacks saved in a session's registry, checked against the layers on disk. Freezing renames
 * an upper into a layer before the registry can record it, so after a crash a sandbox may own
 * layers newer than its saved stack: those are its latest frozen state and go back on top of it
 * (the children that would have stacked on them were never recorded). Other unreferenced layers
 * are left for dropUnusedLayers. A sandbox whose stack names a missing layer (which the backend
 * never lets happen, but storage can be damaged from outside) is reported in `lost` and left
 * out; every other sandbox comes back, its children included when their own stacks are whole.
 */
export async function restoreStacks(saved: ReadonlyArray<{ name: string; state: unknown }>, sessionDir: string): Promise<RestoredStacks> {
  const onDisk = (await readdir(path.join(sessionDir, LAYERS_DIR)).catch(() => [] as string[])).filter(
    (n) => FROZEN_NAME.test(n) || COPY_NAME.test(n),
  );
  const present = new Set(onDisk.map((n) => `${LAYERS_DIR}/${n}`));
  const number = (n: string): number => Number((FROZEN_NAME.exec(n)?.[2] ?? COPY_NAME.exec(n)?.[1]) ?? 0);
  const maxLayerNumber = Math.max(0, ...onDisk.map(number));
  const stacks = new Map<string, LayerStack>();
  const lost = new Map<string, string>();
  for (const { name, state } of saved) {
    const stack = parseStack(state);
    if (!stack) {
      lost.set(name, 'its saved layer stack is unreadable');
      continue;
    }
    const missing = stack.frozen.find((l) => !present.has(l));
    if (missing) {
      lost.set(name, `its layer ${missing} is missing`);
      continue;
    }
    stacks.set(name, stack);
  }
  const referenced = new Set(saved.flatMap(({ state }) => parseStack(state)?.frozen ?? []));
  for (const [name, stack] of stacks) {
    const newest = Math.max(0, ...stack.frozen.slice(0, stack.own).map((l) => number(path.basename(l))));
    const adopted = onDisk
      .filter((n) => FROZEN_NAME.exec(n)?.[1] === name && number(n) > newest && !referenced.has(`${LAYERS_DIR}/${n}`))
      .sort((a, b) => number(b) - number(a))
      .map((n) => `${LAYERS_DIR}/${n}`);
    if (adopted.length > 0) stacks.set(name, { frozen: [...adopted, ...stack.frozen], own: stack.own + adopted.length });
  }
  return { stacks, lost, maxLayerNumber };
}
