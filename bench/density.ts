// Agent density: N agents x T turns; each turn = user text, a completion streaming ~1.1 KB in 12
// chunks plus an async tool call, the tool result back through the queue, a second completion.
// Agents run in waves; after each wave (all its agents idle) GC is forced and RSS sampled.
// Env: AGENTS (default 2000), TURNS (20), WAVE (500), STORE (sqlite | memory | both).
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

const CHUNK = 'x'.repeat(93) + ' '; // 12 x 94 = 1,128 characters per completion, as the reference
const REPLY = CHUNK.repeat(12);
const TOOL_OUTPUT = 'ok '.repeat(113) + '\n'; // ~340 characters

function brain(r: CompletionRequest) {
  const last = r.messages[r.messages.length - 1]!;
  if (last.content[0]?.type === 'tool_result') return { text: REPLY, chunks: 12 };
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
    tools: [runCommand],
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
  for (let start = 0; start < AGENTS; start += WAVE) {
    const ids = Array.from({ length: Math.min(WAVE, AGENTS - start) }, (_, i) => `agent-${start + i}`);
    const t0 = performance.now();
    for (let turn = 0; turn < TURNS; turn++) {
      await Promise.all(ids.map((id) => system.sendUserText(id, `turn ${turn}: please build`, `u${msgId++}`)));
      await system.whenIdle();
    }
    busyMs += performance.now() - t0;
    if (system.busyThreads !== 0) throw new Error('agents still busy after the wave');
    const rss = gcAndRss();
    const agents = start + ids.length;
    process.stderr.write(
      `  ${storeKind}: ${agents} agents, ${completions} completions, ` +
        `${Math.round(completions / (busyMs / 1000))}/s, rss ${(rss / 2 ** 20).toFixed(1)} MiB\n`,
    );
  }
  const rss = gcAndRss();
  const expected = AGENTS * TURNS * 2;
  if (completions !== expected) throw new Error(`expected ${expected} completions, saw ${completions}`);
  await system.close();
  rmSync(dir, { recursive: true, force: true });
  const perAgentKb = (rss - rss0) / AGENTS / 1024;
  console.log(
    `density store=${storeKind} agents=${AGENTS} turns=${TURNS} ` +
      `completions_per_s=${Math.round(completions / (busyMs / 1000))} kb_per_idle_agent=${perAgentKb.toFixed(2)}`,
  );
}

for (const s of STORES) await run(s);
