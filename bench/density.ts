// Agent density: N agents x T turns; each turn = user text, a completion streaming ~1.1 KB in 12
// chunks plus an async tool call, the tool result back through the queue, a second completion.
// Agents run in waves; after each wave (all its agents idle) GC is forced and RSS sampled.
// Env: AGENTS (default 2000), TURNS (20), WAVE (500), STORE (sqlite | memory | both),
// VARIANT (plain | waiting: after its turns every agent also subscribes to a watch that stays
// silent and sleeps until the same time tomorrow, and is measured holding both).
// Two figures per idle agent: the total (RSS growth / agents, which spreads the bounded caches
// over N, so it shrinks as N grows) and the marginal cost: the slope of RSS over agents across the
// waves after the first 1,000 agents, once the caches are full (MARGINAL_FROM changes the start).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LocalSystem,
  MemoryStore,
  ScriptedProvider,
  SqliteStore,
  type AsyncTool,
  type CompletionRequest,
  type RuntimeStore,
} from '@infinity-code/runtime';

const AGENTS = Number(process.env.AGENTS ?? 2000);
const TURNS = Number(process.env.TURNS ?? 20);
const WAVE = Number(process.env.WAVE ?? 500);
const STORES = (process.env.STORE ?? 'both') === 'both' ? ['sqlite', 'memory'] : [process.env.STORE!];
const CACHE = process.env.CACHE === undefined ? undefined : Number(process.env.CACHE);
const WAITING = process.env.VARIANT === 'waiting';
const MARGINAL_FROM = Number(process.env.MARGINAL_FROM ?? 1000);
const TOMORROW = new Date(Date.now() + 86_400_000);
const SLEEP_UNTIL = {
  date: TOMORROW.toISOString().slice(0, 10),
  time: TOMORROW.toISOString().slice(11, 19),
  timezone: 'UTC',
};

const CHUNK = 'x'.repeat(93) + ' '; // 12 x 94 = 1,128 characters per completion, as hydro-project/infinity's benchmark
const REPLY = CHUNK.repeat(12);
const TOOL_OUTPUT = 'ok '.repeat(113) + '\n'; // ~340 characters

function brain(r: CompletionRequest) {
  const last = r.messages[r.messages.length - 1];
  const first = last.content[0];
  if (first?.type === 'text' && first.text === 'settle') return { text: 'Watching.', toolCall: { name: 'watch', input: {} } };
  if (first?.type === 'tool_result' && first.content[0]?.type === 'text' && first.content[0].text === 'watching') {
    return { text: 'Sleeping.', toolCall: { name: 'sleep_until', input: SLEEP_UNTIL } };
  }
  if (first?.type === 'tool_result') return { text: REPLY, chunks: 12 };
  return { text: REPLY, chunks: 12, toolCall: { name: 'run_command', input: { command: 'make' } } };
}

const runCommand: AsyncTool = {
  kind: 'async',
  name: 'run_command',
  description: 'Run a command.',
  input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  dispatch(_input, ctx) {
    setImmediate(() => void ctx.respond({ content: TOOL_OUTPUT }));
  },
};

/** A subscription that never emits: the agent just holds it. */
const watch: AsyncTool = {
  kind: 'async',
  name: 'watch',
  description: 'Watch for changes.',
  input_schema: { type: 'object', properties: {} },
  dispatch(_input, ctx) {
    setImmediate(() => void ctx.respond({ content: 'watching', subscription: true }));
  },
};

function gcAndRss(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage().rss;
}

async function run(storeKind: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ic-density-'));
  const store: RuntimeStore =
    storeKind === 'sqlite' ? new SqliteStore({ path: join(dir, 'state.db') }) : new MemoryStore();
  const system = new LocalSystem({
    store,
    provider: new ScriptedProvider(brain),
    tools: [runCommand, watch],
    model: 'scripted',
    ...(CACHE === undefined ? {} : { cacheMessages: CACHE }),
  });
  let completions = 0;
  system.subscribe((e) => {
    if (e.type === 'slice-finished') completions += e.completions;
  });
  await system.start();
  const rss0 = gcAndRss();
  let busyMs = 0;
  let msgId = 0;
  const samples: Array<{ agents: number; rss: number }> = [];
  for (let start = 0; start < AGENTS; start += WAVE) {
    const ids = Array.from({ length: Math.min(WAVE, AGENTS - start) }, (_, i) => `agent-${start + i}`);
    const t0 = performance.now();
    for (let turn = 0; turn < TURNS; turn++) {
      await Promise.all(ids.map((id) => system.sendUserText(id, `turn ${turn}: please build`, `u${msgId++}`)));
      await system.whenIdle();
    }
    if (WAITING) {
      await Promise.all(ids.map((id) => system.sendUserText(id, 'settle', `u${msgId++}`)));
      await system.whenIdle();
    }
    busyMs += performance.now() - t0;
    if (system.busyThreads !== 0) throw new Error('agents still busy after the wave');
    const rss = gcAndRss();
    const agents = start + ids.length;
    samples.push({ agents, rss });
    process.stderr.write(
      `  ${storeKind}: ${agents} agents, ${completions} completions, ` +
        `${Math.round(completions / (busyMs / 1000))}/s, rss ${(rss / 2 ** 20).toFixed(1)} MiB\n`,
    );
  }
  const rss = gcAndRss();
  if (WAITING) {
    const sample = await store.loadThread('agent-0');
    if (sample?.record.batch[0]?.name !== 'sleep_until' || sample.record.subscriptions.length !== 1) {
      throw new Error('agents are not holding a subscription and a pending sleep_until');
    }
  }
  const expected = AGENTS * (TURNS * 2 + (WAITING ? 2 : 0));
  if (completions !== expected) throw new Error(`expected ${expected} completions, saw ${completions}`);
  await system.close();
  rmSync(dir, { recursive: true, force: true });
  const perAgentKb = (rss - rss0) / AGENTS / 1024;
  const marginal = slopeKb(samples.filter((x) => x.agents > MARGINAL_FROM));
  console.log(
    `density store=${storeKind} agents=${AGENTS} turns=${TURNS} ` +
      `completions_per_s=${Math.round(completions / (busyMs / 1000))} kb_per_idle_agent=${perAgentKb.toFixed(2)} ` +
      `marginal_kb_per_idle_agent=${marginal === undefined ? `n/a (needs 2 waves past ${MARGINAL_FROM} agents)` : marginal.toFixed(2)}` +
      (WAITING ? ' variant=waiting' : ''),
  );
}

/** Least-squares slope of RSS over agents, in KB per agent (undefined with fewer than 2 samples). */
function slopeKb(points: ReadonlyArray<{ agents: number; rss: number }>): number | undefined {
  if (points.length < 2) return undefined;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.agents, 0) / n;
  const my = points.reduce((a, p) => a + p.rss, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.agents - mx) * (p.rss - my);
    den += (p.agents - mx) ** 2;
  }
  return num / den / 1024;
}

for (const s of STORES) await run(s);
