// CLI start-up, from the built binary (run `pnpm build` first):
// - `infinity-code --version` wall time (median and best of RUNS);
// - time from launch to the first TUI frame (the prompt drawn), in tmux, in a small git repo and
//   in one of 10,000 files;
// - time from launch to a ready session: a task is typed the moment the prompt is drawn, and the
//   clock stops when the fake Messages API receives the first model request (so the session's
//   store, sandboxes and config were all ready for it), also in both repositories. The first
//   frame alone says little: a prompt drawn over a session still opening only moves the wait.
//
// How the frame is timed: a user's terminal already exists when they press Enter, so the tmux
// pane is created first, waiting on `read`; the clock starts when Enter is sent and stops when the
// pane's output (streamed through `tmux pipe-pane` into a FIFO, so nothing polls) contains the
// prompt. An earlier version polled `tmux capture-pane` every 5 ms: on a 2-core machine that
// polling took CPU from the process it measured and counted tmux's own start-up.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { startFakeMessagesApi } from '@infinity-code/runtime/testing';

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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
const sessionAlive = (name: string) => {
  try { execFileSync('tmux', ['has-session', '-t', name], { stdio: 'ignore' }); return true; } catch { return false; }
};

function versionMs(): number {
  const t0 = performance.now();
  execFileSync(process.execPath, [bin, '--version'], { stdio: 'ignore' });
  return performance.now() - t0;
}

interface Frame {
  /** Launch to the prompt drawn. */
  frameMs: number;
  /** Launch to the first model request, the task typed as soon as the prompt was drawn. */
  readyMs?: number;
}

/** Resolves with the time of the next request the fake API receives. */
type NextRequest = () => Promise<number>;

async function firstFrameMs(repo: string, home: string, scratch: string, run: number, api?: { url: string; next: NextRequest }): Promise<Frame> {
  const name = `ic-startup-${process.pid}-${run}`;
  const fifo = join(scratch, `pane-${run}`);
  execFileSync('mkfifo', [fifo]);
  tmux(
    'new-session', '-d', '-s', name, '-x', '120', '-y', '30', '-c', repo,
    '-e', 'ANTHROPIC_API_KEY=unused', '-e', `HOME=${home}`,
    ...(api ? ['-e', `ANTHROPIC_BASE_URL=${api.url}`] : []),
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
        seen += String(chunk);
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
    const frameMs = await drawn;
    if (!api) {
      output.destroy();
      return { frameMs };
    }
    const request = api.next();
    tmux('send-keys', '-t', name, '-l', 'Say hello.');
    tmux('send-keys', '-t', name, 'Enter');
    const readyMs = (await request) - t0;
    output.destroy();
    return { frameMs, readyMs };
  } finally {
    tmux('kill-session', '-t', name);
    // The next run starts only after this one's process is gone, so they never share the CPU.
    while (sessionAlive(name)) await new Promise((r) => setTimeout(r, 20));
    rmSync(fifo, { force: true });
  }
}

/** A git repository of `files` small files in nested folders, committed. */
function gitRepo(files: number): string {
  const repo = mkdtempSync(join(tmpdir(), 'ic-startup-'));
  writeFileSync(join(repo, 'README.md'), '# sample\n');
  for (let i = 0; i < files; i++) {
    const dir = join(repo, 'src', `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.ts`), `export const v${i} = ${i};\n`);
  }
  execFileSync('git', ['init', '-q'], { cwd: repo });
  execFileSync('git', ['add', '-A'], { cwd: repo });
  execFileSync('git', ['-c', 'user.email=b@b', '-c', 'user.name=b', 'commit', '-qm', 'i', '--allow-empty'], { cwd: repo });
  return repo;
}

const small = gitRepo(0);
const large = gitRepo(10_000);
const home = mkdtempSync(join(tmpdir(), 'ic-startup-home-'));
const scratch = mkdtempSync(join(tmpdir(), 'ic-startup-fifo-'));
let waiting: ((at: number) => void) | undefined;
const api = await startFakeMessagesApi({
  brain: () => {
    waiting?.(performance.now());
    waiting = undefined;
    return { text: 'Hello.' };
  },
});
const next: NextRequest = () => new Promise((resolve) => (waiting = resolve));
try {
  const versions = Array.from({ length: RUNS }, versionMs);
  const runs = Math.min(RUNS, 7);
  const figures = async (repo: string, offset: number) => {
    const frames: Frame[] = [];
    for (let i = 0; i < runs; i++) frames.push(await firstFrameMs(repo, home, scratch, offset + i, { url: api.url, next }));
    const frame = frames.map((f) => f.frameMs);
    const ready = frames.map((f) => f.readyMs!);
    return { frame: median(frame), frameBest: Math.min(...frame), ready: median(ready), readyBest: Math.min(...ready) };
  };
  const s = await figures(small, 0);
  const l = await figures(large, runs);
  console.log(
    `startup version_ms=${median(versions).toFixed(0)} version_ms_best=${Math.min(...versions).toFixed(0)} ` +
      `first_frame_ms=${s.frame.toFixed(0)} first_frame_ms_best=${s.frameBest.toFixed(0)} ` +
      `ready_ms=${s.ready.toFixed(0)} ready_ms_best=${s.readyBest.toFixed(0)}`,
  );
  console.log(
    `startup files=10000 first_frame_ms=${l.frame.toFixed(0)} first_frame_ms_best=${l.frameBest.toFixed(0)} ` +
      `ready_ms=${l.ready.toFixed(0)} ready_ms_best=${l.readyBest.toFixed(0)}`,
  );
} finally {
  await api.close();
  for (const dir of [small, large, home, scratch]) rmSync(dir, { recursive: true, force: true });
}
