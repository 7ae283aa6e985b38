// What confinement costs a command: the time from asking a sandbox to run `true` until it has
// exited, per backend this machine offers (median of RUNS after WARMUP runs; the first command of
// a sandbox, which also starts its namespace holder, is reported on its own).
// Env: RUNS (default 50), WARMUP (default 5).
// stdout: one line per backend,
//   `commands backend=<name> first_ms=<f> true_median_ms=<m> true_p90_ms=<p> contained=<bool>`
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession, probeBackends, type BackendName } from '@infinity-code/sandbox';

const RUNS = Number(process.env.RUNS ?? 50);
const WARMUP = Number(process.env.WARMUP ?? 5);

function makeRepo(): string {
  const root = mkdtempSync(join(tmpdir(), 'ic-bench-cmd-'));
  writeFileSync(join(root, 'a.txt'), 'a\n');
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@l', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@l' };
  for (const args of [['init', '-q'], ['add', '-A'], ['commit', '-qm', 'init']]) execFileSync('git', args, { cwd: root, env });
  return root;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function measure(backend: BackendName): Promise<void> {
  const repo = makeRepo();
  const stateDir = mkdtempSync(join(tmpdir(), 'ic-bench-state-'));
  const session = await openSession({ repo, stateDir, backend });
  try {
    const sb = await session.create('root');
    const t0 = performance.now();
    await sb.run('true');
    const first = performance.now() - t0;
    for (let i = 0; i < WARMUP; i++) await sb.run('true');
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      const r = await sb.run('true');
      times.push(performance.now() - t);
      if (r.exitCode !== 0) throw new Error(`true exited ${r.exitCode}: ${r.stderr}`);
    }
    times.sort((a, b) => a - b);
    const contained = (sb as { contained?: boolean }).contained ?? false;
    console.log(
      `commands backend=${backend} first_ms=${first.toFixed(1)} true_median_ms=${quantile(times, 0.5).toFixed(1)} ` +
        `true_p90_ms=${quantile(times, 0.9).toFixed(1)} contained=${contained}`,
    );
  } finally {
    await session.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  }
}

const report = await probeBackends(mkdtempSync(join(tmpdir(), 'ic-bench-probe-')), { fresh: true });
for (const r of report.results) {
  if (!r.ok) {
    console.error(`[bench] ${r.name} not available: ${r.detail}`);
    continue;
  }
  await measure(r.name);
}
