// Scripts written for Claude Code's headless mode work unchanged with Infinity Code: the
// invocations Claude Code's documentation shows for scripts and CI, word for word, run through
// `claude` and `infinity-code` commands that start the built CLI, against the local fake
// Messages API, their output read with the same jq filters those scripts use.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { allText, toolResults, type Msg } from './support/model.js';
import { invalidStreamJsonLines } from './support/stream-json-schema.js';

const GREET = 'function greet(name) {\n  return `Hello, ${name}!`;\n}\n';

/** A model that answers each documented task the way a test can tell apart. */
const brain: FakeBrain = (body) => {
  const messages = (body.messages ?? []) as Msg[];
  const said = allText(messages);
  const read = toolResults(messages).size > 0;
  if (said.includes('Loop until stopped')) return { toolUse: { name: 'read_file', input: { path: 'greet.js' } } };
  if (said.includes('What does greet.js do?') || said.includes('Stage my changes')) {
    return read ? { text: 'It greets by name.' } : { text: 'Reading it.', toolUse: { name: 'read_file', input: { path: 'greet.js' } } };
  }
  if (said.includes('Summarize this data')) return { text: said.includes('temperature: 21C') ? 'The data says 21C.' : 'No data came.' };
  if (said.includes('Review this PR')) {
    return { text: JSON.stringify(body.system ?? '').includes('You are a security engineer') ? 'Security review: safe.' : 'A plain review.' };
  }
  if (said.includes('Continue that review')) return { text: said.includes('Start a review') ? 'Continuing the review.' : 'Which review?' };
  if (said.includes('Start a review')) return { text: 'Review started.' };
  return { text: 'A small greeting library.' };
};

let api: FakeMessagesApi;
let bin: string;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
  // `claude` and `infinity-code` on PATH, as an installed CLI is: the scripts name them as they are.
  bin = tempDir();
  for (const name of ['claude', 'infinity-code']) {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  }
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

interface Shell {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script in bash in `cwd`, with pipefail so that the CLI's exit code shows through jq's,
 * and stdin from /dev/null, as in CI.
 */
function bash(script: string, cwd: string, env: Record<string, string> = {}): Promise<Shell> {
  const child = spawn('bash', ['-c', `set -o pipefail\n${script}`], {
    cwd,
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: tempDir(), NO_COLOR: '1', ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const repo = () => gitRepo({ 'greet.js': GREET, 'data.txt': 'temperature: 21C\n', 'pr.diff': '--- a/greet.js\n+++ b/greet.js\n' });

describe("Claude Code's documented headless scripts, unchanged", () => {
  it('--output-format json | jq -r .result: the final answer', async () => {
    const r = await bash(`claude -p "Summarize this project" --output-format json | jq -r '.result'`, repo());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('A small greeting library.\n');
  });

  it('json: .session_id resumes the session with --resume, before or after the prompt', async () => {
    const cwd = repo();
    const script = [
      `session_id=$(claude -p "Start a review" --output-format json | jq -r '.session_id')`,
      `claude -p "Continue that review" --resume "$session_id" --output-format json | jq -r '.result'`,
      `claude -p --resume "$session_id" "Continue that review" --output-format json | jq -r '.result'`,
    ].join('\n');
    const r = await bash(script, cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Continuing the review.\nContinuing the review.\n');
  });

  it('json: .total_cost_usd, .is_error, .num_turns, .duration_api_ms, .stop_reason, .modelUsage', async () => {
    const r = await bash(
      `claude -p "What does greet.js do?" --output-format json > out.json\n` +
        `jq '.total_cost_usd' out.json\n` +
        `jq -r '.is_error, .subtype, .num_turns, .stop_reason, (.duration_api_ms | type), (.modelUsage | keys[])' out.json\n` +
        `jq -r '.modelUsage[] | [.inputTokens + .cacheCreationInputTokens + .cacheReadInputTokens > 0, .outputTokens > 0, .costUSD > 0, .contextWindow, .maxOutputTokens] | @tsv' out.json\n` +
        `jq -c '.permission_denials, .errors' out.json\n` +
        `jq -r '.uuid' out.json`,
      repo(),
    );
    expect(r.code, r.stderr).toBe(0);
    const [cost, isError, subtype, turns, stop, apiType, model, usage, denials, errors, uuid] = r.stdout.trimEnd().split('\n');
    expect(Number(cost)).toBeGreaterThan(0);
    expect([isError, subtype, turns, stop, apiType, model]).toEqual(['false', 'success', '2', 'end_turn', 'number', 'claude-sonnet-5-5']);
    expect(usage).toBe('true\ttrue\ttrue\t1000000\t128000');
    expect([denials, errors]).toEqual(['[]', '[]']);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('stream-json --verbose: the assistant text, the tool results as strings, the result, each line a uuid', async () => {
    const cwd = repo();
    const r = await bash(
      `claude -p "What does greet.js do?" --output-format stream-json --verbose > run.jsonl\n` +
        `jq -c 'select(.type=="assistant") | .message.content[] | select(.type=="text") | .text' run.jsonl\n` +
        `echo ---\n` +
        `jq -r 'select(.type=="user") | .message.content[] | select(.type=="tool_result") | .content' run.jsonl\n` +
        `jq -r 'select(.type=="user") | .message.content[] | select(.type=="tool_result") | .content | type' run.jsonl\n` +
        `echo ---\n` +
        `jq -r 'select(.type=="result") | .result' run.jsonl\n` +
        `echo ---\n` +
        `jq -r 'select(.type=="system" and .subtype=="init") | .session_id, .model, .permissionMode, .apiKeySource, (.tools | index("read_file") != null)' run.jsonl`,
      cwd,
    );
    expect(r.code, r.stderr).toBe(0);
    const [texts, results, result, init] = r.stdout.split('---\n');
    expect(texts).toBe('"It greets by name."\n');
    // The file as read_file numbers its lines, as plain text: a string, not content blocks.
    expect(results).toMatch(/^<file name="greet\.js" lines="3">\n\s+1\tfunction greet\(name\) \{\n\s+2\t {2}return `Hello, \$\{name\}!`;\n\s+3\t\}\n<\/file>\nstring\n$/);
    expect(result).toBe('It greets by name.\n');
    const [sessionId, ...rest] = init.trimEnd().split('\n');
    expect(rest).toEqual(['claude-sonnet-5-5', 'default', 'ANTHROPIC_API_KEY', 'true']);
    const stdout = readFileSync(join(cwd, 'run.jsonl'), 'utf8');
    expect(invalidStreamJsonLines(stdout)).toEqual([]);
    const lines = stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; session_id: string; uuid: string; timestamp: string });
    expect(lines[0].type).toBe('system');
    expect(lines.at(-1)!.type).toBe('result');
    expect(new Set(lines.map((l) => l.session_id))).toEqual(new Set([sessionId]));
    expect(new Set(lines.map((l) => l.uuid)).size).toBe(lines.length);
    expect(lines.every((l) => !Number.isNaN(Date.parse(l.timestamp)))).toBe(true);
  });

  it('--include-partial-messages: the text as it streams, read from stream_event lines', async () => {
    const r = await bash(
      `claude -p "Explain recursion" --output-format stream-json --verbose --include-partial-messages | \\\n` +
        `  jq -rj 'select(.type == "stream_event" and .event.delta.type? == "text_delta") | .event.delta.text'`,
      repo(),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('A small greeting library.');
  });

  it('stdin is part of the prompt: cat data.txt | claude -p "…" --output-format json > summary.json', async () => {
    const cwd = repo();
    const r = await bash(`cat data.txt | claude -p "Summarize this data" --output-format json > summary.json\njq -r '.result' summary.json`, cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('The data says 21C.\n');
    const piped = await bash(`echo "temperature: 21C" | infinity-code -p "Summarize this data"`, cwd);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('The data says 21C.\n');
  });

  it('--append-system-prompt reaches the model (the security-review example, a diff on stdin)', async () => {
    const r = await bash(
      `cat pr.diff | claude -p "Review this PR" \\\n` +
        `  --append-system-prompt "You are a security engineer. Review for vulnerabilities." \\\n` +
        `  --output-format json | jq -r '.result'`,
      repo(),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Security review: safe.\n');
  });

  it('--allowedTools "Bash,Read" with --permission-mode acceptEdits: the Read tool runs, text output', async () => {
    const before = api.requests.length;
    const r = await bash(
      `claude -p "Stage my changes and write a set of commits for them" \\\n  --allowedTools "Bash,Read" \\\n  --permission-mode acceptEdits`,
      repo(),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('It greets by name.\n');
    const last = api.requests.slice(before).at(-1)!;
    const results = [...toolResults((last.body.messages ?? []) as Msg[]).values()];
    expect(results).toEqual([{ text: expect.stringContaining('function greet(name)'), isError: false }]);
  });

  it('--max-turns 3: the run stops with error_max_turns', async () => {
    const r = await bash(`claude -p "Loop until stopped" --max-turns 3 --output-format json | jq -r '.subtype, .is_error, .num_turns'`, repo());
    expect(r.code, r.stderr).toBe(5);
    expect(r.stdout).toBe('error_max_turns\ntrue\n3\n');
  });
});

describe('a result on every exit path, for scripts that read .is_error', () => {
  it('no API key: json and stream-json still print the result, stderr says why', async () => {
    const cwd = repo();
    const r = await bash(`claude -p "Summarize this project" --output-format json | jq -r '.is_error, .subtype, .status, .exit_code, .result'`, cwd, {
      ANTHROPIC_API_KEY: '',
    });
    expect(r.code).toBe(3);
    const [isError, subtype, status, code, result] = r.stdout.trimEnd().split('\n');
    expect([isError, subtype, status, code]).toEqual(['true', 'error_during_execution', 'config_error', '3']);
    expect(result).toMatch(/^Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set/);
    expect(r.stderr).toMatch(/infinity-code: Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set/);

    const stream = await bash(`claude -p "Summarize this project" --output-format stream-json --verbose`, cwd, { ANTHROPIC_API_KEY: '' });
    expect(stream.code).toBe(3);
    expect(invalidStreamJsonLines(stream.stdout)).toEqual([]);
    const only = stream.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; timestamp: string; is_error: boolean });
    expect(only).toEqual([expect.objectContaining({ type: 'result', is_error: true, timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })]);
  });

  it('a broken config file: a config_error result', async () => {
    const home = tempDir();
    const dir = join(home, '.config', 'infinity-code');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), '{"model": ');
    const r = await bash(`claude -p "Summarize this project" --output-format json`, repo(), { HOME: home });
    expect(r.code).toBe(3);
    expect(invalidStreamJsonLines(r.stdout)).toEqual([]);
    expect(JSON.parse(r.stdout)).toMatchObject({ type: 'result', is_error: true, status: 'config_error', error_details: [{ kind: 'config' }] });
    expect(r.stderr).toContain('config.json');
  });

  it('a usage error found after the flags are read (a task file that does not exist): a usage_error result', async () => {
    const r = await bash(`claude -p @missing.md --output-format json | jq -r '.status, .exit_code'`, repo());
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('usage_error\n2\n');
    expect(r.stderr).toContain('The task file missing.md does not exist');
  });

  it("an unknown flag is commander's to tell: stderr only, exit 2, as Claude Code", async () => {
    const r = await bash(`claude -p "hi" --output-format json --no-such-flag`, repo());
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/unknown option '--no-such-flag'/);
  });
});
