// grep over a generated 50,000-file repository, through the runtime as a thread sees it: from the
// model's tool call to the tool result, in a real sandbox (the backend the probe picks, or BACKEND).
// Env: FILES (default 50000), RUNS (timed repetitions, median reported; default 5), BACKEND.
// stdout: `tools grep files=<n> ms=<x>` (a selective query, the usual case); context to stderr
// (a query matching every file, list_files, cold first run, backend).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSystem, MemoryStore, ScriptedProvider, type CompletionRequest, type RuntimeEvent } from '@infinity-code/runtime';
import { openSession, type BackendName, type Sandbox } from '@infinity-code/sandbox';
import { createCodingTools } from '@infinity-code/tools';

const FILES = Number(process.env.FILES ?? 50_000);
const RUNS = Number(process.env.RUNS ?? 5);
const FILES_PER_DIR = 50;

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, env: GIT_ENV, maxBuffer: 1 << 26 });
}

/** ~1 KB of TypeScript per file; one file in 5,000 mentions `rareNeedle`. */
function makeRepo(root: string, files: number): void {
  git(root, 'init', '-q', '-b', 'main');
  writeFileSync(join(root, '.gitignore'), 'node_modules/\ndist/\n');
  for (let i = 0; i < files; i++) {
    const dir = join(root, `pkg${Math.floor(i / (FILES_PER_DIR * 20))}`, `dir${Math.floor(i / FILES_PER_DIR)}`);
    if (i % FILES_PER_DIR === 0) mkdirSync(dir, { recursive: true });
    const body = `export const value${i} = ${i};\n`.repeat(20 + (i % 40));
    const extra = i % 5_000 === 0 ? `export function rareNeedle${i}() { return ${i}; }\n` : '';
    writeFileSync(join(dir, `file${i}.ts`), `// file ${i}\n${body}${extra}`);
  }
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'bench repository');
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x: number): string => x.toFixed(1);

/** A thread that makes one tool call per user message (the JSON of the message). */
function callBrain(r: CompletionRequest) {
  const last = r.messages[r.messages.length - 1];
  const block = last.content[0];
  if (last.role === 'user' && block?.type === 'text') {
    const call = JSON.parse(block.text) as { name: string; input: Record<string, unknown> };
    return { toolCall: call };
  }
  return { text: 'ok' };
}

async function main(): Promise<void> {
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'ic-bench-tools-repo-')));
  const stateDir = mkdtempSync(join(tmpdir(), 'ic-bench-tools-state-'));
  const t0 = performance.now();
  makeRepo(repo, FILES);
  process.stderr.write(`repo with ${FILES} files generated in ${fmt(performance.now() - t0)} ms\n`);
  const backend = process.env.BACKEND as BackendName | undefined;
  const session = await openSession({ repo, stateDir, collectStale: false, ...(backend ? { backend } : {}) });
  try {
    const sb: Sandbox = await session.create('bench');
    const system = new LocalSystem({
      store: new MemoryStore(),
      provider: new ScriptedProvider(callBrain),
      tools: createCodingTools({ sandboxFor: async () => sb, repoRoot: repo }),
      model: 'scripted-model',
    });
    // Time from the model's call (tool-call event) to its result arriving in the thread; one
    // thread per call.
    const started = new Map<string, number>();
    const took = new Map<string, { ms: number; text: string }>();
    system.subscribe((e: RuntimeEvent) => {
      if (e.type === 'tool-call') started.set(e.threadId, performance.now());
      if (e.type === 'tool-result' && started.has(e.threadId)) {
        const text = e.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
        took.set(e.threadId, { ms: performance.now() - started.get(e.threadId)!, text });
      }
    });
    let n = 0;
    const call = async (name: string, input: Record<string, unknown>): Promise<{ ms: number; text: string }> => {
      const threadId = `bench-${n++}`;
      await system.sendUserText(threadId, JSON.stringify({ name, input }));
      await system.whenIdle();
      return took.get(threadId)!;
    };
    const timed = async (name: string, input: Record<string, unknown>) => {
      const cold = await call(name, input);
      const runs: number[] = [];
      let last = cold;
      for (let i = 0; i < RUNS; i++) runs.push((last = await call(name, input)).ms);
      return { cold: cold.ms, median: median(runs), first: last.text.split('\n')[0] };
    };

    const rare = await timed('grep', { pattern: 'rareNeedle\\d+' });
    const common = await timed('grep', { pattern: 'export const' });
    const commonLines = await timed('grep', { pattern: 'export const', output_mode: 'content' });
    const list = await timed('list_files', { pattern: '*.ts' });
    process.stdout.write(`tools grep files=${FILES} ms=${fmt(rare.median)}\n`);
    process.stderr.write(
      `  backend ${session.backend}; selective grep: cold ${fmt(rare.cold)} ms, median ${fmt(rare.median)} ms (${rare.first})\n` +
        `  grep matching every file (the file list): median ${fmt(common.median)} ms (${common.first})\n` +
        `  grep matching every file, content mode (stops at the collection cap): median ${fmt(commonLines.median)} ms (${commonLines.first})\n` +
        `  list_files *.ts: median ${fmt(list.median)} ms (${list.first})\n`,
    );
    await system.close();
  } finally {
    await session.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
