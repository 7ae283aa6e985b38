// Claude Code's tool permission flags, end to end: the built CLI against the local fake Messages
// API. --allowedTools refuses what it does not allow (the model reads why, the result lists the
// denial), --disallowedTools takes a tool out of what the model is offered, --permission-mode plan
// edits nothing, and --add-dir lets the agent read a directory it cannot write.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type RecordedRequest } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, git, gitRepo, runCli } from './support/cli.js';
import { allText, toolCalls, toolResults, type Msg } from './support/model.js';

/** Made before the CLI starts: a directory under the shared /tmp, which commands see only when added. */
const added = mkdtempSync('/tmp/ic-e2e-added-');
writeFileSync(join(added, 'notes.txt'), 'ADDED DIR NOTES\n');

/**
 * Each task names the calls the model makes, one per reply, in order; then it answers with the
 * text of every result it got, so a test can read them in the result too.
 */
const PLANS: Record<string, Array<{ name: string; input: Record<string, unknown> }>> = {
  'TASK run-a-command': [{ name: 'execute_command', input: { command: 'echo ran > ran.txt' } }],
  'TASK plan-only': [
    { name: 'create_file', input: { path: 'new.txt', content: 'new\n' } },
    { name: 'edit_file', input: { path: 'a.txt', old_str: 'alpha', new_str: 'omega' } },
    { name: 'execute_command', input: { command: 'echo from-command > cmd.txt && cat cmd.txt' } },
  ],
  'TASK read-added': [
    { name: 'read_file', input: { path: join(added, 'notes.txt') } },
    { name: 'execute_command', input: { command: `cat ${join(added, 'notes.txt')}; echo pwned > ${join(added, 'notes.txt')} || echo write-refused` } },
  ],
  'TASK just-answer': [],
};

const brain: FakeBrain = (body) => {
  const messages = (body.messages ?? []) as Msg[];
  const said = allText(messages);
  const task = Object.keys(PLANS).find((t) => said.includes(t));
  const plan = task ? PLANS[task] : [];
  const made = toolCalls(messages).length;
  const next = plan[made];
  if (next) return { text: `Step ${made + 1}.`, toolUse: next };
  const results = [...toolResults(messages).values()].map((r) => `${r.isError ? 'ERROR' : 'OK'}: ${r.text}`);
  return { text: `Finished. ${results.join(' | ')}` };
};

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
  rmSync(added, { recursive: true, force: true });
});

const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });

interface Result {
  result: string;
  exit_code: number;
  status: string;
  files_changed: string[];
  patch_file: string | null;
  diff_applied: boolean;
  permission_denials: Array<{ tool_name: string; tool_use_id: string; tool_input: Record<string, unknown> }>;
}

/** The requests of one run: those whose conversation holds its task. */
function requestsOf(task: string): RecordedRequest[] {
  return api.requests.filter((r) => r.path === '/v1/messages' && allText((r.body.messages ?? []) as Msg[]).includes(task));
}

/** The names of the tools a request offered. */
function toolNames(r: RecordedRequest): string[] {
  return ((r.body.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
}

describe('tool permission flags', () => {
  it('--allowedTools Read: the command is denied, the model reads why, and the result lists the denial', async () => {
    const repo = gitRepo({ 'a.txt': 'alpha\n' });
    const r = await runCli(['-p', 'TASK run-a-command', '--allowedTools', 'Read', '--output-format', 'json'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as Result;
    // Nothing ran: no change to save or apply.
    expect(result.files_changed).toEqual([]);
    expect(result.patch_file).toBeNull();
    expect(existsSync(join(repo, 'ran.txt'))).toBe(false);
    expect(result.permission_denials).toEqual([
      { tool_name: 'execute_command', tool_use_id: expect.stringMatching(/^toolu_/), tool_input: { command: 'echo ran > ran.txt' } },
    ]);
    // The model's next request carries the denial as the call's error result, naming the flag.
    const requests = requestsOf('TASK run-a-command');
    expect(requests).toHaveLength(2);
    const answered = toolResults((requests[1].body.messages ?? []) as Msg[]);
    const denial = answered.get(result.permission_denials[0].tool_use_id);
    expect(denial?.isError).toBe(true);
    expect(denial?.text).toContain('Permission denied: execute_command (echo ran > ran.txt) is not permitted');
    expect(denial?.text).toContain('--allowedTools "Read"');
    expect(result.result).toContain('ERROR: Error: Permission denied');
    // The tool is still offered: --allowedTools refuses calls, it does not hide tools.
    expect(toolNames(requests[0])).toContain('execute_command');
  });

  it('--disallowedTools Bash: execute_command is not among the tools the model is offered', async () => {
    const repo = gitRepo({ 'a.txt': 'alpha\n' });
    const r = await runCli(['-p', 'TASK just-answer', '--disallowedTools', 'Bash', '--output-format', 'json'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(0);
    const requests = requestsOf('TASK just-answer');
    expect(requests.length).toBeGreaterThan(0);
    const offered = toolNames(requests[0]);
    expect(offered).not.toContain('execute_command');
    expect(offered).toEqual(expect.arrayContaining(['read_file', 'edit_file', 'grep', 'spawn_thread']));
  });

  it('--permission-mode plan: edits are denied, commands run in the sandbox, and nothing is applied or saved', async () => {
    const repo = gitRepo({ 'a.txt': 'alpha\n' });
    const r = await runCli(['-p', 'TASK plan-only', '--permission-mode', 'plan', '--output-format', 'json'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as Result;
    expect(result.permission_denials.map((d) => d.tool_name)).toEqual(['create_file', 'edit_file']);
    // The command ran (in the sandbox) and its output reached the model...
    expect(result.result).toContain('OK: ');
    expect(result.result).toContain('from-command');
    expect(result.result).toContain('--permission-mode plan');
    // ...but nothing reached the working tree, and no patch was saved.
    expect(result).toMatchObject({ files_changed: [], patch_file: null, diff_applied: false, status: 'success' });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(existsSync(join(repo, 'new.txt'))).toBe(false);
    expect(existsSync(join(repo, 'cmd.txt'))).toBe(false);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(repo, '.infinity', 'patches'))).toBe(false);
  });

  it('--add-dir: read_file and commands read a file there by absolute path; a command cannot write it', async () => {
    const repo = gitRepo({ 'a.txt': 'alpha\n' });
    const r = await runCli(['-p', 'TASK read-added', '--add-dir', added, '--output-format', 'json'], { cwd: repo, env: env() });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as Result;
    const [read, command] = result.result.replace(/^Finished\. /, '').split(' | ');
    expect(read).toContain('OK: ');
    expect(read).toContain('ADDED DIR NOTES');
    expect(command).toContain('ADDED DIR NOTES');
    expect(command).toContain('write-refused');
    expect(readFileSync(join(added, 'notes.txt'), 'utf8')).toBe('ADDED DIR NOTES\n');
    // The model is told where it may read.
    const system = JSON.stringify(requestsOf('TASK read-added')[0].body.system);
    expect(system).toContain(added);
  });
});
