// A headless run's result carries the usage the API reported, summed over every thread, and its
// cost at the model's price (the model table's, or the user's config's); null when it has none.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeReply } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, runCli, tempDir } from './support/cli.js';
import { allText, lastResult, threadOf, type Msg } from './support/model.js';
import { TmuxScreen } from './support/tmux.js';

/** The four token counts of a completion's usage. */
type Tokens = { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };

const ROOT_FIRST: Tokens = { input_tokens: 1200, output_tokens: 80, cache_creation_input_tokens: 5000, cache_read_input_tokens: 0 };
const ROOT_LATER = { input_tokens: 40, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 5000 };
// A prompt over 100K tokens: Haiku 5.5's long-prompt prices apply to this completion alone.
const CHILD = { input_tokens: 300, output_tokens: 50, cache_creation_input_tokens: 200, cache_read_input_tokens: 120_000 };
// Under 75% of the context window, so no compaction follows (it would be a completion too).
const PLAIN = { input_tokens: 100_000, output_tokens: 50_000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** The root hands the work to a child and answers once it reports; a model named team-llm just says hi. */
function reply(body: { model?: string; system?: unknown; messages?: unknown[] }): FakeReply {
  if (body.model === 'team-llm') return { text: 'Hi.', usage: PLAIN };
  const me = threadOf(body);
  const messages = (body.messages ?? []) as Msg[];
  if (me.stack.length > 1) {
    return { toolUse: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'Nothing needed changing.' } }, usage: CHILD };
  }
  if (allText(messages).includes('Report from')) return { text: 'Done.', usage: ROOT_LATER };
  if (lastResult(messages)?.name === 'spawn_thread') return { text: 'Waiting for the child.', usage: ROOT_LATER };
  return { toolUse: { name: 'spawn_thread', input: { instructions: 'Check the file.', child_of: me.stack } }, usage: ROOT_FIRST };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: (body) => reply(body) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });

interface Result {
  type: string;
  status: string;
  model: string;
  num_turns: number;
  usage: Tokens;
  total_cost_usd: number | null;
}

async function runJson(model: string, home?: string, repo = gitRepo({ 'a.txt': 'a\n' })): Promise<Result> {
  const r = await runCli(['-p', 'Check a.txt.', '--model', model, '--output-format', 'json'], {
    cwd: repo,
    env: env(),
    ...(home ? { home } : {}),
  });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Result;
}

const sum = (...us: Tokens[]): Tokens => ({
  input_tokens: us.reduce((n, u) => n + u.input_tokens, 0),
  output_tokens: us.reduce((n, u) => n + u.output_tokens, 0),
  cache_creation_input_tokens: us.reduce((n, u) => n + u.cache_creation_input_tokens, 0),
  cache_read_input_tokens: us.reduce((n, u) => n + u.cache_read_input_tokens, 0),
});

describe('usage and cost in the headless result', () => {
  it("sums what the API reported for the root and its child, and prices each completion at the table's price for its prompt", async () => {
    const before = api.requests.length;
    const result = await runJson('claude-haiku-5-5');
    const requests = api.requests.slice(before);
    expect(requests.map((r) => r.body.model)).toEqual(Array(4).fill('claude-haiku-5-5'));
    expect(result).toMatchObject({ type: 'result', status: 'success', num_turns: 4, model: 'claude-haiku-5-5' });
    const usage = sum(ROOT_FIRST, ROOT_LATER, ROOT_LATER, CHILD);
    expect(result.usage).toEqual(usage);
    // Haiku 5.5 per million tokens. The root's prompts (up to 100K tokens): $0.10 in, $0.50 out,
    // $0.125 5-minute cache write, $0.01 cache read. The child's (120,500 tokens): $0.50, $2.50,
    // $0.625, $0.05.
    const short = (u: Tokens) =>
      u.input_tokens * 0.1 + u.output_tokens * 0.5 + u.cache_creation_input_tokens * 0.125 + u.cache_read_input_tokens * 0.01;
    const long = (u: Tokens) =>
      u.input_tokens * 0.5 + u.output_tokens * 2.5 + u.cache_creation_input_tokens * 0.625 + u.cache_read_input_tokens * 0.05;
    const expected = (short(ROOT_FIRST) + 2 * short(ROOT_LATER) + long(CHILD)) / 1e6;
    expect(expected).toBeCloseTo(0.007323, 9);
    expect(result.total_cost_usd).toBeCloseTo(expected, 6);
    expect(result).not.toHaveProperty('cost_usd');
  });

  it("a model without a price: tokens only, cost null; the user's config can price it", async () => {
    const unpriced = await runJson('team-llm');
    expect(unpriced.usage).toEqual(PLAIN);
    expect(unpriced.total_cost_usd).toBeNull();

    const home = tempDir();
    mkdirSync(join(home, '.config', 'infinity-code'), { recursive: true });
    writeFileSync(join(home, '.config', 'infinity-code', 'config.json'), JSON.stringify({ prices: { 'team-llm': { input: 2, output: 6 } } }));
    const priced = await runJson('team-llm', home);
    expect(priced.usage).toEqual(PLAIN);
    // 0.1M in at $2, 0.05M out at $6.
    expect(priced.total_cost_usd).toBe(0.5);
  });
});

describe('usage in the TUI', () => {
  it('/cost in a continued session lists the earlier headless run per thread, priced', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const home = tempDir();
    await runJson('claude-haiku-5-5', home, repo);
    const tuiEnv = { ...env(), HOME: home, TERM: 'xterm-256color' };
    const screen = TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN, '-c', '--model', 'haiku'], { cwd: repo, env: tuiEnv });
    try {
      // The session is open once the status line names the sandbox.
      await screen.waitFor(/sandbox (on|off)/);
      screen.type('/cost');
      screen.press('Enter');
      const out = await screen.waitFor(/total\s+4\s/);
      // Haiku 5.5 from the stored sums, the tier chosen by each row's average prompt: the root's
      // 1,280 in, 5,000 cache write, 10,000 cache read and 140 out at the short-prompt prices make
      // $0.000923; the child's long prompt, $0.0064.
      expect(out).toMatch(/\S{8}\s+root\s+claude-haiku-5-5\s+3\s+1,280\s+5,000\s+10,000\s+140\s+\$0\.0009/);
      expect(out).toMatch(/\S{8}\s+child\s+claude-haiku-5-5\s+1\s+300\s+200\s+120,000\s+50\s+\$0\.0064/);
      expect(out).toMatch(/total\s+4\s+1,580\s+5,200\s+130,000\s+190\s+\$0\.0073/);
      // The status line names the model the alias stands for.
      expect(out).toMatch(/claude-haiku-5-5 · /);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
