// What a task costs in requests, tokens, dollars and time when a model that behaves like a current
// Claude model drives the built CLI headless (`-p … --yes`) against the fake Messages API with
// prompt caching and latency simulated. The scripted model makes parallel calls whenever the work
// is independent, as current models do. Run `pnpm build` first.
//
// Scenarios (one line each):
// - rename: rename a function across N = 12 files (grep, read all, edit all, check, answer);
// - session: a 30-request session, one call per request, history growing (cache share);
// - longcmd: one 20 s command printing a line every 0.5 s, then an answer (requests it costs);
// - fanout: the root starts 3 children in one reply, each does its share of 12 files in several
//   dependent steps (read, edit, check, edit imports, check, edit comments, check, report), while
//   the root renames the definition; the root greps first. Compared with one thread doing the
//   same shares one after the other (fanout-single).
// Latency: time to first token = BASE + per uncached input token; output at a token rate. The
// defaults are a real model's shape (TASK_SPEED, default 1, divides every delay).
// Env: TASK_TRACE=1 prints each request's time and thread, TASK_STDERR=1 the CLI's stderr,
// INFINITY_CODE_TRACE=<file> the CLI's own timing trace into <file>.<scenario>,
// TASK_NODE_ARGS flags for the CLI's node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadStackOf } from '@infinity-code/runtime';
import { DEFAULT_MODEL, modelInfo } from '@infinity-code/runtime/models';
import { blockTokens, startFakeMessagesApi, type FakeBrain, type FakeReply, type FakeRequestBody, type RecordedRequest } from '@infinity-code/runtime/testing';

const bin = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));
if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`);

const SPEED = Number(process.env.TASK_SPEED ?? 1);
const LATENCY = {
  baseMs: 600 / SPEED,
  msPerUncachedToken: 0.1 / SPEED,
  outputTokensPerSecond: 70 * SPEED,
};
// The CLI's default model, named on the command line so the figures say which model they price.
const MODEL = DEFAULT_MODEL;
// Its list prices from the model table, USD per million tokens (the CLI writes 5-minute cache entries).
const LIST = modelInfo(MODEL)!.price;
const PRICE = { input: LIST.input, output: LIST.output, cacheWrite: LIST.cacheWrite5m, cacheRead: LIST.cacheRead };
const FILES = 12;

type Block = NonNullable<FakeReply['content']>[number];
interface Msg {
  role: string;
  content: Array<{ type: string; text?: string; name?: string; id?: string; content?: unknown; input?: unknown }>;
}

const pad = (n: number) => String(n).padStart(2, '0');
const fileName = (n: number) => `src/mod${pad(n)}.js`;
const fileBody = (n: number, name = 'oldName') =>
  [
    `// Module ${pad(n)}: formats the ${n}th report section.`,
    `import { ${name} } from './util.js';`,
    '',
    `export function section${pad(n)}(rows) {`,
    `  const header = 'Section ${n}';`,
    `  const body = rows.map((r, i) => \`\${i + 1}. \${r.title} (\${r.count})\`).join('\\n');`,
    `  return ${name}(header, body, ${n});`,
    '}',
    '',
    ...Array.from({ length: 20 }, (_, i) => `// note ${i + 1}: section ${n} keeps its rows in the order the caller gave them.`),
  ].join('\n') + '\n';

async function gitRepo(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ic-bench-task-'));
  mkdirSync(join(dir, 'src'));
  for (let n = 1; n <= FILES; n++) writeFileSync(join(dir, fileName(n)), fileBody(n));
  writeFileSync(join(dir, 'src/util.js'), 'export function oldName(header, body, n) {\n  return `${n}. ${header}\\n${body}`;\n}\n');
  writeFileSync(join(dir, 'package.json'), '{ "name": "bench-task", "type": "module" }\n');
  for (const args of [
    ['init', '-q'],
    ['add', '-A'],
    ['-c', 'user.email=bench@example.com', '-c', 'user.name=bench', 'commit', '-qm', 'init'],
  ]) {
    await new Promise<void>((resolve, reject) => execFile('git', args, { cwd: dir }, (e) => (e ? reject(new Error(e.message)) : resolve())));
  }
  return dir;
}

// --- reading a request the way a model reads its context -------------------------------------

function messages(body: FakeRequestBody): Msg[] {
  return (body.messages ?? []) as Msg[];
}

/** The calls this thread made itself (after its spawn point, if a child). */
function ownCalls(body: FakeRequestBody): Array<{ name: string; input: Record<string, unknown> }> {
  const stack = threadStackOf(body) ?? [];
  const all = messages(body);
  let from = 0;
  if (stack.length > 1) {
    // A child's own history starts after the result that named it.
    const me = stack.at(-1)!;
    from = all.findIndex((m) => JSON.stringify(m.content).includes(`Your thread ID is ${me}`)) + 1;
  }
  return all
    .slice(from)
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => m.content)
    .filter((b) => b.type === 'tool_use' && b.name !== 'receive_event__injected')
    .map((b) => ({ name: b.name!, input: b.input as Record<string, unknown> }));
}

function reportsReceived(body: FakeRequestBody): number {
  return messages(body)
    .flatMap((m) => m.content)
    .filter((b) => b.type === 'tool_result' && JSON.stringify(b.content).includes('Report from child thread')).length;
}

const say = (text: string): Block => ({ type: 'text', text });
const call = (name: string, input: Record<string, unknown>): Block => ({ type: 'tool_use', name, input });
const reply = (...content: Block[]): FakeReply => ({ content });
const readAll = (files: number[]) => files.map((n) => call('read_file', { path: fileName(n) }));
const editAll = (files: number[], from: string, to: string) =>
  files.map((n) => call('edit_file', { path: fileName(n), old_str: `return ${from}(header, body, ${n});`, new_str: `return ${to}(header, body, ${n});` }));
const importEdits = (files: number[], from: string, to: string) =>
  files.map((n) => call('edit_file', { path: fileName(n), old_str: `import { ${from} } from './util.js';`, new_str: `import { ${to} } from './util.js';` }));
const commentEdits = (files: number[]) =>
  files.map((n) => call('edit_file', { path: fileName(n), old_str: `// Module ${pad(n)}: formats`, new_str: `// Module ${pad(n)} (uses newName): formats` }));
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

// --- the scripted model, per scenario ----------------------------------------------------------

const renameBrain: FakeBrain = (body) => {
  const done = ownCalls(body).length;
  const files = range(1, FILES);
  if (done === 0) return reply(say('I will find every use of oldName first.'), call('grep', { pattern: 'oldName' }));
  if (done === 1) return reply(say('Reading each file that uses it, all at once.'), ...readAll(files));
  if (done === 1 + FILES) {
    return reply(say('Renaming the calls and the definition together.'), ...editAll(files, 'oldName', 'newName'), call('edit_file', { path: 'src/util.js', old_str: 'export function oldName(', new_str: 'export function newName(' }));
  }
  if (done === 2 + 2 * FILES) {
    return reply(say('Now the imports.'), ...importEdits(files, 'oldName', 'newName'), call('execute_command', { command: 'grep -rn oldName src || echo "no uses left"' }));
  }
  return reply(say(`Renamed oldName to newName in ${FILES} modules and util.js; no uses are left.`));
};

const SESSION_REQUESTS = 30;
const sessionBrain: FakeBrain = (body) => {
  const done = ownCalls(body).length;
  if (done >= SESSION_REQUESTS - 1) return reply(say('I have read through the modules; each formats one section the same way.'));
  const n = (done % FILES) + 1;
  return reply(say(`Looking at ${fileName(n)} next, to compare how section ${n} is built.`), call('read_file', { path: fileName(n) }));
};

const SHARES = [range(1, 4), range(5, 8), range(9, 12)];

/** One share's dependent steps; `step` counts the calls already made for it. */
function shareStep(files: number[], calls: number): Block[] | undefined {
  const steps: Array<() => Block[]> = [
    () => [say(`Reading my ${files.length} files.`), ...readAll(files)],
    () => [say('Renaming the calls.'), ...editAll(files, 'oldName', 'newName')],
    () => [say('Checking what is left.'), call('execute_command', { command: `grep -n oldName ${files.map(fileName).join(' ')} || true` })],
    () => [say('The imports still use the old name; fixing them.'), ...importEdits(files, 'oldName', 'newName')],
    () => [say('Checking again.'), call('execute_command', { command: `grep -c newName ${files.map(fileName).join(' ')}` })],
    () => [say('The header comments should name the new function too.'), ...commentEdits(files)],
    () => [say('Final check of my files.'), call('execute_command', { command: `grep -L newName ${files.map(fileName).join(' ')} || true` })],
  ];
  let made = 0;
  for (const step of steps) {
    const blocks = step();
    const n = blocks.filter((b) => b.type === 'tool_use').length;
    if (calls === made) return blocks;
    made += n;
  }
  return undefined;
}

const fanoutBrain: FakeBrain = (body) => {
  const stack = threadStackOf(body) ?? [];
  const calls = ownCalls(body);
  if (stack.length > 1) {
    const share = shareOf(body);
    const next = shareStep(share, calls.length);
    if (next) return reply(...next);
    return reply(call('close_thread', { thread_id: stack.at(-1)!, report_to_parent: `Renamed oldName to newName in ${share.map(fileName).join(', ')}; checks pass.` }));
  }
  if (calls.length === 0) return reply(say('First, where is oldName used?'), call('grep', { pattern: 'oldName' }));
  if (calls.length === 1) {
    return reply(
      say('Three independent shares: one child each; I rename the definition meanwhile.'),
      utilEdit(),
      ...SHARES.map((files, i) =>
        call('spawn_thread', {
          instructions: `Share ${i}: in ${files.map(fileName).join(', ')}, rename oldName to newName (calls, then imports), checking with grep after each step. Do not touch other files.`,
          child_of: stack,
        }),
      ),
    );
  }
  if (reportsReceived(body) < SHARES.length) return reply(say('Waiting for the children.'));
  return reply(say('All three shares renamed; checks pass.'));
};

const utilEdit = () => call('edit_file', { path: 'src/util.js', old_str: 'export function oldName(', new_str: 'export function newName(' });

/** The share named in the child's own spawn result. */
function shareOf(body: FakeRequestBody): number[] {
  const me = (threadStackOf(body) ?? []).at(-1)!;
  const own = JSON.stringify(messages(body).find((m) => JSON.stringify(m.content).includes(`Your thread ID is ${me}`)) ?? '');
  const i = Number(/Share (\d)/.exec(own)?.[1] ?? 0);
  return SHARES[i];
}

const singleBrain: FakeBrain = (body) => {
  const calls = ownCalls(body).length;
  if (calls === 0) return reply(say('First, where is oldName used?'), call('grep', { pattern: 'oldName' }));
  if (calls === 1) return reply(say('I rename the definition first, then each share in turn.'), utilEdit());
  let made = 2;
  for (const files of SHARES) {
    for (let c = 0; ; ) {
      const step = shareStep(files, c);
      if (!step) break;
      if (calls === made + c) return reply(...step);
      c += step.filter((b) => b.type === 'tool_use').length;
    }
    made += callsPerShare(files);
  }
  return reply(say('All three shares renamed; checks pass.'));
};

function callsPerShare(files: number[]): number {
  let c = 0;
  for (;;) {
    const step = shareStep(files, c);
    if (!step) return c;
    c += step.filter((b) => b.type === 'tool_use').length;
  }
}

/** A 20 s command printing a line every 0.5 s (a test run, a build), then an answer. */
const LONG_COMMAND = 'for i in $(seq 1 40); do echo "step $i of 40"; sleep 0.5; done';
const longCommandBrain: FakeBrain = (body) => {
  if (ownCalls(body).length === 0) return reply(say('Running the slow check.'), call('execute_command', { command: LONG_COMMAND }));
  return reply(say('The check ran all 40 steps.'));
};

// --- running one scenario ----------------------------------------------------------------------

interface Figures {
  requests: number;
  input: number;
  cache_write: number;
  cache_read: number;
  output: number;
  usd: number;
  wall_ms: number;
  exit: number;
  /** Per child, the share of its inherited prefix its first request read from cache. */
  childPrefixRead: number[];
  /** Input tokens of the first request that are not its messages: the system prompt and the tools. */
  fixedTokens: number;
}

/** A child's first request: what it read from cache over what it inherited (all but its own first message). */
function inheritedRead(r: RecordedRequest): number {
  const u = r.usage!;
  const own = ((r.body.messages ?? []).at(-1) as { content: unknown[] }).content.reduce<number>((n, b) => n + blockTokens(b), 0);
  return u.cache_read_input_tokens / (u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens - own);
}

async function run(name: string, task: string, brain: FakeBrain): Promise<Figures> {
  const repo = await gitRepo();
  const home = mkdtempSync(join(tmpdir(), 'ic-bench-home-'));
  const t00 = performance.now();
  const trace: string[] = [];
  const traced: FakeBrain = (body, i) => {
    const stack = threadStackOf(body) ?? [];
    trace.push(`${Math.round(performance.now() - t00)}ms req ${i} thread ${stack.length > 1 ? stack.at(-1)!.slice(0, 8) : 'root'}`);
    return brain(body, i);
  };
  const api = await startFakeMessagesApi({ brain: process.env.TASK_TRACE ? traced : brain, latency: LATENCY });
  try {
    const t0 = performance.now();
    const exit = await new Promise<number>((resolve) => {
      const child = execFile(
        process.execPath,
        [...(process.env.TASK_NODE_ARGS?.split(' ').filter(Boolean) ?? []), bin, '-p', task, '--yes', '--output-format', 'json', '--model', MODEL],
        {
          cwd: repo,
          env: { PATH: process.env.PATH, HOME: home, ...(process.env.INFINITY_CODE_TRACE ? { INFINITY_CODE_TRACE: `${process.env.INFINITY_CODE_TRACE}${process.env.INFINITY_CODE_TRACE === '1' ? '' : `.${name}`}` } : {}), ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1' },
          maxBuffer: 64 * 2 ** 20,
          timeout: 15 * 60_000,
        },
        (err, _stdout, stderr) => {
          const code = (err as { code?: number } | null)?.code ?? 0;
          if (code !== 0 || process.env.TASK_STDERR) process.stderr.write(`${name}: exit ${code}\n${process.env.TASK_STDERR ? stderr : stderr.slice(-2000)}\n`);
          resolve(code);
        },
      );
      child.stdin?.end();
    });
    const wall = performance.now() - t0;
    if (process.env.TASK_TRACE) {
      for (const [i, line] of trace.entries()) {
        const d = api.requests.filter((r) => r.path === '/v1/messages')[i]?.delay;
        process.stderr.write(`  ${line}${d ? ` first byte +${d.firstByteMs} last +${d.lastByteMs}` : ''}\n`);
      }
    }
    const f: Figures = { requests: 0, input: 0, cache_write: 0, cache_read: 0, output: 0, usd: 0, wall_ms: Math.round(wall), exit, childPrefixRead: [], fixedTokens: 0 };
    const first = api.requests.find((r) => r.path === '/v1/messages' && r.usage);
    if (first?.usage) {
      const u = first.usage;
      const messages = (first.body.messages ?? []).reduce<number>((n, m) => n + ((m as { content: unknown[] }).content ?? []).reduce<number>((k, b) => k + blockTokens(b), 0), 0);
      f.fixedTokens = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens - messages;
    }
    const seenChildren = new Set<string>();
    for (const r of api.requests) {
      const stack = threadStackOf(r.body) ?? [];
      if (stack.length !== 2 || seenChildren.has(stack[1]) || !r.usage) continue;
      seenChildren.add(stack[1]);
      f.childPrefixRead.push(inheritedRead(r));
    }
    for (const r of api.requests) {
      if (r.path !== '/v1/messages') continue;
      f.requests++;
      const u = r.usage;
      if (!u) continue;
      f.input += u.input_tokens;
      f.cache_write += u.cache_creation_input_tokens;
      f.cache_read += u.cache_read_input_tokens;
      f.output += u.output_tokens;
    }
    f.usd = (f.input * PRICE.input + f.cache_write * PRICE.cacheWrite + f.cache_read * PRICE.cacheRead + f.output * PRICE.output) / 1e6;
    return f;
  } finally {
    await api.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

function line(name: string, f: Figures, extra = ''): void {
  const total = f.input + f.cache_write + f.cache_read;
  const share = total > 0 ? ((100 * f.cache_read) / total).toFixed(1) : '0';
  console.log(
    `${name.padEnd(14)} requests ${String(f.requests).padStart(3)}  input ${String(f.input).padStart(7)}  ` +
      `cache_write ${String(f.cache_write).padStart(7)}  cache_read ${String(f.cache_read).padStart(8)}  ` +
      `output ${String(f.output).padStart(6)}  usd ${f.usd.toFixed(4)}  wall_ms ${String(f.wall_ms).padStart(6)}  ` +
      `cache_read_share ${share}%  fixed_tokens ${f.fixedTokens}${extra}${f.exit === 0 ? '' : `  EXIT ${f.exit}`}`,
  );
}

const only = process.argv[2];
console.log(`bench:task (model ${MODEL}, latency divided by ${SPEED})`);
if (!only || only === 'rename') {
  const f = await run('rename', `Rename the function oldName to newName everywhere in src/.`, renameBrain);
  line('rename', f, `  target requests <= 5: ${f.requests <= 5 ? 'met' : 'MISSED'}`);
}
if (!only || only === 'session') {
  const f = await run('session', 'Read through the modules in src/ and tell me how sections are built.', sessionBrain);
  const share = f.cache_read / Math.max(1, f.input + f.cache_write + f.cache_read);
  line('session', f, `  target cache_read >= 85%: ${share >= 0.85 ? 'met' : 'MISSED'}`);
}
if (!only || only === 'longcmd') {
  const f = await run('longcmd', 'Run the slow check and tell me how it went.', longCommandBrain);
  line('longcmd', f, `  target requests <= 3: ${f.requests <= 3 ? 'met' : 'MISSED'}`);
}
if (!only || only === 'fanout') {
  const fan = await run('fanout', 'Rename oldName to newName in src/, in three parallel shares.', fanoutBrain);
  const single = await run('fanout-single', 'Rename oldName to newName in src/, in three parallel shares.', singleBrain);
  const least = Math.min(...fan.childPrefixRead);
  line('fanout', fan, `  children's first requests read ${fan.childPrefixRead.map((x) => `${(100 * x).toFixed(1)}%`).join(', ')} of their inherited prefix from cache (target >= 90%: ${least >= 0.9 ? 'met' : 'MISSED'})`);
  line('fanout-single', single, `  fanout/single wall ${(fan.wall_ms / single.wall_ms).toFixed(3)} (target <= 0.50): ${fan.wall_ms <= single.wall_ms / 2 ? 'met' : 'MISSED'}`);
}
