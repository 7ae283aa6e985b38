import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { listSessions, type Sandbox, type SandboxSession } from '../index.js';
import type { SuiteContext } from './backend-suite.js';
import { runAndKill } from './crash.js';
import { leftovers, makeRepo, tempDir, writeFiles } from './fixtures.js';
import { expectedAfter, observe, RESTACK_POINTS, RESTACK_REPO, restackScenario, type RestackPoint } from './restack.js';
import { buildStack, fingerprint, STACK_IDS, STACK_REPO, STACK_UNTRACKED, type SandboxPrint } from './stack.js';

async function stackRepo(): Promise<string> {
  const repo = await makeRepo(STACK_REPO);
  await writeFiles(repo, STACK_UNTRACKED);
  return repo;
}

/**
 * A resumed stack must be the one that was left: same sandboxes and parents, same views, same
 * diffs (so the views at spawn survived), and every operation still works on it.
 */
async function expectResumed(
  session: SandboxSession,
  expected: SandboxPrint[],
  repo: string,
  opts: { userNodeModules: boolean },
): Promise<void> {
  expect(session.list().map((sb) => sb.id)).toEqual(STACK_IDS);
  const [root, child, grand, orphan] = STACK_IDS.map((id) => {
    const sb = session.get(id);
    if (!sb) throw new Error(`sandbox ${id} did not come back`);
    return sb;
  }) as [Sandbox, Sandbox, Sandbox, Sandbox];
  expect(child.parent).toBe(root);
  expect(grand.parent).toBe(child);
  expect(orphan.parent).toMatchObject({ id: 'temp', isDiscarded: true });
  expect(await fingerprint(session)).toEqual(expected);
  await expect(orphan.squashInto()).rejects.toMatchObject({ code: 'discarded' });

  // Commands run again: on overlay backends a new holder mounts the restored stack, at the
  // repository's path, with the shared node_modules when the user still has it.
  const run = await grand.run('cat grand.txt && pwd');
  expect(run).toMatchObject({ exitCode: 0, stdout: `grand\n${grand.root}\n` });
  if (opts.userNodeModules) {
    expect((await grand.run(`node -e "process.stdout.write(require('dep').name)"`)).stdout).toBe('dep');
  }

  // New sandboxes stack on restored ones without touching what those diff against.
  const late = await session.create('late', child);
  expect(await late.readText('child-late.txt')).toBe('written after grand was spawned\n');
  expect((await late.diff()).isEmpty).toBe(true);
  const childPrint = expected.find((p) => p.id === 'child')!;
  expect((await child.diff()).patch).toBe(childPrint.spawn.patch);

  expect(await grand.squashInto()).toMatchObject({ clean: true, conflicts: [] });
  expect(await child.readText('grand.txt')).toBe('grand\n');
  expect(await child.exists('root/new.txt')).toBe(false);
  expect(await child.squashInto(root)).toMatchObject({ clean: true, conflicts: [] });
  expect(await root.applyToWorkingTree()).toMatchObject({ clean: true, conflicts: [] });
  const a = await readFile(path.join(repo, 'a.txt'), 'utf8');
  expect(a).toContain('line 3 root\n');
  expect(a).toContain('line 15 child\n');
  expect(await readFile(path.join(repo, 'grand.txt'), 'utf8')).toBe('grand\n');
  expect(await readFile(path.join(repo, 'moved/f.txt'), 'utf8')).toBe('f\n');
  expect(await readFile(path.join(repo, 'root-late.txt'), 'utf8')).toBe('written after child was spawned\n');
  await expect(readFile(path.join(repo, 'gone.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  await expect(readFile(path.join(repo, 'root/new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
}

/**
 * After a crash at `point` of the restack sequence: exactly the recorded sandboxes, none lost,
 * with their contents and diffs; no storage the registry does not name; and the restack works
 * again on the resumed session.
 */
async function expectRestackResumed(session: SandboxSession, point: RestackPoint, stateDir: string, repo: string): Promise<void> {
  expect(session.lost).toEqual([]);
  // Before anything mounts again: what the crash left running is gone.
  expect(await leftovers(stateDir, repo)).toEqual({ processes: [], mounts: [] });
  const dir = session.ctx.sessionDir;
  const registry = JSON.parse(await readFile(path.join(dir, 'sandboxes.json'), 'utf8')) as {
    sandboxes: Array<{ name: string; state?: { frozen?: string[] } }>;
  };
  expect((await readdir(path.join(dir, 'sandboxes'))).sort()).toEqual(registry.sandboxes.map((e) => e.name).sort());
  const referenced = new Set(registry.sandboxes.flatMap((e) => e.state?.frozen ?? []));
  const layers = await readdir(path.join(dir, 'layers')).catch(() => [] as string[]);
  expect(layers.map((l) => `layers/${l}`).sort()).toEqual([...referenced].sort());

  expect(await observe(session)).toEqual(expectedAfter(point));

  const root = session.get('root')!;
  expect((await root.run('cat root.txt')).stdout).toBe('root\n');
  const worker = session.get('worker');
  if (worker) {
    expect((await worker.run('cat worker.txt')).stdout).toBe('first worker\n');
    expect(await worker.squashInto()).toMatchObject({ clean: true, conflicts: [] });
    await worker.discard();
  }
  // The restack once more, on the resumed session: root busy, worker made again on a copy.
  const busy = await root.exec('sleep 300');
  const again = await session.create('worker', root);
  expect(await again.readText('root.txt')).toBe('root\n');
  expect((await again.diff()).isEmpty).toBe(true);
  await again.writeFile('worker3.txt', 'third worker\n');
  expect((await again.diff()).files.map((f) => f.path)).toEqual(['worker3.txt']);
  expect(await root.exists('worker3.txt')).toBe(false);
  busy.kill();
  expect(await busy.done).toMatchObject({ cancelled: true });
}

export function registerResumeTests(s: SuiteContext): void {
  it('close({ keep }) then resume brings back every sandbox with its layers, parent, view at spawn and snapshot', async () => {
    const repo = await stackRepo();
    const stateDir = await tempDir('ic-state-');
    const first = await s.open(repo, { stateDir });
    const busy = await buildStack(first);
    const expected = await fingerprint(first);
    const sessionDir = first.ctx.sessionDir;

    await first.close({ keep: true });

    expect(await busy.done).toMatchObject({ cancelled: true });
    await expect(first.get('root')!.readText('a.txt')).rejects.toMatchObject({ code: 'discarded', message: expect.stringMatching(/resume/) });
    expect(await leftovers(stateDir, repo)).toEqual({ processes: [], mounts: [] });
    expect(await listSessions({ stateDir, repo })).toMatchObject([{ id: first.id, status: 'resumable', backend: s.backend }]);
    // The user may delete the shared node_modules before the session comes back.
    await rm(path.join(repo, 'node_modules'), { recursive: true });

    const second = await s.open(repo, { stateDir, resume: first.id });

    expect(second.id).toBe(first.id);
    expect(second.backend).toBe(s.backend);
    expect(second.snapshot).toEqual(first.snapshot);
    expect(second.ctx.sessionDir).toBe(sessionDir);
    await expectResumed(second, expected, repo, { userNodeModules: false });
  });

  it('resumes the same session after the process holding it was SIGKILLed', async () => {
    const repo = await stackRepo();
    const stateDir = await tempDir('ic-state-crash-');
    const expectFile = path.join(await tempDir('ic-expect-'), 'expected.json');
    const id = await runAndKill(repo, stateDir, s.backend, 'stack', expectFile);
    const expected = JSON.parse(await readFile(expectFile, 'utf8')) as SandboxPrint[];

    // Without the gc at open, the resume itself must deal with what the crash left running.
    const session = await s.open(repo, { stateDir, resume: id, collectStale: false });

    // Commands died with their process (or were stopped); nothing new runs yet.
    expect(await leftovers(stateDir, repo)).toEqual({ processes: [], mounts: [] });
    expect(session.id).toBe(id);
    await expectResumed(session, expected, repo, { userNodeModules: true });
  });

  it("a SIGKILLed process's sandbox processes and mounts die with it, before any resume or gc", async () => {
    const repo = await stackRepo();
    const stateDir = await tempDir('ic-state-crash-');
    const id = await runAndKill(repo, stateDir, s.backend, 'stack', path.join(await tempDir('ic-expect-'), 'expected.json'));
    // The namespace holders the process had running, by the pid files it could not remove.
    const sandboxes = path.join(stateDir, 'sessions', id, 'sandboxes');
    const pidFiles = (await readdir(sandboxes)).map((d) => path.join(sandboxes, d, 'holder.json'));
    const holders = (await Promise.all(pidFiles.map((f) => readFile(f, 'utf8').then((t) => [(JSON.parse(t) as { pid: number }).pid], () => [])))).flat();
    if (s.mountsAtRepoPath) expect(holders.length).toBeGreaterThan(0);
    // The kernel's parent-death signals take a moment to go down the tree: wait for it, or for the deadline.
    const deadline = Date.now() + 10_000;
    let left = await leftovers(stateDir, repo);
    const alive = (): number[] => holders.filter((pid) => existsSync(`/proc/${pid}`));
    while ((left.processes.length > 0 || left.mounts.length > 0 || alive().length > 0) && Date.now() < deadline) {
      await new Promise((r) => setImmediate(r));
      left = await leftovers(stateDir, repo);
    }
    expect(left).toEqual({ processes: [], mounts: [] });
    expect(alive()).toEqual([]);
  });

  it('a crash between a spawn and its registry write loses only the unrecorded child', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const stateDir = await tempDir('ic-state-');
    const first = await s.open(repo, { stateDir });
    const root = await first.create('root');
    await root.writeFile('before.txt', 'before the spawn\n');
    const registry = path.join(first.ctx.sessionDir, 'sandboxes.json');
    const beforeSpawn = await readFile(registry);
    const child = await first.create('child', root);
    await child.writeFile('child.txt', 'c\n');
    await root.writeFile('after.txt', 'after the spawn\n');
    await first.close({ keep: true });
    // As if the process had died right after the spawn, before the registry recorded it.
    await writeFile(registry, beforeSpawn);

    const second = await s.open(repo, { stateDir, resume: first.id });

    expect(second.list().map((sb) => sb.id)).toEqual(['root']);
    const back = second.get('root')!;
    expect(await back.readText('before.txt')).toBe('before the spawn\n');
    expect(await back.readText('after.txt')).toBe('after the spawn\n');
    expect((await back.diff()).files.map((f) => f.path)).toEqual(['after.txt', 'before.txt']);
    expect(await readdir(path.join(second.ctx.sessionDir, 'sandboxes'))).toHaveLength(1);
    const again = await second.create('child', back);
    expect(await again.readText('after.txt')).toBe('after the spawn\n');
    expect(await again.exists('child.txt')).toBe(false);
    await again.writeFile('child.txt', 'c2\n');
    expect((await again.diff()).files.map((f) => f.path)).toEqual(['child.txt']);
    expect((await back.diff()).files.map((f) => f.path)).toEqual(['after.txt', 'before.txt']);
  });

  it('a discard collecting layers while a child of a busy sandbox is being made keeps the layer that child stacks on', async () => {
    const repo = await makeRepo(RESTACK_REPO);
    const stateDir = await tempDir('ic-state-');
    // No stops: the hooks only discard other while worker is made again (between backend and registry).
    const scenario = restackScenario(async () => undefined);
    const first = await s.open(repo, { stateDir, hooks: scenario.hooks });
    const busy = await scenario.run(first);

    expect(await observe(first)).toEqual(expectedAfter('recreated'));
    expect((await first.get('worker')!.run('cat worker2.txt')).stdout).toBe('second worker\n');
    await first.close({ keep: true });
    expect(await busy.done).toMatchObject({ cancelled: true });

    const second = await s.open(repo, { stateDir, resume: first.id });
    await expectRestackResumed(second, 'recreated', stateDir, repo);
  });

  it('a sandbox whose storage was damaged from outside is dropped alone; every other one resumes', async () => {
    const repo = await makeRepo(RESTACK_REPO);
    const stateDir = await tempDir('ic-state-');
    const first = await s.open(repo, { stateDir });
    const root = await first.create('root');
    await root.writeFile('root.txt', 'root\n');
    await root.exec('sleep 300');
    for (const id of ['a', 'b']) {
      const sb = await first.create(id, root);
      await sb.writeFile(`${id}-work.txt`, `${id}\n`);
    }
    await first.close({ keep: true });
    const dir = first.ctx.sessionDir;
    const registry = JSON.parse(await readFile(path.join(dir, 'sandboxes.json'), 'utf8')) as {
      sandboxes: Array<{ id: string; name: string; state: { frozen?: string[] } }>;
    };
    const a = registry.sandboxes.find((e) => e.id === 'a')!;
    // What a stacks on alone: the copy of root's busy layer, or the copy that is the sandbox.
    await rm(s.backend === 'copy' ? path.join(dir, 'sandboxes', a.name, 'tree') : path.join(dir, a.state.frozen![0]), { recursive: true });

    const second = await s.open(repo, { stateDir, resume: first.id });

    expect(second.lost).toEqual([{ id: 'a', reason: expect.stringMatching(/missing/) }]);
    expect(second.list().map((sb) => sb.id)).toEqual(['root', 'b']);
    const b = second.get('b')!;
    expect(await b.readText('root.txt')).toBe('root\n');
    expect((await b.diff()).files.map((f) => f.path)).toEqual(['b-work.txt']);
    expect(await readdir(path.join(dir, 'sandboxes'))).toHaveLength(2);
    // The thread starts over in a new sandbox; the next resume has nothing to drop.
    const again = await second.create('a', second.get('root'));
    expect(await again.readText('root.txt')).toBe('root\n');
    expect(await again.exists('a-work.txt')).toBe(false);
    await second.close({ keep: true });
    const third = await s.open(repo, { stateDir, resume: first.id });
    expect(third.lost).toEqual([]);
    expect(third.list().map((sb) => sb.id)).toEqual(['root', 'b', 'a']);
  });

  for (const point of RESTACK_POINTS) {
    it(`a SIGKILL while a busy sandbox's child is discarded and made again (at "${point}") resumes every recorded sandbox`, async () => {
      const repo = await makeRepo(RESTACK_REPO);
      const stateDir = await tempDir('ic-state-crash-');
      const id = await runAndKill(repo, stateDir, s.backend, `restack:${point}`);

      const session = await s.open(repo, { stateDir, resume: id, collectStale: false });

      expect(session.id).toBe(id);
      await expectRestackResumed(session, point, stateDir, repo);
    });
  }
}
