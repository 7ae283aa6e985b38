// CLI start-up, from the built binary (run `pnpm build` first):
// - `infinity-code --version` wall time (median and best of RUNS);
// - time from launch to the first TUI frame (the prompt drawn), in tmux, in a small git repo.
//
// How the frame is timed: a user's terminal already exists when they press Enter, so the tmux
// pane is created first, waiting on `read`; the clock starts when Enter is sent and stops when the
// pane's output (streamed through `tmux pipe-pane` into a FIFO, so nothing polls) contains the
// prompt. An earlier version polled `tmux capture-pane` every 5 ms: on a 2-core machine that
// polling took CPU from the process it measured and counted tmux's own start-up.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';

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
const PROMPT = 'Ask for a change';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
const sessionAlive = (name: string) => {
  try { execFileSync('tmux', ['has-session', '-t', name], { stdio: 'ignore' }); return true; } catch { return false; }
};

function versionMs(): number {
  const t0 = performance.now();
  execFileSync(process.execPath, [bin, '--version'], { stdio: 'ignore' });
  return performance.now() - t0;
}

async function firstFrameMs(repo: string, home: string, scratch: string, run: number): Promise<number> {
  const name = `ic-startup-${process.pid}-${run}`;
  const fifo = join(scratch, `pane-${run}`);
  execFileSync('mkfifo', [fifo]);
  tmux(
    'new-session', '-d', '-s', name, '-x', '120', '-y', '30', '-c', repo,
    '-e', 'ANTHROPIC_API_KEY=unused', '-e', `HOME=${home}`,
    `read _ && exec env -u CI ${process.execPath} ${bin}`,
  );
  try {
    // pipe-pane's `cat` opens the FIFO for writing; our stream opens it for reading.
    tmux('pipe-pane', '-t', name, '-O', `cat > ${fifo}`);
    const output = createReadStream(fifo, { encoding: 'utf8' });
    let seen = '';
    let t0 = 0;
    const drawn = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no TUI frame after 20 s:\n${stripVTControlCharacters(seen)}`)), 20_000);
      output.on('data', (chunk) => {
        seen += chunk;
        if (t0 > 0 && stripVTControlCharacters(seen).includes(PROMPT)) {
          clearTimeout(timer);
          resolve(performance.now() - t0);
        }
      });
      output.on('error', reject);
    });
    await new Promise((r) => output.once('open', r));
    t0 = performance.now();
    tmux('send-keys', '-t', name, 'Enter');
    const ms = await drawn;
    output.destroy();
    return ms;
  } finally {
    tmux('kill-session', '-t', name);
    // The next run starts only after this one's process is gone, so they never share the CPU.
    while (sessionAlive(name)) await new Promise((r) => setTimeout(r, 20));
    rmSync(fifo, { force: true });
  }
}

const repo = mkdtempSync(join(tmpdir(), 'ic-startup-'));
const home = mkdtempSync(join(tmpdir(), 'ic-startup-home-'));
const scratch = mkdtempSync(join(tmpdir(), 'ic-startup-fifo-'));
writeFileSync(join(repo, 'README.md'), '# sample\n');
execFileSync('git', ['init', '-q'], { cwd: repo });
execFileSync('git', ['-c', 'user.email=b@b', '-c', 'user.name=b', 'commit', '-qm', 'i', '--allow-empty'], { cwd: repo });
try {
  const versions = Array.from({ length: RUNS }, versionMs);
  const frames: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 7); i++) frames.push(await firstFrameMs(repo, home, scratch, i));
  console.log(
    `startup version_ms=${median(versions).toFixed(0)} version_ms_best=${Math.min(...versions).toFixed(0)} ` +
      `first_frame_ms=${median(frames).toFixed(0)} first_frame_ms_best=${Math.min(...frames).toFixed(0)}`,
  );
} finally {
  rmSync(repo, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}
