// A short task as fast as the process allows: one headless run (`-p TASK --yes`) of a small bug
// fix against the fake Messages API with instant replies, timed phase by phase. Run `pnpm build`
// first.
//
// The task takes four model requests: read lib.js, edit it, run `node test.js`, answer. The
// scripted model makes the same calls for either CLI (ours: read_file, edit_file,
// execute_command; Claude Code's: Read, Edit, Bash). Phases, from the bench's clock:
//   start      process spawned -> first model request arrives
//   read       first request -> second (reply streamed, the read run, the result sent back)
//   edit       second -> third
//   test       third -> fourth (`node test.js` in the sandbox)
//   exit       fourth (last) request -> process exited (answer printed, everything cleaned up)
// Under the phases, our CLI's own timing trace (INFINITY_CODE_TRACE=1) splits them into steps:
// when the first model request was handed to the SDK (since the process started), the session's
// opening, the snapshot, the root sandbox's mount, the command, the root's diff, the apply and
// the teardown; and `cpu`, the CPU time the CLI's process used (all its threads, not the
// processes it started).
// Medians over RUNS runs (default 7) after one warm-up run each (a user's machine has run the
// CLI before: per-boot probe caches exist, the page cache holds the binaries).
//
// Claude Code: set CLAUDE_CODE_BIN to its `claude` binary (install it in a scratch folder outside
// this repository: `npm i @anthropic-ai/claude-code`, never as a dependency here). Its runs
// alternate with ours against the same fake API, and the ratio of median walls is printed. It
// runs with `--permission-mode acceptEdits --allowedTools "Bash(node test.js)" Read Edit`
// (`--dangerously-skip-permissions` is refused as root).
//
// The TUI (needs tmux; said and skipped without it): the built CLI in a 120x40 tmux pane, same
// repository and environment, a task typed at the prompt, answered with text only, then /quit.
// Each run times (see tui-first-request.ts):
//   enter_to_request   Enter on the task -> the fake API has the first model request (the API's
//                      clock: no screen reading in between)
//   start_to_ready     Enter that starts the CLI in the pane -> first frame with the prompt
//   start_to_open      ... -> the status line names the sandbox (session and root sandbox ready)
// Runs alternate between entering the task once the status line names the sandbox (a user who
// typed for a second or more; the target's figure) and `early`, as soon as the prompt shows it (a
// pasted task: the rest of the session's opening is then waited for). Medians of TUI_RUNS runs
// of each (default 5) after one warm-up run.
//
// LARGE=<files> (default 50000; 0 skips) adds the large-repository case through
// @infinity-code/sandbox: a session's open (snapshot of the working tree, base ready, root
// sandbox, first file read), first in a fresh state dir (alternating with `git worktree add` of
// the same tree), then again after 10 files changed (the previous session's base is reused).
//
// Env: RUNS (0 skips the small task), TUI_RUNS (0 skips the TUI), HEADLESS_NODE_ARGS and
// TUI_NODE_ARGS (flags for our CLI's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), CLAUDE_CODE_BIN, INFINITY_CODE_BIN,
// LARGE, LARGE_RUNS (first and second opens each, medians; default 3),
// HEADLESS_STDERR=1 (show the CLIs' stderr). `RUNS=0 LARGE=0` times the TUI alone.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeMessagesApi, type FakeBrain, type FakeReply, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { openSession, probeBackends } from '@infinity-code/sandbox';
import { BUGGY, FIXED, makeRepo } from './bug-repo.js';
import { fmt, median } from './figures.js';
import { tuiCase } from './tui-first-request.js';

// INFINITY_CODE_BIN: another build's dist/main.js (another worktree's), to compare before and after.
const bin = process.env.INFINITY_CODE_BIN ?? fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));
if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`);
const RUNS = Number(process.env.RUNS ?? 7);
const CLAUDE = process.env.CLAUDE_CODE_BIN;
const TUI_RUNS = Number(process.env.TUI_RUNS ?? 5);
const LARGE = Number(process.env.LARGE ?? 50_000);
const LARGE_RUNS = Number(process.env.LARGE_RUNS ?? 3);
const TASK = 'The test in test.js fails: fix the bug in lib.js so that `node test.js` passes.';
const PHASES = ['start', 'read', 'edit', 'test', 'exit'] as const;

// --- the repository and the scripted model ---------------------------------------------------

type Block = NonNullable<FakeReply['content']>[number];
interface Msg {
  role: string;
  content: string | Array<{ type: string; name?: string }>;
}

/** Which CLI sent a request, by the tools it offers; undefined for a side request (no such tools). */
function cliOf(body: FakeRequestBody): 'ours' | 'claude' | undefined {
  const names = new Set((body.tools ?? []).map((t) => (t as { name?: string }).name));
  if (names.has('read_file')) return 'ours';
  if (names.has('Read') && names.has('Edit')) return 'claude';
  return undefined;
}

/** Tool calls made so far in this conversation (injected events are not calls). */
function callsMade(body: FakeRequestBody): number {
  return ((body.messages ?? []) as Msg[])
    .filter((m) => m.role === 'assistant' && Array.isArray(m.content))
    .flatMap((m) => m.content as Array<{ type: string; name?: string }>)
    .filter((b) => b.type === 'tool_use' && b.name !== 'receive_event__injected').length;
}

function stepReply(cli: 'ours' | 'claude', step: number, repo: string): FakeReply {
  const call = (name: string, input: Record<string, unknown>): Block => ({ type: 'tool_use', name, input });
  const say = (text: string): Block => ({ type: 'text', text });
  const ours = cli === 'ours';
  switch (step) {
    case 0:
      return { content: [say('Reading lib.js.'), ours ? call('read_file', { path: 'lib.js' }) : call('Read', { file_path: join(repo, 'lib.js') })] };
    case 1:
      return {
        content: [
          say('add subtracts; it should add.'),
          ours
            ? call('edit_file', { path: 'lib.js', old_str: BUGGY, new_str: FIXED })
            : call('Edit', { file_path: join(repo, 'lib.js'), old_string: BUGGY, new_string: FIXED }),
        ],
      };
    case 2:
      return {
        content: [
          say('Running the test.'),
          ours ? call('execute_command', { command: 'node test.js' }) : call('Bash', { command: 'node test.js', description: 'Run the test' }),
        ],
      };
    default:
      return { content: [say('Fixed: add() subtracted instead of adding. `node test.js` passes.')] };
  }
}

// --- one run ----------------------------------------------------------------------------------

interface RunFigures {
  phases: Record<(typeof PHASES)[number], number>;
  wall: number;
  sideRequests: number;
  /** Ours: the CLI's own timing of its steps (INFINITY_CODE_TRACE=1), by step. */
  steps?: Record<string, number>;
}

// Steps of our CLI's timing trace shown under the phases (see timingSteps): when the first model
// request was handed to the SDK (ms since the process started), then how long each step took.
const STEPS = ['first_request_at', 'session_open', 'snapshot', 'sandbox_mount', 'command', 'root_diff', 'apply', 'close', 'cpu'] as const;

/** The steps of one run from its `[timing]` lines (the first of each kind). */
function timingSteps(stderr: string): Record<string, number> {
  const steps: Record<string, number> = {};
  for (const line of stderr.split('\n')) {
    const m = /^\[timing\] ([\d.]+) (\S+)(?: ([\d.]+)ms)?(.*)$/.exec(line);
    if (!m) continue;
    const [, at, what, ms, detail] = m;
    const key = what === 'model-request' ? 'first_request_at' : what === 'git' && detail.includes('snapshot') ? 'snapshot' : what.replace(/-/g, '_');
    const value = what === 'model-request' ? Number(at) : Number(ms);
    if (!(key in steps) && Number.isFinite(value)) steps[key] = value;
  }
  return steps;
}

async function runOnce(cli: 'ours' | 'claude', home: string): Promise<RunFigures> {
  const repo = makeRepo();
  const marks: number[] = [];
  let side = 0;
  let wrongCli = false;
  const brain: FakeBrain = (body) => {
    const who = cliOf(body);
    if (who === undefined) {
      // Claude Code's side requests (titles, topic checks...): a short text answer.
      side++;
      return { content: [{ type: 'text', text: 'ok' }] };
    }
    if (who !== cli) wrongCli = true;
    marks.push(performance.now());
    return stepReply(who, callsMade(body), repo);
  };
  const api = await startFakeMessagesApi({ brain, strict: cli === 'ours' });
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_API_KEY: 'bench',
      ANTHROPIC_BASE_URL: api.url,
      NO_COLOR: '1',
      // Our CLI says where its time goes (stderr), shown under the phases.
      ...(cli === 'ours' ? { INFINITY_CODE_TRACE: '1' } : {}),
      ...(cli === 'claude'
        ? {
            // Nothing but the fake API: no telemetry, updates or error reports (the network reaches
            // nothing else here, and waiting on it would be measured).
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
            DISABLE_AUTOUPDATER: '1',
            DISABLE_TELEMETRY: '1',
            DISABLE_ERROR_REPORTING: '1',
          }
        : {}),
    };
    const [file, args] =
      cli === 'ours'
        ? [process.execPath, [...(process.env.HEADLESS_NODE_ARGS?.split(' ').filter(Boolean) ?? []), bin, '-p', TASK, '--yes']]
        : [CLAUDE!, ['-p', TASK, '--permission-mode', 'acceptEdits', '--allowedTools', 'Bash(node test.js)', 'Read', 'Edit']];
    const t0 = performance.now();
    const { code, stderr, stdout } = await new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
      const child = spawn(file, args, { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      child.on('exit', (c) => {
        marks.push(performance.now());
        resolve({ code: c, stderr: err, stdout: out });
      });
    });
    if (process.env.HEADLESS_STDERR) process.stderr.write(`--- ${cli} stderr\n${stderr}--- stdout\n${stdout}\n`);
    const fixed = readFileSync(join(repo, 'lib.js'), 'utf8').includes(FIXED);
    if (code !== 0 || marks.length !== 5 || !fixed || wrongCli) {
      throw new Error(
        `${cli} run went wrong: exit ${code}, ${marks.length - 1} main requests (4 expected), lib.js ${fixed ? 'fixed' : 'not fixed'}` +
          `${wrongCli ? ', requests from the other CLI' : ''}\n${stderr.slice(-3000)}\n${stdout.slice(-1000)}`,
      );
    }
    const at = [t0, ...marks];
    const phases = Object.fromEntries(PHASES.map((p, i) => [p, at[i + 1] - at[i]])) as RunFigures['phases'];
    return { phases, wall: at.at(-1)! - t0, sideRequests: side, ...(cli === 'ours' ? { steps: timingSteps(stderr) } : {}) };
  } finally {
    await api.close();
    rmSync(repo, { recursive: true, force: true });
  }
}

function summary(name: string, runs: RunFigures[]): string {
  const parts = PHASES.map((p) => `${p}_ms=${fmt(median(runs.map((r) => r.phases[p])))}`);
  const side = median(runs.map((r) => r.sideRequests));
  return (
    `headless ${name.padEnd(11)} wall_ms=${fmt(median(runs.map((r) => r.wall)))} ${parts.join(' ')}` +
    ` (best ${fmt(Math.min(...runs.map((r) => r.wall)))}, worst ${fmt(Math.max(...runs.map((r) => r.wall)))}` +
    `${side > 0 ? `, ${side} side requests` : ''})`
  );
}

// --- the large repository ----------------------------------------------------------------------

const FILES_PER_DIR = 50;
const largePath = (n: number): string => `pkg${Math.floor(n / (FILES_PER_DIR * 20))}/dir${Math.floor(n / FILES_PER_DIR)}/file${n}.ts`;

function makeLargeRepo(files: number): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'ic-bench-large-')));
  for (let i = 0; i < files; i++) {
    const file = join(root, largePath(i));
    if (i % FILES_PER_DIR === 0) mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, `// file ${i}\n` + `export const value${i} = ${i};\n`.repeat(20 + (i % 40)));
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  // No automatic gc: it would still be writing into .git when the repository is removed.
  git('config', 'gc.auto', '0');
  git('-c', 'user.email=bench@example.com', '-c', 'user.name=bench', 'commit', '-qm', 'large');
  return root;
}

/** A session's open up to the first tool call's answer: what a first read_file waits for. */
async function timeOpen(repo: string, stateDir: string): Promise<number> {
  const t0 = performance.now();
  const session = await openSession({ repo, stateDir });
  const root = await session.create('root');
  await root.readFile(largePath(7));
  const took = performance.now() - t0;
  await session.close();
  return took;
}

/**
 * `git worktree add` of the repository's HEAD at `wt`. The worktree stays until the case ends: on
 * ext4 without a journal (this machine's disk), the inode allocator skips inodes freed in the last
 * 60 s (300 s while their inode table block is unwritten), reading that block for each, so
 * removing 50,000 files between runs would slow whatever ran next by seconds, ours or git's.
 */
function timeWorktreeAdd(repo: string, wt: string): number {
  execFileSync('sync');
  const t0 = performance.now();
  execFileSync('git', ['worktree', 'add', '-q', '--detach', wt, 'HEAD'], { cwd: repo, stdio: 'ignore' });
  return performance.now() - t0;
}

async function largeCase(files: number): Promise<void> {
  const repo = makeLargeRepo(files);
  const states: string[] = [];
  const worktreeDirs: string[] = [];
  const stateDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'ic-bench-large-state-'));
    states.push(dir);
    return dir;
  };
  try {
    // First opens (a state dir of their own each: no base of this repository yet) alternate with
    // `git worktree add` of the same tree, so both see the same disk: checkouts of 50,000 files
    // vary by seconds with what else writes to it.
    const worktrees: number[] = [];
    const firsts: number[] = [];
    let last = '';
    for (let r = 0; r < LARGE_RUNS; r++) {
      worktreeDirs.push(`${repo}-wt${r}`);
      worktrees.push(timeWorktreeAdd(repo, worktreeDirs.at(-1)!));
      last = stateDir();
      // The backend probe is cached per boot: a user's machine has run it before.
      await probeBackends(last);
      execFileSync('sync');
      firsts.push(await timeOpen(repo, last));
    }
    const seconds: number[] = [];
    for (let r = 0; r < LARGE_RUNS; r++) {
      // The user edits 10 files between sessions.
      for (let k = 0; k < 10; k++) {
        const n = (r * 1_000 + k * 97) % files;
        writeFileSync(join(repo, largePath(n)), `// file ${n}, edited ${r}\n`);
      }
      execFileSync('sync');
      seconds.push(await timeOpen(repo, last));
    }
    const [first, worktree, second] = [median(firsts), median(worktrees), median(seconds)];
    const list = (xs: number[]) => xs.map(fmt).join(', ');
    console.log(
      `headless large files=${files} first_open_ms=${fmt(first)} (${list(firsts)}) worktree_add_ms=${fmt(worktree)} (${list(worktrees)}) ` +
        `second_open_ms=${fmt(second)} (after 10 changed files: ${list(seconds)}); medians of ${LARGE_RUNS}`,
    );
    console.log(
      `headless large targets second_open (< 1000: ${second < 1000 ? 'met' : 'MISSED'}) ` +
        `first_open <= worktree_add (${first <= worktree ? 'met' : 'MISSED'}: ${(first / worktree).toFixed(2)}x)`,
    );
  } finally {
    for (const dir of [repo, ...worktreeDirs, ...states]) rmSync(dir, { recursive: true, force: true });
  }
}

// --- main -----------------------------------------------------------------------------------------

const homes = {
  ours: mkdtempSync(join(tmpdir(), 'ic-bench-home-')),
  claude: mkdtempSync(join(tmpdir(), 'ic-bench-cc-home-')),
  tui: mkdtempSync(join(tmpdir(), 'ic-bench-tui-home-')),
};
const clis: Array<'ours' | 'claude'> = CLAUDE ? ['ours', 'claude'] : ['ours'];
try {
  if (RUNS > 0) await smallCase();
  if (TUI_RUNS > 0) await tuiCase({ bin, runs: TUI_RUNS, home: homes.tui, nodeArgs: (process.env.TUI_NODE_ARGS ?? '').split(' ').filter(Boolean) });
  if (LARGE > 0) await largeCase(LARGE);
} finally {
  for (const home of Object.values(homes)) rmSync(home, { recursive: true, force: true });
}

async function smallCase(): Promise<void> {
  if (!CLAUDE) console.log('headless: CLAUDE_CODE_BIN is not set, so Claude Code is not compared');
  for (const cli of clis) await runOnce(cli, homes[cli]); // warm-up
  const runs: Record<string, RunFigures[]> = { ours: [], claude: [] };
  for (let i = 0; i < RUNS; i++) {
    // Alternating, so both see the same machine load.
    for (const cli of i % 2 === 0 ? clis : [...clis].reverse()) runs[cli].push(await runOnce(cli, homes[cli]));
  }
  console.log(summary('infinity', runs.ours));
  const steps = STEPS.map((s) => {
    const values = runs.ours.flatMap((r) => (r.steps?.[s] !== undefined ? [r.steps[s]] : []));
    return `${s}_ms=${values.length > 0 ? fmt(median(values)) : '-'}`;
  });
  console.log(`headless infinity steps (its own timing trace): ${steps.join(' ')}`);
  if (CLAUDE) {
    console.log(summary('claude-code', runs.claude));
    const ratio = median(runs.ours.map((r) => r.wall)) / median(runs.claude.map((r) => r.wall));
    console.log(`headless ratio infinity/claude-code wall=${ratio.toFixed(2)} (target <= 0.50: ${ratio <= 0.5 ? 'met' : 'MISSED'})`);
  }
  const ours = runs.ours;
  const start = median(ours.map((r) => r.phases.start));
  const exit = median(ours.map((r) => r.phases.exit));
  console.log(
    `headless targets start_ms=${fmt(start)} (< 200: ${start < 200 ? 'met' : 'MISSED'}) exit_ms=${fmt(exit)} (< 100: ${exit < 100 ? 'met' : 'MISSED'})`,
  );
}
