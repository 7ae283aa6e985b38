// Issue 7, scenario 2: API faults. Over a 50-turn session (a root and two children working in
// parallel), the fake Messages API answers 429 with retry-after, 500, 529 overloaded, an
// overloaded error event mid-stream, closes the stream mid-message, and streams slowly, at a
// seeded 20% rate. The session completes; every request and the stored history are well formed
// (each tool_use has exactly one tool_result, no assistant turn twice); the user sees retry
// notices, not stack traces.
//
// Faults are drawn per (thread, request number of that thread), so the same seed gives the same
// faults however the threads interleave. E2E_LONG=1 runs the long form (200 turns, ~8 minutes):
// it adds true hangs (the server goes silent mid-reply), which the runtime's watchdog detects
// only after its 60 s first-event (120 s mid-stream) timeout, since the CLI offers no way to
// shorten it yet (INFINITY_CODE_RETRY below is the knob proposed in the issue 7 report).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '@infinity-code/runtime';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeReply, type FakeScript } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, git, gitRepo, type CliRun } from './support/cli.js';
import { historyProblems, threadOf, type Msg } from './support/model.js';
import { killAll, runMark, survivors, untilGone, type ProcInfo } from './support/procs.js';
import { run, STACK_TRACE } from './support/run.js';
import { seeded, testSeed } from './support/seeded.js';

const LONG = process.env.E2E_LONG === '1';
const SEED = testSeed(2020);
const FAULT_RATE = 0.2;
/** The root's request that is always cut after 5 frames, mid-reply (message_start, its thinking block's start and first pieces). */
const FORCED_ROOT_CUT = 2;
/** Own turns of the root (2 spawns + work) and of each child; 30 + 2 x 10 = 50 in the short form. */
const ROOT_TURNS = LONG ? 120 : 30;
const CHILD_TURNS = LONG ? 40 : 10;
const CHILDREN = ['alpha', 'beta'];

type FaultKind = '429' | '500' | '529' | 'error-event' | 'cut' | 'slow' | 'hang';
const KINDS: FaultKind[] = ['429', '500', '529', 'error-event', 'cut', 'slow', ...(LONG ? (['hang'] as const) : [])];
/** Faults that fail the attempt (a retry follows); 'slow' only delays the reply. */
const RETRIED = new Set<FaultKind>(['429', '500', '529', 'error-event', 'cut', 'hang']);

/** FNV-1a: a seed per (thread, request number), independent of how threads interleave. */
function subSeed(...parts: Array<string | number>): number {
  let h = 0x811c9dc5;
  for (const c of parts.join('|')) {
    h ^= c.charCodeAt(0);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function withFault(kind: FaultKind, reply: FakeReply, rng: ReturnType<typeof seeded>): FakeScript {
  switch (kind) {
    case '429':
      return { status: 429, retryAfterSeconds: 1, headers: { 'retry-after-ms': String(20 + rng.int(80)) } };
    case '500':
      return { status: 500 };
    case '529':
      return { status: 529 };
    case 'error-event':
      return { ...reply, errorEvent: { type: 'overloaded_error', message: 'Overloaded', afterChunks: 1 + rng.int(4) } };
    case 'cut':
      // Every reply here has at least 7 frames, so the cut always falls before message_stop.
      return { ...reply, cutAfterChunks: 1 + rng.int(5) };
    case 'slow':
      return { ...reply, stallAfterChunks: 1 + rng.int(5), stallMs: 100 + rng.int(700) };
    case 'hang':
      return { ...reply, stallAfterChunks: rng.int(4), stallMs: 30 * 60_000 };
  }
}

/** The files the work steps leave, for one thread's `dir`. */
function workStep(dir: string, k: number, turn: number): { text: string; tool: { name: string; input: Record<string, unknown> } } {
  const text = `Turn ${turn} of ${dir}: `;
  switch (k % 5) {
    case 0:
      return { text: `${text}a note.`, tool: { name: 'create_file', input: { path: `${dir}/note-${k}.txt`, content: `note ${k} of ${dir}\n` } } };
    case 1:
      return {
        text: `${text}bump the counter.`,
        tool: { name: 'edit_file', input: { path: `${dir}/counter.txt`, old_str: `count ${k - 6 < 0 ? 'start' : k - 5}`, new_str: `count ${k}` } },
      };
    case 2:
      return { text: `${text}read it back.`, tool: { name: 'read_file', input: { path: `${dir}/counter.txt` } } };
    case 3:
      return { text: `${text}log a line.`, tool: { name: 'execute_command', input: { command: `echo ${dir}-${k} >> ${dir}/log.txt && wc -l < ${dir}/log.txt` } } };
    default:
      return { text: `${text}look around.`, tool: { name: 'grep', input: { pattern: `note ${k - 4} of ${dir}` } } };
  }
}

/** What the working tree must hold at the end: the steps' effects, replayed here. */
function expectedFiles(dir: string, steps: number): Record<string, string> {
  const files: Record<string, string> = { [`${dir}/counter.txt`]: 'count start\n' };
  const log: string[] = [];
  for (let k = 0; k < steps; k++) {
    if (k % 5 === 0) files[`${dir}/note-${k}.txt`] = `note ${k} of ${dir}\n`;
    if (k % 5 === 1) files[`${dir}/counter.txt`] = `count ${k}\n`;
    if (k % 5 === 3) log.push(`${dir}-${k}`);
  }
  if (log.length > 0) files[`${dir}/log.txt`] = `${log.join('\n')}\n`;
  return files;
}

interface Ledger {
  requests: number;
  faults: Record<string, number>;
  badRequests: string[];
}

function faultyBrain(ledger: Ledger) {
  const perThread = new Map<string, number>();
  return (body: { system?: unknown; messages?: unknown[] }): FakeScript => {
    const messages = (body.messages ?? []) as Msg[];
    const { id, stack } = threadOf(body);
    const problems = historyProblems(messages);
    if (problems.length > 0) ledger.badRequests.push(`${id}: ${problems.join('; ')}`);
    const isRoot = stack.length === 1;
    const task = isRoot ? 'root' : childTask(messages);
    const reply = decide(isRoot, task, id, stack, messages);
    const n = perThread.get(task) ?? 0;
    perThread.set(task, n + 1);
    ledger.requests++;
    if (task === 'root' && n === FORCED_ROOT_CUT) {
      // Half of the root's text has reached the user when the stream breaks: always, whatever
      // the seed, so what the user is shown of a discarded attempt is always checked.
      ledger.faults.cut = (ledger.faults.cut ?? 0) + 1;
      return { ...reply, cutAfterChunks: 5 };
    }
    const rng = seeded(subSeed(SEED, task, n));
    if (!rng.chance(FAULT_RATE)) return reply;
    const kind = rng.pick(KINDS);
    ledger.faults[kind] = (ledger.faults[kind] ?? 0) + 1;
    return withFault(kind, reply, rng);
  };
}

/** A child's task: its instructions arrive as the result of its own spawn call (the seed). */
function childTask(messages: readonly Msg[]): string {
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type !== 'tool_result') continue;
      const text = b.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      if (!text.startsWith('You are now inside the thread')) continue;
      const c = CHILDREN.find((name) => text.includes(`Work in ${name}/`));
      if (c) return c;
    }
  }
  return '?';
}

/** The model's decisions: deterministic from the history alone (a retry gets the same reply). */
function decide(isRoot: boolean, task: string, id: string, stack: string[], messages: Msg[]): FakeReply {
  const mine = messages.flatMap((m) =>
    // On current models a turn's words before its call come back inside its thinking block.
    m.role === 'assistant' ? m.content.flatMap((b) => {
      const said = b.type === 'text' ? b.text : b.type === 'thinking' ? b.thinking : '';
      return said.startsWith('Turn ') ? [said] : [];
    }) : [],
  );
  // A child inherits its parent's turns: count only its own, written after its spawn.
  const own = isRoot ? mine.length : mine.filter((t) => t.includes(` of ${task}:`)).length;
  if (isRoot) {
    if (own < CHILDREN.length) {
      const c = CHILDREN[own];
      return {
        text: `Turn ${own} of root: delegating ${c}.`,
        toolUse: { name: 'spawn_thread', input: { instructions: `Work in ${c}/ for ${CHILD_TURNS} turns.`, child_of: stack } },
        chunks: 3,
      };
    }
    if (own < ROOT_TURNS) {
      const s = workStep('root', own - CHILDREN.length, own);
      return { text: s.text, toolUse: s.tool, chunks: 3 };
    }
    const reports = (JSON.stringify(messages).match(/Report from child thread/g) ?? []).length;
    if (reports < CHILDREN.length) return { toolUse: { name: 'sleep_until_event_or_input', input: {} } };
    return { text: `All ${ROOT_TURNS + CHILDREN.length * CHILD_TURNS} turns done.`, chunks: 3 };
  }
  if (own < CHILD_TURNS) {
    const s = workStep(task, own, own);
    return { text: s.text, toolUse: s.tool, chunks: 3 };
  }
  return { toolUse: { name: 'close_thread', input: { thread_id: id, report_to_parent: `${task} finished ${CHILD_TURNS} turns.` } } };
}

/**
 * The retry knob proposed for the CLI (issue 7 report): a JSON Partial<RetryPolicy> the CLI would
 * pass to the runtime. Ignored until the CLI reads it; then backoff and hang detection take
 * milliseconds instead of seconds and minutes, and 'hang' can join the short form's faults.
 */
// A hang may follow a hang here (by the seed): each is retried, as every other fault is.
const FAST_RETRY = JSON.stringify({ baseDelayMs: 50, maxDelayMs: 500, initTimeoutMs: 3_000, stallTimeoutMs: 3_000, stallRetries: 8 });

const TOTAL = ROOT_TURNS + CHILDREN.length * CHILD_TURNS;
const FINAL = `All ${TOTAL} turns done.`;

interface Outcome {
  r: CliRun;
  repo: string;
  files: Record<string, string>;
  api: FakeMessagesApi;
  ledger: Ledger;
  retried: number;
  left: ProcInfo[];
}
let o: Outcome;
let api: FakeMessagesApi | undefined;

beforeAll(async () => {
  const files: Record<string, string> = { 'README.md': '# faults\n' };
  for (const dir of ['root', ...CHILDREN]) files[`${dir}/counter.txt`] = 'count start\n';
  const repo = gitRepo(files);
  const ledger: Ledger = { requests: 0, faults: {}, badRequests: [] };
  api = await startFakeMessagesApi({ brain: faultyBrain(ledger) });
  const mark = runMark();
  const started = Date.now();
  // --verbose: the retry notices and the model's notes below are the progress it tells on stderr.
  const r = await run(['-p', 'Do the fault drill.', '--yes', '--verbose'], {
    cwd: repo,
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, INFINITY_CODE_RETRY: FAST_RETRY, ...mark.env },
  });
  const left = await untilGone(() => survivors(mark));
  killAll(left);
  const retried = Object.entries(ledger.faults)
    .filter(([k]) => RETRIED.has(k as FaultKind))
    .reduce((n, [, v]) => n + v, 0);
  console.log(
    `api-faults seed=${SEED} turns=${TOTAL} requests=${ledger.requests} faults=${JSON.stringify(ledger.faults)} ` +
      `seconds=${((Date.now() - started) / 1000).toFixed(1)}`,
  );
  if (process.env.E2E_DUMP) console.log(`STDOUT:\n${r.stdout}\nSTDERR:\n${r.stderr}`);
  o = { r, repo, files, api, ledger, retried, left };
}, LONG ? 1_800_000 : 120_000);

afterAll(async () => {
  await api?.close();
  cleanupTemps();
});

describe(`API faults: a ${TOTAL}-turn session (root + ${CHILDREN.length} children) at a ${FAULT_RATE * 100}% fault rate (seed ${SEED})`, () => {
  it('completes: exit 0, the final answer, nothing left running', () => {
    expect(o.r.code, o.r.stderr.slice(-3000)).toBe(0);
    expect(o.r.stdout.trimEnd().endsWith(FINAL), o.r.stdout.slice(-500)).toBe(true);
    expect(o.retried, 'the seed injects faults').toBeGreaterThan(5);
    expect(o.left).toEqual([]);
  });

  it('the user sees one retry notice per failed attempt and no stack traces', () => {
    expect(o.r.stderr).not.toMatch(STACK_TRACE);
    const notices = o.r.stderr.split('\n').filter((l) => /… .+ Retrying in \d+\.\ds \(attempt \d+\)\.$/.test(l));
    expect(notices).toHaveLength(o.retried);
    expect(o.r.stderr).not.toMatch(/^(\[\S+\] )?Error:|unexpected failure/m);
  });

  it('every request the model got was well formed', () => {
    expect(o.ledger.badRequests).toEqual([]);
  });

  it('the stored history is well formed: each tool_use answered once, each turn stored once and whole', async () => {
    const sessionId = (JSON.parse(readFileSync(join(o.repo, '.infinity', 'sessions.json'), 'utf8')) as Array<{ id: string }>)[0].id;
    const childIds = [...new Set(o.api.requests.map((q) => threadOf(q.body)).filter((t) => t.stack.length === 2).map((t) => t.id))];
    expect(childIds).toHaveLength(CHILDREN.length);
    const store = new SqliteStore({ path: join(o.repo, '.infinity', 'state.db') });
    try {
      for (const threadId of [sessionId, ...childIds]) {
        const thread = (await store.loadThread(threadId))!;
        expect(historyProblems(thread.history, { final: true }), threadId).toEqual([]);
        const own = thread.history.slice(thread.ownOffset);
        // What the model said: its answer's text, and the notes in its thinking before each call.
        const texts = own.flatMap((m) =>
          m.role === 'assistant' ? m.content.flatMap((b) => (b.type === 'text' ? [b.text] : b.type === 'thinking' && b.thinking !== '' ? [b.thinking] : [])) : [],
        );
        const turns = texts.filter((t) => t.startsWith('Turn '));
        expect(new Set(turns).size, `${threadId}: an assistant turn stored twice`).toBe(turns.length);
        // Nothing of a discarded attempt: every stored text is a whole reply.
        for (const t of texts) expect(t, threadId).toMatch(/^(Turn \d+ of \w+: .+\.|All \d+ turns done\.)$/);
        expect(turns, threadId).toHaveLength(threadId === sessionId ? ROOT_TURNS : CHILD_TURNS);
      }
    } finally {
      await store.close();
    }
  });

  it("every step's effect happened exactly once and reached the working tree", () => {
    const want = { ...expectedFiles('root', ROOT_TURNS - CHILDREN.length) };
    for (const c of CHILDREN) Object.assign(want, expectedFiles(c, CHILD_TURNS));
    for (const [path, content] of Object.entries(want)) expect(readFileSync(join(o.repo, path), 'utf8'), path).toBe(content);
    const changed = git(o.repo, 'status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean).length;
    expect(changed).toBe(Object.entries(want).filter(([p, c]) => o.files[p] !== c).length);
  });

  // stdout is the answer channel: on current models the words between tool calls are the model's
  // thinking (its notes), which go to stderr as `✻` lines once the reply is whole; only the answer
  // reaches stdout. Neither shows anything of an attempt that failed and was retried.
  it("stdout holds exactly the root's answer; stderr each of its notes, whole and once", () => {
    expect(o.r.stdout.split('\n').filter((l) => l !== '')).toEqual([FINAL]);
    const notes = o.r.stderr.split('\n').filter((l) => l.startsWith('✻ '));
    const expected = Array.from({ length: ROOT_TURNS }, (_, k) => new RegExp(`^✻ Turn ${k} of root: [a-z ]+\\.$`));
    expect(notes.length, o.r.stderr.slice(-3000)).toBe(expected.length);
    notes.forEach((l, i) => expect(l).toMatch(expected[i]));
  });
});
