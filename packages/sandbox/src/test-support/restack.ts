// The CLI's review-and-restack sequence on a parent with a command running, with a stop at every
// point a crash can land between two of its durable steps; shared by the resume tests and the
// crash child (so no vitest imports here).
import type { ExecProcess, Sandbox, SandboxSession } from '../index.js';
import type { BackendHooks } from './hooked-backend.js';

export const RESTACK_REPO = { 'a.txt': 'a\n' };

export const RESTACK_POINTS = [
  /** The backend made worker (on a copy of root's busy layer); the registry does not list it yet. */
  'spawned',
  /** worker and other are recorded, with their edits; root still runs its command. */
  'created',
  /** worker's diff is in root; discarding worker dropped it from the registry, its storage is still there. */
  'discarding',
  /** worker's storage is deleted; the layer it stacked on is not collected yet. */
  'discarded',
  /**
   * worker is made again, with the same id, on another copy of root's busy layer; meanwhile other
   * was discarded (a second review finishing), which collected layers while the new worker was
   * made but not yet recorded.
   */
  'respawned',
  /** The new worker is recorded, with an edit. */
  'recreated',
] as const;

export type RestackPoint = (typeof RESTACK_POINTS)[number];

export interface RestackScenario {
  /** Install these on the session's backend (see hookedBackend). */
  hooks: BackendHooks;
  /** Runs the sequence, awaiting `stop` at each point; returns root's command, still running. */
  run(session: SandboxSession): Promise<ExecProcess>;
}

/**
 * root (an edit, then `sleep` running in it for the rest of the sequence) ← worker, other: both
 * spawned while root is busy, so each stacks on a copy of root's layer. worker's diff is applied
 * to root, worker is discarded and created again with the same id on root (the CLI's restack),
 * and other is discarded while that creation is between the backend and the registry.
 */
export function restackScenario(stop: (point: RestackPoint) => Promise<void>): RestackScenario {
  let phase: 'other' | 'spawn-worker' | 'discard-worker' | 'respawn-worker' = 'other';
  let other: Sandbox | undefined;
  const hooks: BackendHooks = {
    async afterSpawn() {
      if (phase === 'spawn-worker') await stop('spawned');
      if (phase === 'respawn-worker') {
        await other!.discard();
        await stop('respawned');
      }
    },
    async beforeDestroy() {
      if (phase === 'discard-worker') await stop('discarding');
    },
    async afterDestroy() {
      if (phase === 'discard-worker') await stop('discarded');
    },
  };
  async function run(session: SandboxSession): Promise<ExecProcess> {
    const root = await session.create('root');
    await root.writeFile('root.txt', 'root\n');
    const busy = await root.exec('sleep 300');
    phase = 'spawn-worker';
    const worker = await session.create('worker', root);
    phase = 'other';
    await worker.writeFile('worker.txt', 'first worker\n');
    other = await session.create('other', root);
    await other.writeFile('other.txt', 'other\n');
    await stop('created');
    const applied = await root.apply(await worker.diff());
    if (!applied.clean) throw new Error(`applying worker's diff to root conflicted: ${applied.conflicts.join(', ')}`);
    phase = 'discard-worker';
    await worker.discard();
    phase = 'respawn-worker';
    const again = await session.create('worker', root);
    phase = 'other';
    if (!other.isDiscarded) throw new Error('other was not discarded while worker was made again');
    await again.writeFile('worker2.txt', 'second worker\n');
    await stop('recreated');
    return busy;
  }
  return { hooks, run };
}

export interface ExpectedSandbox {
  id: string;
  parent: string | null;
  /** Every file of its view (without .git) with its content. */
  files: Record<string, string>;
  /** Paths its diff since spawn touches, and since the snapshot. */
  spawn: string[];
  snapshot: string[];
}

/** What a resume after a crash at `point` must bring back: exactly what the registry had recorded. */
export function expectedAfter(point: RestackPoint): ExpectedSandbox[] {
  const base = { 'a.txt': 'a\n', 'root.txt': 'root\n' };
  const applied = { ...base, 'worker.txt': 'first worker\n' };
  const root = (files: Record<string, string>): ExpectedSandbox => ({
    id: 'root',
    parent: null,
    files,
    spawn: Object.keys(files).filter((f) => f !== 'a.txt'),
    snapshot: Object.keys(files).filter((f) => f !== 'a.txt'),
  });
  const other: ExpectedSandbox = {
    id: 'other',
    parent: 'root',
    files: { ...base, 'other.txt': 'other\n' },
    spawn: ['other.txt'],
    snapshot: ['other.txt', 'root.txt'],
  };
  switch (point) {
    case 'spawned':
      return [root(base)];
    case 'created':
      return [
        root(base),
        { id: 'worker', parent: 'root', files: applied, spawn: ['worker.txt'], snapshot: ['root.txt', 'worker.txt'] },
        other,
      ];
    case 'discarding':
    case 'discarded':
      return [root(applied), other];
    case 'respawned':
      return [root(applied)];
    case 'recreated':
      return [
        root(applied),
        {
          id: 'worker',
          parent: 'root',
          files: { ...applied, 'worker2.txt': 'second worker\n' },
          spawn: ['worker2.txt'],
          snapshot: ['root.txt', 'worker.txt', 'worker2.txt'],
        },
      ];
  }
}

/** The same shape as ExpectedSandbox, read from a live session. */
export async function observe(session: SandboxSession): Promise<ExpectedSandbox[]> {
  const out: ExpectedSandbox[] = [];
  for (const sb of session.list()) {
    const files: Record<string, string> = {};
    for (const e of await sb.list('', { recursive: true })) {
      if (e.type !== 'dir' && e.path !== '.git' && !e.path.startsWith('.git/')) files[e.path] = await sb.readText(e.path);
    }
    out.push({
      id: sb.id,
      parent: sb.parent?.id ?? null,
      files,
      spawn: (await sb.diff()).files.map((f) => f.path).sort(),
      snapshot: (await sb.diff({ since: 'snapshot' })).files.map((f) => f.path).sort(),
    });
  }
  return out;
}
