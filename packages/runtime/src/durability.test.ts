// Subscriptions and timers across a SIGKILL of a real process.
import { spawn } from 'node:child_process';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from './sqlite-store.js';
import { tempDir, toolUses } from './test-support/harness.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const script = join(here, 'test-support', 'event-child.ts');
const repoRoot = resolve(here, '../../..');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Child {
  lines: string[];
  /** Resolves when a stdout line matches. */
  waitFor(match: (line: string) => boolean): Promise<string>;
  exit: Promise<{ code: number | null; signal: string | null }>;
  kill(): void;
}

function start(args: string[]): Child {
  const p = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters: Array<{ match: (l: string) => boolean; resolve: (l: string) => void }> = [];
  createInterface({ input: p.stdout }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) {
      if (w.match(line)) w.resolve(line);
      else waiters.push(w);
    }
  });
  return {
    lines,
    waitFor: (match) => {
      const seen = lines.find(match);
      return seen ? Promise.resolve(seen) : new Promise((res) => waiters.push({ match, resolve: res }));
    },
    exit: new Promise((res) => p.on('exit', (code, signal) => res({ code, signal }))),
    kill: () => p.kill('SIGKILL'),
  };
}

async function history(db: string) {
  const store = new SqliteStore({ path: db });
  const t = await store.loadThread('t');
  await store.close();
  return t!;
}

describe('durability across SIGKILL', () => {
  it('a subscription emitting 50 events in bursts loses and duplicates none across a kill and restart', async () => {
    const dir = tempDir('ic-sub-');
    dirs.push(dir);
    const db = join(dir, 'state.db');
    const feed = join(dir, 'feed.txt');
    writeFileSync(feed, '');
    const burst = (from: number) => appendFileSync(feed, Array.from({ length: 5 }, (_, i) => `line ${from + i}`).join('\n') + '\n');

    const first = start([db, 'tail', feed]);
    await first.waitFor((l) => l.startsWith('dispatched'));
    for (let b = 0; b < 4; b++) {
      burst(b * 5);
      await first.waitFor((l) => l === `injected line ${b * 5 + 4}`);
    }
    burst(20); // in flight when the process dies
    first.kill();
    expect((await first.exit).signal).toBe('SIGKILL');

    burst(25); // written while nothing runs
    const second = start([db, 'tail', feed]);
    for (let b = 6; b < 10; b++) {
      burst(b * 5);
      await second.waitFor((l) => l === `injected line ${b * 5 + 4}`);
    }
    appendFileSync(feed, 'END\n');
    expect((await second.exit).code).toBe(0);

    const t = await history(db);
    const injected = toolUses(t.history).filter((u) => u.name === 'receive_event__injected').map((u) => u.id);
    const payloads = t.history
      .flatMap((m) => m.content)
      .flatMap((b) => (b.type === 'tool_result' && injected.includes(b.tool_use_id) ? [b.content.map((c) => (c.type === 'text' ? c.text : '')).join('')] : []));
    expect(payloads).toEqual([...Array.from({ length: 50 }, (_, i) => `line ${i}`), 'END']);
    expect(t.record.subscriptions).toEqual([]);
  });

  it('a 2 s sleep survives a kill in the middle and wakes the thread once, not early', async () => {
    const dir = tempDir('ic-sleep-');
    dirs.push(dir);
    const db = join(dir, 'state.db');
    const first = start([db, 'sleep', '', 'kill-on-dispatch']);
    const dispatched = await first.waitFor((l) => l.startsWith('dispatched'));
    expect((await first.exit).signal).toBe('SIGKILL');
    const sleptAt = Number(dispatched.split(' ')[2]);

    const second = start([db, 'sleep']);
    expect((await second.exit).code).toBe(0);
    const t = await history(db);
    const sleepCall = toolUses(t.history).find((u) => u.name === 'sleep')!;
    const results = t.history.flatMap((m) => m.content).filter((b) => b.type === 'tool_result' && b.tool_use_id === sleepCall.id);
    expect(results).toHaveLength(1);
    const finals = t.history.filter((m) => m.role === 'assistant' && JSON.stringify(m).includes('awake at'));
    expect(finals).toHaveLength(1);
    const awakeAt = Number(/awake at (\d+)/.exec(JSON.stringify(finals[0]))![1]);
    expect(awakeAt - sleptAt).toBeGreaterThanOrEqual(2_000);
  });
});
