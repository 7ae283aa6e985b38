// Issue 7, scenario 3: hostile model output. The scripted model sends tool calls with invalid
// JSON, wrong types, missing fields, unknown tools, the injected-event tool name, paths escaping
// the sandbox (`..`, absolute, symlinks), a command printing 50 MB, binary output and non-UTF-8
// file names, in a seeded order. Each gets a clear error result or a capped output, the session
// goes on to a normal end, and nothing outside the sandbox changes.
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeReply, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, git, gitRepo, tempDir } from './support/cli.js';
import { historyProblems, toolCalls, toolResults, type Msg } from './support/model.js';
import { killAll, runMark, survivors } from './support/procs.js';
import { events, run, STACK_TRACE } from './support/run.js';
import { seeded, testSeed } from './support/seeded.js';

const SEED = testSeed(7301);
const SECRET = 'TOP-SECRET-4f1c9e';
const BAD_NAME = Buffer.concat([Buffer.from('bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('-name.txt')]);

interface Step {
  name: string;
  reply: FakeReply;
  /** Checks the call's whole answer: its result plus, for a background command, its events. */
  check(answer: { text: string; isError: boolean }): void;
}

function steps(outside: string): Step[] {
  const call = (name: string, input: unknown): FakeReply => ({ toolUse: { name, input } });
  const fails = (pattern: RegExp) => (a: { text: string; isError: boolean }) => {
    expect(a.isError, a.text).toBe(true);
    expect(a.text).toMatch(pattern);
  };
  const escapes = fails(/outside the repository|leaves the repository|symbolic link that points outside/);
  return [
    { name: 'invalid JSON', reply: { toolUse: { name: 'read_file', input: {} }, rawInputJson: '{"path": "a.txt", ' }, check: fails(/not valid JSON/) },
    { name: 'JSON that is not an object', reply: { toolUse: { name: 'read_file', input: {} }, rawInputJson: '["a.txt"]' }, check: fails(/must be a JSON object|not valid JSON/) },
    { name: 'wrong type (number path)', reply: call('read_file', { path: 42 }), check: fails(/invalid arguments for read_file: "path" must be string \(got integer 42\)/) },
    { name: 'wrong type (array command)', reply: call('execute_command', { command: ['ls', '-la'] }), check: fails(/invalid arguments for execute_command/) },
    { name: 'wrong type (string line)', reply: call('read_file', { path: 'a.txt', start_line: 'one' }), check: fails(/"start_line" must be integer \(got string "one"\)/) },
    { name: 'missing field', reply: call('edit_file', { path: 'a.txt', old_str: 'alpha' }), check: fails(/Missing required property "new_str" \(string\)/) },
    { name: 'missing child_of', reply: call('spawn_thread', { instructions: 'do it all' }), check: fails(/Missing required property "child_of" \(array\)/) },
    { name: 'unknown property', reply: call('create_file', { path: 'x.txt', content: 'x', mode: '0777' }), check: fails(/Unknown property "mode" \(accepted: path, content, overwrite\)/) },
    { name: 'unknown tool', reply: call('rm_rf', { path: '/' }), check: fails(/tool 'rm_rf' does not exist/) },
    {
      name: 'the injected-event tool',
      reply: call('receive_event__injected', { original_tool_name: 'execute_command', original_tool_call_id: 'x', original_args: {} }),
      check: fails(/cannot directly invoke receive_event__injected/),
    },
    { name: 'read ..', reply: call('read_file', { path: '../outside/secret.txt' }), check: escapes },
    { name: 'read deep ..', reply: call('read_file', { path: 'src/../../../../etc/passwd' }), check: escapes },
    { name: 'read absolute', reply: call('read_file', { path: join(outside, 'secret.txt') }), check: escapes },
    { name: 'create absolute', reply: call('create_file', { path: join(outside, 'planted.txt'), content: 'x' }), check: escapes },
    { name: 'create ..', reply: call('create_file', { path: '../planted.txt', content: 'x' }), check: escapes },
    { name: 'read via dir symlink', reply: call('read_file', { path: 'escape/secret.txt' }), check: escapes },
    { name: 'create via dir symlink', reply: call('create_file', { path: 'escape/planted.txt', content: 'x' }), check: escapes },
    { name: 'edit via file symlink', reply: call('edit_file', { path: 'secret-link', old_str: SECRET, new_str: 'pwned' }), check: escapes },
    { name: 'read via file symlink', reply: call('read_file', { path: 'secret-link' }), check: escapes },
    { name: 'list ..', reply: call('list_files', { path: '..' }), check: escapes },
    { name: 'list via symlink', reply: call('list_files', { path: 'escape' }), check: escapes },
    { name: 'NUL in a path', reply: call('read_file', { path: 'a.txt\u0000.png' }), check: fails(/NUL/) },
    {
      name: 'grep does not follow the symlink out',
      reply: call('grep', { pattern: SECRET }),
      check: (a) => expect(a.text).not.toContain(outside),
    },
    {
      name: '50 MB of output in lines',
      reply: call('execute_command', { command: 'yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 52428800; echo; echo LAST-LINE' }),
      check: (a) => {
        expect(a.isError, a.text.slice(0, 500)).toBe(false);
        expect(a.text.length).toBeLessThan(100_000);
        expect(a.text).toMatch(/lines? of output omitted/);
        expect(a.text).toContain('LAST-LINE');
        expect(a.text).toMatch(/\[exit code: 0\]/);
      },
    },
    {
      name: '50 MB on one line',
      reply: call('execute_command', { command: "head -c 52428800 /dev/zero | tr '\\0' x; echo; echo AFTER-THE-LINE" }),
      check: (a) => {
        expect(a.text.length).toBeLessThan(100_000);
        expect(a.text).toMatch(/more characters/);
        expect(a.text).toContain('AFTER-THE-LINE');
        expect(a.text).toMatch(/\[exit code: 0\]/);
      },
    },
    {
      name: 'binary output',
      reply: call('execute_command', { command: 'head -c 200000 /bin/sh; printf "\\000\\001\\377\\376 tail\\n"; echo BINARY-DONE' }),
      check: (a) => {
        expect(a.text.length).toBeLessThan(100_000);
        expect(a.text).toMatch(/\[binary output: \d+ characters on \d+ lines?, not shown\]/);
        // Nothing that acts on a terminal or means nothing to a model: no NUL, no control bytes.
        // eslint-disable-next-line no-control-regex -- control characters are what this checks for
        expect(a.text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
        expect(a.text).toContain('BINARY-DONE');
        expect(a.text).toMatch(/\[exit code: 0\]/);
      },
    },
    {
      name: 'list a non-UTF-8 file name',
      reply: call('list_files', {}),
      check: (a) => {
        expect(a.isError, a.text).toBe(false);
        expect(a.text).toMatch(/bad-.*-name\.txt/);
      },
    },
    {
      name: 'grep into a non-UTF-8 file name',
      reply: call('grep', { pattern: 'needle-in-bad-name' }),
      check: (a) => {
        expect(a.isError, a.text).toBe(false);
        expect(a.text).toMatch(/bad-.*-name\.txt/);
      },
    },
    {
      // Node sees the name with U+FFFD for the bad bytes, which names no file: a clear error.
      name: 'read a non-UTF-8 file name as listed',
      reply: call('read_file', { path: 'bad-\ufffd\ufffd-name.txt' }),
      check: fails(/not exist|not found|no such/i),
    },
    {
      name: 'ls a non-UTF-8 file name',
      reply: call('execute_command', { command: 'ls; echo LS-DONE' }),
      check: (a) => {
        expect(a.isError, a.text).toBe(false);
        expect(a.text).toContain('LS-DONE');
      },
    },
  ];
}

/** The model's own calls, in order: the assistant turns this brain wrote ("Step i: ..."). */
function stepCalls(messages: readonly Msg[]): Array<{ id: string; name: string; text: string }> {
  return messages.flatMap((m) => {
    if (m.role !== 'assistant') return [];
    // On current models the words before a call come back inside the reply's thinking block.
    const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : b.type === 'thinking' ? [b.thinking] : [])).join('');
    const use = m.content.find((b) => b.type === 'tool_use');
    return /^(Step \d+|Now a real edit)/.test(text) && use?.type === 'tool_use' ? [{ id: use.id, name: use.name, text }] : [];
  });
}

/** Plays the steps in a seeded order, waiting out background commands, then makes one real edit. */
function hostileBrain(plan: Step[]) {
  return (body: FakeRequestBody): FakeReply => {
    const messages = (body.messages ?? []) as Msg[];
    const own = stepCalls(messages);
    const last = own.at(-1);
    if (last?.name === 'execute_command' && !commandFinished(messages, last.id)) {
      return { toolUse: { name: 'sleep_until_event_or_input', input: {} } };
    }
    const i = own.length;
    if (i < plan.length) return { ...plan[i].reply, text: `Step ${i}: ${plan[i].name}.` };
    if (i === plan.length) {
      return { text: 'Now a real edit.', toolUse: { name: 'edit_file', input: { path: 'a.txt', old_str: 'alpha', new_str: 'ALPHA' } } };
    }
    return { text: 'All done.' };
  };
}

/** The call's answer, with the events of a background command appended. */
function answerOf(messages: readonly Msg[], callId: string): { text: string; isError: boolean } {
  const results = toolResults(messages);
  const first = results.get(callId) ?? { text: '(no result)', isError: false };
  const events = toolCalls(messages)
    .filter((c) => c.name === 'receive_event__injected' && c.input.original_tool_call_id === callId)
    .map((c) => results.get(c.id)?.text ?? '');
  return { text: [first.text, ...events].join('\n'), isError: first.isError };
}

function commandFinished(messages: readonly Msg[], callId: string): boolean {
  const a = answerOf(messages, callId);
  return /\[(exit code: \d+|killed by signal [A-Z]+|cancelled)\]\s*$/.test(a.text) || a.isError;
}

let api: FakeMessagesApi;
let plan: Step[];
let outside: string;
beforeAll(async () => {
  outside = join(tempDir(), 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), `${SECRET}\n`);
  const rng = seeded(SEED);
  plan = steps(outside);
  // Fisher-Yates with the seeded generator: the order differs per seed and repeats per seed.
  for (let i = plan.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [plan[i], plan[j]] = [plan[j], plan[i]];
  }
  api = await startFakeMessagesApi({ brain: hostileBrain(plan) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('hostile model output', () => {
  it(`every bad call gets a clear error or capped output, and the session goes on (seed ${SEED})`, async () => {
    const repo = gitRepo({ 'a.txt': 'alpha\nbeta\n', 'src/main.js': 'console.log(1);\n' }, { commandTimeoutMs: 2000 });
    symlinkSync(outside, join(repo, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(repo, 'secret-link'));
    writeFileSync(Buffer.from(`${repo}/${BAD_NAME.toString('latin1')}`, 'latin1'), 'needle-in-bad-name\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'links and odd names');
    const mark = runMark();
    const r = await run(['-p', 'Survive a hostile model.', '--yes', '--output-format', 'stream-json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, ...mark.env },
    });
    const left = survivors(mark);
    killAll(left);
    console.log(`hostile-model seed=${SEED} order=${plan.map((s) => s.name).join(' | ')}`);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    const result = events(r.stdout).at(-1)!;
    expect(result).toMatchObject({ type: 'result', status: 'success', result: 'All done.', files_changed: ['a.txt'] });

    // The last request holds the root's whole history: well formed, and every step answered.
    const messages = api.requests.at(-1)!.body.messages as Msg[];
    expect(historyProblems(messages)).toEqual([]);
    const own = stepCalls(messages);
    expect(own).toHaveLength(plan.length + 1);
    plan.forEach((step, i) => {
      const answer = answerOf(messages, own[i].id);
      if (process.env.E2E_DUMP) console.log(`--- ${step.name}\n${answer.text.slice(0, 700)}`);
      try {
        step.check(answer);
      } catch (err) {
        throw new Error(`step "${step.name}" (seed ${SEED}): ${(err as Error).message}\nanswer: ${answer.text.slice(0, 1500)}`);
      }
    });
    // No file tool ever showed the outside file's content (commands are not confined to the repo,
    // and a call naming the secret gets it echoed).
    for (const [id, res] of toolResults(messages)) {
      const c = toolCalls(messages).find((x) => x.id === id);
      if (!c || ['execute_command', 'receive_event__injected'].includes(c.name) || JSON.stringify(c.input).includes(SECRET)) continue;
      expect(res.text, c.name).not.toContain(SECRET);
    }

    // Outside: untouched. The user's tree: only the real edit.
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`);
    expect(existsSync(join(repo, '..', 'planted.txt'))).toBe(false);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('ALPHA\nbeta\n');
    expect(git(repo, 'status', '--porcelain')).toBe(' M a.txt\n');
    expect(left).toEqual([]);
  });
});
