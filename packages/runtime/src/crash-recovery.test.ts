import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { HistoryMessage } from './messages.js';
import { SqliteStore } from './sqlite-store.js';
import { toRequestMessages } from './history.js';
import { validateMessagesRequest } from './testing/index.js';
import { tempDir } from './test-support/harness.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const child = join(here, 'test-support', 'crash-child.ts');
const repoRoot = resolve(here, '../../..');
const STEPS = 4;

function runChild(db: string, log: string, kill: string, perReply = 1): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((res) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', child, db, log, kill, String(perReply)],
      { cwd: repoRoot, timeout: 60_000 },
      (err, _stdout, stderr) => {
        const e = err as (Error & { code?: number; signal?: string }) | null;
        res({ code: e ? (e.code ?? null) : 0, signal: e?.signal ?? null, stderr });
      },
    );
  });
}

async function readHistory(db: string): Promise<HistoryMessage[]> {
  const store = new SqliteStore({ path: db });
  const t = await store.loadThread('root');
  await store.close();
  return t?.history ?? [];
}

function checkWellFormed(history: HistoryMessage[]): string[] {
  const calls: string[] = [];
  for (let i = 0; i < history.length; i++) {
    for (const block of history[i].content) {
      if (block.type !== 'tool_use') continue;
      calls.push(block.id);
      const answers = history
        .flatMap((m) => m.content)
        .filter((c) => c.type === 'tool_result' && c.tool_use_id === block.id);
      expect(answers, `call ${block.id} has exactly one result`).toHaveLength(1);
    }
  }
  return calls;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function scenario(kill: string, perReply = 1) {
  const dir = tempDir('ic-crash-');
  dirs.push(dir);
  const db = join(dir, 'state.db');
  const log = join(dir, 'executions.log');
  const crashed = await runChild(db, log, kill, perReply);
  return { db, log, crashed };
}

describe('crash safety with a real process and a SQLite file', () => {
  it('an uninterrupted run is the baseline', async () => {
    const { db, log, crashed } = await scenario('none');
    expect(crashed.code, crashed.stderr).toBe(0);
    const history = await readHistory(db);
    const calls = checkWellFormed(history);
    expect(calls).toHaveLength(STEPS);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(STEPS);
    expect(history.at(-1)!.content).toEqual([{ type: 'text', text: 'All steps done.' }]);
  });

  // Kill points inside slices: mid-stream of the 1st and 3rd completions, right after the commit
  // of a turn holding a call (before its dispatch), and right after a dispatch.
  it.each(['text-delta:5', 'text-delta:30', 'turn-committed:1', 'turn-committed:3', 'tool-dispatched:1', 'tool-dispatched:2'])(
    'SIGKILL at %s: a new process finishes with no lost or duplicated turn, each call run once',
    async (kill) => {
      const { db, log, crashed } = await scenario(kill);
      expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
      const resumed = await runChild(db, log, 'none');
      expect(resumed.code, resumed.stderr).toBe(0);

      const history = await readHistory(db);
      const calls = checkWellFormed(history);
      // One assistant turn per step plus the final answer: nothing lost, nothing duplicated.
      expect(history.filter((m) => m.role === 'assistant')).toHaveLength(STEPS + 1);
      expect(history.filter((m) => m.role === 'user' && m.content[0].type === 'text')).toHaveLength(1);
      expect(history.at(-1)!.content).toEqual([{ type: 'text', text: 'All steps done.' }]);
      // Every committed call was executed exactly once; nothing else was executed.
      const executed = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((l) => l.split(' ')[0]) : [];
      expect(new Set(executed).size).toBe(executed.length);
      expect([...executed].sort()).toEqual([...calls].sort());
    },
  );

  // Replies of three calls each: kill with the batch committed and none, one or two of its calls
  // dispatched. The restart dispatches the rest once; the ones that died with the process are
  // answered "interrupted"; every batch's results reach the model together, in call order.
  it.each(['turn-committed:1', 'tool-dispatched:1', 'tool-dispatched:2', 'tool-dispatched:5'])(
    'SIGKILL at %s with three calls per reply: each call runs at most once and the history stays valid',
    async (kill) => {
      const { db, log, crashed } = await scenario(kill, 3);
      expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
      const resumed = await runChild(db, log, 'none', 3);
      expect(resumed.code, resumed.stderr).toBe(0);

      const history = await readHistory(db);
      const calls = checkWellFormed(history);
      expect(calls).toHaveLength(STEPS * 3);
      expect(validateMessagesRequest({ model: 'm', max_tokens: 1, messages: toRequestMessages(history) })).toBeUndefined();
      expect(history.at(-1)!.content).toEqual([{ type: 'text', text: 'All steps done.' }]);
      const executed = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((l) => l.split(' ')[0]) : [];
      expect(new Set(executed).size).toBe(executed.length);
      expect([...executed].sort()).toEqual([...calls].sort());
    },
  );
});
