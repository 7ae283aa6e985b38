// What a model sees through the built CLI, headless, against the strict fake Messages API: where
// it works (system prompt), the tools as a Claude model calls them (grep's modes, edit_file's
// replace_all, create_file's overwrite, a re-read that says it is unchanged), instructions of a
// subdirectory delivered with the first call there, and git in its sandbox telling the truth
// (the user's branch, history and uncommitted change; a commit refused with how changes reach the user).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, runCli } from './support/cli.js';

type Block = { type: string; id?: string; name?: string; input?: Record<string, unknown>; tool_use_id?: string; content?: unknown };
const blocks = (body: FakeRequestBody): Block[] => (body.messages ?? []).flatMap((m) => (m as { content: Block[] }).content);
const call = (name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, name, input });

const GIT_PROBE = 'git status --short; git log --format=%s; git -c user.email=m@m -c user.name=m commit -qam "model commit"; echo "commit exit $?"';

/** The calls of each step, made in parallel; the step is the number of replies with calls so far. */
const brain: FakeBrain = (body) => {
  const step = (body.messages ?? []).filter((m) => (m as { role: string; content: Block[] }).role === 'assistant' && (m as { content: Block[] }).content.some((b) => b.type === 'tool_use')).length;
  if (step === 0) return { content: [call('grep', { pattern: 'oldName' }), call('read_file', { path: 'src/a.js' }), call('execute_command', { command: GIT_PROBE })] };
  if (step === 1) {
    return {
      content: [
        call('edit_file', { path: 'src/a.js', old_str: 'oldName', new_str: 'newName', replace_all: true }),
        call('create_file', { path: 'notes.md', content: 'rewritten notes\n', overwrite: true }),
        call('read_file', { path: 'src/sub/b.js' }),
      ],
    };
  }
  if (step === 2) return { content: [call('read_file', { path: 'src/sub/b.js' })] };
  return { content: [{ type: 'text', text: 'Done.' }] };
};

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

/** The text of each tool result of the request's last message, by the name of the call it answers. */
function results(body: FakeRequestBody): Array<{ name: string; text: string }> {
  const names = new Map(blocks(body).filter((b) => b.type === 'tool_use').map((b) => [b.id, b.name]));
  const last = ((body.messages ?? []).at(-1) as { content: Block[] }).content;
  return last.filter((b) => b.type === 'tool_result').map((b) => ({ name: names.get(b.tool_use_id) ?? '?', text: JSON.stringify(b.content) }));
}

describe('what the model sees', () => {
  it('the environment, the tools it knows, nested instructions and truthful git, through the strict fake API', async () => {
    const repo = gitRepo({
      'src/a.js': 'export function oldName() {}\nexport const alias = oldName;\n',
      'src/sub/b.js': 'export const b = 1;\n',
      'src/sub/AGENTS.md': 'In src/sub, every export is a const.\n',
      'notes.md': 'notes\n',
    });
    writeFileSync(join(repo, 'notes.md'), 'notes the user is still writing\n');
    const r = await runCli(['-p', 'Rename oldName.', '--yes', '--output-format', 'json'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: api.url } });
    expect(r.code, r.stderr).toBe(0);
    const requests = api.requests.filter((q) => q.path === '/v1/messages');
    expect(requests).toHaveLength(4);

    const system = JSON.stringify(requests[0].body.system);
    expect(system).toMatch(/Git branch: \w+/);
    expect(system).toContain(' M notes.md');
    expect(system).toContain('Commands run in bash');
    expect(system).toContain('commands have no network');

    const first = results(requests[1].body);
    expect(first.find((x) => x.name === 'grep')?.text).toContain('src/a.js');
    expect(first.find((x) => x.name === 'read_file')?.text).toContain('     1\\texport function oldName');
    const gitText = first.find((x) => x.name === 'execute_command')!.text;
    expect(gitText).toContain(' M notes.md');
    expect(gitText).toContain('initial');
    expect(gitText).not.toContain('snapshot of the working tree');
    expect(gitText).toContain('Commits are not made in this sandbox');
    expect(gitText).toContain('commit exit 1');

    const second = results(requests[2].body);
    expect(second.find((x) => x.name === 'edit_file')?.text).toContain('Edited src/a.js');
    expect(second.find((x) => x.name === 'create_file')?.text).toContain('Overwrote notes.md');
    const nested = second.find((x) => x.name === 'read_file')!.text;
    expect(nested).toContain('src/sub/AGENTS.md');
    expect(nested).toContain('every export is a const');

    const third = results(requests[3].body).at(-1)!;
    expect(third.text).toContain('File unchanged since your last read of it');
    // Asked once, delivered once: the re-read carries no instructions again.
    expect(third.text).not.toContain('every export is a const');

    expect(readFileSync(join(repo, 'src/a.js'), 'utf8')).toBe('export function newName() {}\nexport const alias = newName;\n');
    expect(readFileSync(join(repo, 'notes.md'), 'utf8')).toBe('rewritten notes\n');
  });
});
