// The headless bench's TUI case: the built CLI in a tmux pane against the fake Messages API, a
// task typed at the prompt, and the time from its Enter to the first model request.
//
// A user's terminal exists before they start the CLI: the pane is made first, its shell waiting
// on `read`, and the clock starts when Enter is sent to it. Keys and screen reads go through one
// tmux control client (see tmux-control.ts), and the screen is read after each output of the
// pane, not polled. The request's time is taken in the fake API's brain, so enter_to_request
// involves no screen reading at all.
//
// Each run enters the task at one of two moments:
//   open   once the status line names the sandbox (the session and its root sandbox are ready):
//          what a user who takes a second or more to type a task sees.
//   early  as soon as the prompt is drawn and shows the task: a task pasted at once; the rest of
//          the session's opening (not its sandbox) is then part of enter_to_request.
// The model answers with text only: nothing is changed, so /quit asks nothing and ends the CLI.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeBrain, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { makeRepo } from './bug-repo.js';
import { fmt, median } from './figures.js';
import { quote, TmuxControl } from './tmux-control.js';

const TASK = 'Say what lib.js does.';
const ANSWER = 'lib.js exports add(a, b); nothing to change.';
const PROMPT = 'Ask for a change';
const MODES = ['open', 'early'] as const;
type Mode = (typeof MODES)[number];

interface TuiFigures {
  /** Enter sent -> the fake API has the first model request. */
  enterToRequest: number;
  /** Enter that started the CLI -> the first frame with the prompt. */
  startToReady: number;
  /** Enter that started the CLI -> the status line names the sandbox. */
  startToOpen?: number;
  sideRequests: number;
  captureMs: number[];
}

export interface TuiCaseOptions {
  /** The CLI's dist/main.js. */
  bin: string;
  runs: number;
  /** HOME of every run (its state directory: sandboxes, the probe cache). */
  home: string;
  /** Flags for the CLI's node (--cpu-prof, to see where the time goes). */
  nodeArgs: string[];
}

/** Prints the TUI case's lines, or why it is skipped. */
export async function tuiCase(o: TuiCaseOptions): Promise<void> {
  if (!hasTmux()) {
    console.log('headless tui: tmux is not installed, so the TUI is not timed (TUI_RUNS=0 skips it)');
    return;
  }
  // A tmux server of our own (no user config, no other sessions), ended with the case; its
  // socket in a folder of ours (tmux leaves the socket file behind).
  const socketDir = mkdtempSync(join(tmpdir(), 'ic-bench-tmux-'));
  const tmux = ['-S', join(socketDir, 'socket'), '-f', '/dev/null'];
  try {
    await runOnce(o, tmux, 'open', 0); // warm-up
    const runs: Record<Mode, TuiFigures[]> = { open: [], early: [] };
    for (let i = 0; i < o.runs; i++) {
      // Alternating, so both see the same machine load.
      for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) runs[mode].push(await runOnce(o, tmux, mode, i + 1));
    }
    report(runs);
  } finally {
    try {
      execFileSync('tmux', [...tmux, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // No session left: the server has ended already.
    }
    rmSync(socketDir, { recursive: true, force: true });
  }
}

function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether a request is the model's turn in the conversation (the tools it offers), not a side request. */
const isMain = (body: FakeRequestBody): boolean => (body.tools ?? []).some((t) => (t as { name?: string }).name === 'read_file');

async function runOnce(o: TuiCaseOptions, tmux: string[], mode: Mode, index: number): Promise<TuiFigures> {
  const repo = makeRepo();
  let main = 0;
  let side = 0;
  let requested!: (at: number) => void;
  const firstRequest = new Promise<number>((resolve) => (requested = resolve));
  const brain: FakeBrain = (body) => {
    if (!isMain(body)) side++;
    else if (main++ === 0) requested(performance.now());
    return { content: [{ type: 'text', text: ANSWER }] };
  };
  const api = await startFakeMessagesApi({ brain, strict: true });
  const session = `run-${index}-${mode}`;
  let control: TmuxControl | undefined;
  try {
    // The headless runs' environment, and a terminal.
    const env = { PATH: process.env.PATH ?? '', HOME: o.home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1', TERM: 'xterm-256color' };
    const cli = ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.execPath, ...o.nodeArgs, o.bin].map(quote).join(' ');
    execFileSync('tmux', [...tmux, 'new-session', '-d', '-s', session, '-x', '120', '-y', '40', '-c', repo, 'sh', '-c', `read _ && exec ${cli}`]);
    control = await TmuxControl.attach(tmux, session);
    const ctl = control;

    const t0 = performance.now();
    await ctl.press('Enter');
    const ready = await ctl.waitForScreen((s) => s.includes(PROMPT), 'prompt');
    // The status line says `sandbox …` until the root sandbox is ready.
    const open = mode === 'open' ? await ctl.waitForScreen((s) => /sandbox [^…\s]/.test(s), 'sandbox in the status line') : undefined;
    await ctl.type(TASK);
    await ctl.waitForScreen((s) => s.includes(`› ${TASK}`), 'task in the prompt');
    const enterAt = performance.now();
    await ctl.press('Enter');
    const requestAt = await Promise.race([
      firstRequest,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no model request 30 s after Enter')), 30_000).unref()),
    ]);
    await ctl.waitForScreen((s) => s.includes(ANSWER), 'answer');
    await ctl.type('/quit');
    await ctl.waitForScreen((s) => s.includes('› /quit'), '/quit in the prompt');
    await ctl.press('Enter');
    // The control client ends with the session, which ends with the CLI.
    await Promise.race([
      ctl.closed,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`the TUI did not exit 30 s after /quit:\n${ctl.captureMs.length} screens read`)), 30_000).unref(),
      ),
    ]);
    if (main !== 1) throw new Error(`${main} model requests for one task answered with text (1 expected)`);
    return {
      enterToRequest: requestAt - enterAt,
      startToReady: ready.at - t0,
      ...(open ? { startToOpen: open.at - t0 } : {}),
      sideRequests: side,
      captureMs: ctl.captureMs,
    };
  } catch (err) {
    const screen = await control?.screen().catch(() => '');
    throw new Error(`TUI run ${index} (${mode}) went wrong: ${err instanceof Error ? err.message : String(err)}${screen ? `\nscreen:\n${screen}` : ''}`);
  } finally {
    control?.close();
    try {
      execFileSync('tmux', [...tmux, 'kill-session', '-t', session], { stdio: 'ignore' });
    } catch {
      // Ended with the CLI.
    }
    await api.close();
    rmSync(repo, { recursive: true, force: true });
  }
}

function report(runs: Record<Mode, TuiFigures[]>): void {
  const spread = (xs: number[]) => `best ${fmt(Math.min(...xs))}, worst ${fmt(Math.max(...xs))}`;
  const all = [...runs.open, ...runs.early];
  const enter = runs.open.map((r) => r.enterToRequest);
  const early = runs.early.map((r) => r.enterToRequest);
  const ready = all.map((r) => r.startToReady);
  const open = runs.open.map((r) => r.startToOpen!);
  const side = median(all.map((r) => r.sideRequests));
  const capture = median(all.flatMap((r) => r.captureMs));
  console.log(
    `headless tui         enter_to_request_ms=${fmt(median(enter))} start_to_ready_ms=${fmt(median(ready))} start_to_open_ms=${fmt(median(open))} ` +
      `(enter_to_request ${spread(enter)}; start_to_ready ${spread(ready)}${side > 0 ? `; ${side} side requests` : ''})`,
  );
  console.log(`headless tui early   enter_to_request_ms=${fmt(median(early))} (${spread(early)}; Enter as soon as the prompt shows the task)`);
  console.log(
    `headless tui: medians of ${runs.open.length} runs each; enter_to_request is timed by the fake API, the Enter sent through a ` +
      `tmux control client (no process per key); the screen is read after each output of the pane, not polled: a read takes ` +
      `${capture.toFixed(1)} ms (median), so start_to_ready and start_to_open are late by about that`,
  );
  const verdict = (ms: number) => `${fmt(ms)} (< 200: ${ms < 200 ? 'met' : 'MISSED'})`;
  console.log(`headless targets tui enter_to_request_ms=${verdict(median(enter))} early=${verdict(median(early))}`);
}
