// Session open, sandbox creation, a 10-file diff and a base refresh vs repository size, for every
// backend this machine offers.
// Env: FILES (one size; default 1000,10000,50000), RUNS (timed repetitions, median reported; 5),
// OPEN_RUNS (repetitions of the session open and of `git worktree add`; 1: each is a full checkout).
// stdout: one line per backend and size,
//   `sandbox backend=<name> files=<n> open_ms=<x> worktree_add_ms=<w> create_ms=<c> diff_ms=<d> refresh_ms=<r>`
// open_ms is openSession (snapshot + base checkout); worktree_add_ms is `git worktree add` of the
// same repository just before it, under the same conditions (both start after a `sync`, so neither
// pays for the other's writeback); refresh_ms is refreshBase() after the user edited 10 files and
// added one. Context (child spawn) goes to stderr.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession, probeBackends, type BackendName } from '@infinity-code/sandbox';

const SIZES = (process.env.FILES ?? '1000,10000,50000').split(',').map(Number);
const RUNS = Number(process.env.RUNS ?? 5);
const OPEN_RUNS = Number(process.env.OPEN_RUNS ?? 1);
const FILES_PER_DIR = 50;

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', maxBuffer: 1 << 26 });
}

function fileText(i: number): string {
  return `// file ${i}\n` + `export const value${i} = ${i};\n`.repeat(20 + (i % 40));
}

function makeRepo(root: string, files: number): void {
  git(root, 'init', '-q', '-b', 'main');
  for (let i = 0; i < files; i++) {
    const dir = join(root, `pkg${Math.floor(i / (FILES_PER_DIR * 20))}`, `dir${Math.floor(i / FILES_PER_DIR)}`);
    if (i % FILES_PER_DIR === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `file${i}.ts`), fileText(i));
  }
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'bench repository');
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const ms = (t0: number): number => performance.now() - t0;
const fmt = (x: number): string => x.toFixed(1);

function filePath(n: number): string {
  return `pkg${Math.floor(n / (FILES_PER_DIR * 20))}/dir${Math.floor(n / FILES_PER_DIR)}/file${n}.ts`;
}

/** Flushes dirty pages, so the next timed step does not pay for the previous one's writes. */
function settle(): void {
  execFileSync('sync');
}

function timeWorktreeAdd(repo: string): number {
  const wt = join(repo, '..', `${repo.split('/').pop()}-wt`);
  settle();
  const t0 = performance.now();
  git(repo, 'worktree', 'add', '-q', '--detach', wt, 'HEAD');
  const took = ms(t0);
  rmSync(wt, { recursive: true, force: true });
  git(repo, 'worktree', 'prune');
  return took;
}

async function benchBackend(backend: BackendName, repo: string, files: number): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'ic-bench-state-'));
  try {
    const opens: number[] = [];
    const worktreeAdds: number[] = [];
    for (let i = 0; i < OPEN_RUNS - 1; i++) {
      worktreeAdds.push(timeWorktreeAdd(repo));
      settle();
      const t = performance.now();
      await (await openSession({ repo, stateDir, backend, collectStale: false })).close();
      opens.push(ms(t));
    }
    worktreeAdds.push(timeWorktreeAdd(repo));
    settle();
    let t0 = performance.now();
    const session = await openSession({ repo, stateDir, backend, collectStale: false });
    opens.push(ms(t0));

    // Creation = until the sandbox can serve a file operation (on overlay: mounted).
    const creates: number[] = [];
    const runs = backend === 'copy' ? Math.min(RUNS, 3) : RUNS;
    for (let i = 0; i < runs; i++) {
      t0 = performance.now();
      const sb = await session.create(`create-${i}`);
      await sb.stat('.');
      creates.push(ms(t0));
      await sb.discard();
    }

    const sb = await session.create('diff');
    for (let i = 0; i < 10; i++) {
      const n = Math.floor((i * files) / 10);
      await sb.writeFile(filePath(n), fileText(n) + `export const edited${i} = true;\n`);
    }
    const diffs: number[] = [];
    for (let i = 0; i < Math.min(RUNS, 3); i++) {
      t0 = performance.now();
      const d = await sb.diff();
      diffs.push(ms(t0));
      if (d.files.length !== 10) throw new Error(`expected a 10-file diff, got ${d.files.length}`);
    }

    t0 = performance.now();
    const child = await session.create('child', sb);
    await child.stat('.');
    const spawnMs = ms(t0);

    // The user edits 10 files (other ones than the agent) and adds one; the base follows.
    const edited = Array.from({ length: 10 }, (_, i) => filePath(Math.floor(((i + 0.5) * files) / 10)));
    const originals = edited.map((p) => readFileSync(join(repo, p)));
    let refreshMs: number;
    try {
      edited.forEach((p, i) => writeFileSync(join(repo, p), `${originals[i].toString()}// edited by the user\n`));
      writeFileSync(join(repo, 'user-added.ts'), 'export const added = true;\n');
      t0 = performance.now();
      const refresh = await session.refreshBase();
      refreshMs = ms(t0);
      if (refresh.files.length !== 11) throw new Error(`expected an 11-file refresh, got ${refresh.files.length}`);
    } finally {
      edited.forEach((p, i) => writeFileSync(join(repo, p), originals[i]));
      rmSync(join(repo, 'user-added.ts'), { force: true });
    }

    process.stdout.write(
      `sandbox backend=${backend} files=${files} open_ms=${fmt(median(opens))} worktree_add_ms=${fmt(median(worktreeAdds))} ` +
        `create_ms=${fmt(median(creates))} diff_ms=${fmt(median(diffs))} refresh_ms=${fmt(refreshMs)}\n`,
    );
    process.stderr.write(`  ${backend}: child spawn ${fmt(spawnMs)} ms\n`);
    await session.close();
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const probeDir = mkdtempSync(join(tmpdir(), 'ic-bench-probe-'));
const probe = await probeBackends(probeDir, { fresh: true });
rmSync(probeDir, { recursive: true, force: true });
const backends = probe.results.filter((r) => r.ok).map((r) => r.name);
for (const r of probe.results.filter((r) => !r.ok)) process.stderr.write(`skipping ${r.name}: ${r.detail}\n`);

for (const files of SIZES) {
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'ic-bench-repo-')));
  try {
    const t0 = performance.now();
    makeRepo(repo, files);
    process.stderr.write(`repo with ${files} files generated in ${fmt(ms(t0))} ms\n`);
    for (const backend of backends) await benchBackend(backend, repo, files);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}
