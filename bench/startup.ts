// CLI start-up, from the built binary (run `pnpm build` first):
// - `infinity-code --version` wall time (median and best of RUNS);
// - time from launch to the first TUI frame (the prompt drawn), in tmux, in a small git repo.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));
if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`);
// main.js runs the bundle only when it is at least as new as the TypeScript build (src/main.ts).
const mtime = (rel: string) => statSync(new URL(rel, import.meta.url), { throwIfNoEntry: false })?.mtimeMs;
const bundle = mtime('../packages/cli/dist/cli.bundle.js');
const built = mtime('../packages/cli/tsconfig.tsbuildinfo');
if (bundle === undefined || (built !== undefined && bundle < built)) {
  console.error('warning: the CLI bundle is missing or older than the TypeScript build, so this measures tsc\'s unbundled output: run `pnpm build`');
}
const RUNS = Number(process.env.RUNS ?? 9);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function versionMs(): number {
  const t0 = performance.now();
  execFileSync(process.execPath, [bin, '--version'], { stdio: 'ignore' });
  return performance.now() - t0;
}

async function firstFrameMs(repo: string, home: string): Promise<number> {
  const name = `ic-startup-${process.pid}`;
  const t0 = performance.now();
  execFileSync('tmux', [
    'new-session', '-d', '-s', name, '-x', '120', '-y', '30', '-c', repo,
    '-e', 'ANTHROPIC_API_KEY=unused', '-e', `HOME=${home}`,
    `env -u CI ${process.execPath} ${bin}`,
  ]);
  try {
    for (;;) {
      const screen = execFileSync('tmux', ['capture-pane', '-p', '-t', name], { encoding: 'utf8' });
      if (screen.includes('Ask for a change')) return performance.now() - t0;
      if (performance.now() - t0 > 20_000) throw new Error(`no TUI frame after 20 s:\n${screen}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    execFileSync('tmux', ['kill-session', '-t', name]);
  }
}

const repo = mkdtempSync(join(tmpdir(), 'ic-startup-'));
const home = mkdtempSync(join(tmpdir(), 'ic-startup-home-'));
writeFileSync(join(repo, 'README.md'), '# sample\n');
execFileSync('git', ['init', '-q'], { cwd: repo });
execFileSync('git', ['-c', 'user.email=b@b', '-c', 'user.name=b', 'commit', '-qm', 'i', '--allow-empty'], { cwd: repo });
try {
  const versions = Array.from({ length: RUNS }, versionMs);
  const frames: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 5); i++) frames.push(await firstFrameMs(repo, home));
  console.log(
    `startup version_ms=${median(versions).toFixed(0)} version_ms_best=${Math.min(...versions).toFixed(0)} ` +
      `first_frame_ms=${median(frames).toFixed(0)} first_frame_ms_best=${Math.min(...frames).toFixed(0)}`,
  );
} finally {
  rmSync(repo, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
