// Issue 7, scenario 5: load. One session runs N child threads at once (N = 200 by default;
// E2E_LOAD_THREADS overrides it): the root spawns them one after the other, each child holds its
// first model request until all N have sent theirs (so all N are live and streaming at once), then
// edits its own file, runs a command and reports. The session completes, every edit lands, and the
// CLI process's peak RSS stays under 500 MB. Prints the figures.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeScript } from '@infinity-code/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { lastResult, threadOf, toolCalls, type Msg } from './support/model.js';
import { haveGnuTime, killAll, maxRssMb, runMark, survivors, TIME_BIN, untilGone, vmHwmMb } from './support/procs.js';
import { events, start, STACK_TRACE } from './support/run.js';

const N = Number(process.env.E2E_LOAD_THREADS ?? 200);
const RSS_LIMIT_MB = 500;

const apis: FakeMessagesApi[] = [];
afterAll(async () => {
  await Promise.all(apis.map((a) => a.close()));
  cleanupTemps();
});

/** Which child (0..N-1) a thread is: its instructions arrive as its spawn call's result. */
function childIndex(messages: readonly Msg[]): number {
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type !== 'tool_result') continue;
      const text = b.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      const hit = /^You are now inside the thread[\s\S]*Work item (\d+)\./.exec(text);
      if (hit) return Number(hit[1]);
    }
  }
  return -1;
}

function loadBrain(stats: { peakWaiting: number; refused?: string }) {
  let release!: () => void;
  const allLive = new Promise<void>((r) => (release = r));
  const arrived = new Set<number>();
  return async (body: { system?: unknown; messages?: unknown[] }): Promise<FakeScript> => {
    const messages = (body.messages ?? []) as Msg[];
    const { id, stack } = threadOf(body);
    if (stack.length === 1) {
      const spawns = toolCalls(messages).filter((c) => c.name === 'spawn_thread');
      const last = lastResult(messages);
      if (last?.name === 'spawn_thread' && last.isError) {
        // A refused spawn would leave the others waiting for children that never come.
        stats.refused = last.text;
        release();
        return { text: `Spawn ${spawns.length} was refused: ${last.text}` };
      }
      if (spawns.length < N) {
        return { toolUse: { name: 'spawn_thread', input: { instructions: `Work item ${spawns.length}.`, child_of: stack } } };
      }
      const reports = (JSON.stringify(messages).match(/Report from child thread/g) ?? []).length;
      if (reports < N) return { toolUse: { name: 'sleep_until_event_or_input', input: {} } };
      return { text: `All ${N} children reported.` };
    }
    const i = childIndex(messages);
    const seedAt = messages.findIndex((m) => m.content.some((b) => b.type === 'tool_result' && JSON.stringify(b).includes('You are now inside the thread')));
    const own = toolCalls(messages.slice(seedAt + 1));
    if (own.length === 0) {
      // Held until all N children are live. (Should the hold outlast the runtime's first-event
      // timeout, the retried request is held again: that is the runtime doing its job.)
      arrived.add(i);
      stats.peakWaiting = Math.max(stats.peakWaiting, arrived.size);
      if (arrived.size === N) release();
      await allLive;
      return { toolUse: { name: 'edit_file', input: { path: `load/c${i}.txt`, old_str: 'value 0', new_str: `value ${i + 1}` } } };
    }
    if (own.length === 1) return { toolUse: { name: 'execute_command', input: { command: `cat load/c${i}.txt` } } };
    const out = lastResult(messages)?.text ?? '';
    return { toolUse: { name: 'close_thread', input: { thread_id: id, report_to_parent: `item ${i}: ${out.split('\n')[0]}` } } };
  };
}

describe('load', () => {
  it(`${N} child threads at once: the session completes with every edit, peak RSS < ${RSS_LIMIT_MB} MB`, { timeout: 600_000 }, async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < N; i++) files[`load/c${i}.txt`] = 'value 0\n';
    const repo = gitRepo(files);
    const stats: { peakWaiting: number; refused?: string } = { peakWaiting: 0 };
    const api = await startFakeMessagesApi({ brain: loadBrain(stats) });
    apis.push(api);
    const mark = runMark();
    const timeReport = join(tempDir(), 'time.txt');
    writeFileSync(timeReport, '');
    const started = Date.now();
    const cli = start(['-p', `Fan out ${N} work items.`, '--yes', '--output-format', 'stream-json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, ...mark.env },
      ...(haveGnuTime() ? { wrapper: [TIME_BIN, '-v', '-o', timeReport] } : {}),
    });
    // Without GNU time: sample the CLI's own high-water mark (VmHWM) while it runs.
    let sampled = 0;
    const sampler = haveGnuTime() ? undefined : setInterval(() => (sampled = Math.max(sampled, vmHwmMb(cli.pid) ?? 0)), 100);
    const r = await cli.done;
    clearInterval(sampler);
    const seconds = (Date.now() - started) / 1000;
    const left = await untilGone(() => survivors(mark));
    killAll(left);
    const peak = haveGnuTime() ? maxRssMb(readFileSync(timeReport, 'utf8')) : sampled;
    const lines = r.stdout.trim() === '' ? [] : events(r.stdout);
    const result = lines.at(-1);
    console.log(
      `load threads=${N} peak_rss_mb=${peak.toFixed(1)} seconds=${seconds.toFixed(1)} ` +
        `concurrent_children=${stats.peakWaiting} model_requests=${api.requests.length} backend=${String(lines[0]?.sandbox)}`,
    );

    expect(stats.refused, 'a spawn was refused').toBeUndefined();
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.code, r.stderr.slice(-2000) || JSON.stringify(result)).toBe(0);
    expect(stats.peakWaiting, 'children live at once').toBe(N);
    expect(result).toMatchObject({ type: 'result', status: 'success', result: `All ${N} children reported.`, diff_applied: true });
    expect(lines.filter((l) => l.type === 'thread' && l.subtype === 'spawned' && l.kind === 'child')).toHaveLength(N);
    expect(lines.filter((l) => l.type === 'event' && l.subtype === 'report')).toHaveLength(N);
    for (let i = 0; i < N; i++) expect(readFileSync(join(repo, `load/c${i}.txt`), 'utf8'), `load/c${i}.txt`).toBe(`value ${i + 1}\n`);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(RSS_LIMIT_MB);
    expect(left).toEqual([]);
  });
});
