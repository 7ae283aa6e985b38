// Headless `-p` expands what the TUI would: a project command's prompt with its arguments, and the
// files `@` mentions name, before the task reaches the model (the fake Messages API records it).
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, runCli } from './support/cli.js';

/** The text of the first user message: the task as the model got it. */
function taskText(body: FakeRequestBody): string {
  const first = (body.messages ?? [])[0] as { content: string | Array<{ type: string; text?: string }> } | undefined;
  if (!first) return '';
  return typeof first.content === 'string' ? first.content : first.content.flatMap((b) => (b.type === 'text' && b.text ? [b.text] : [])).join('');
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: () => ({ text: 'Done here.' }) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });

/** Runs `-p task` and returns the task as the model received it, with the run's stderr (notes included: --verbose). */
async function sent(repo: string, task: string): Promise<{ text: string; stderr: string }> {
  const from = api.requests.length;
  const r = await runCli(['-p', task, '--output-format', 'json', '--verbose'], { cwd: repo, env: env() });
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ type: 'result', result: 'Done here.' });
  const request = api.requests.slice(from).find((q) => q.path.endsWith('/messages'));
  expect(request, 'no request reached the model').toBeDefined();
  return { text: taskText(request!.body), stderr: r.stderr };
}

describe('headless tasks', () => {
  const repo = () =>
    gitRepo({
      '.claude/commands/review.md': '---\ndescription: Review a part\nallowed-tools: Read, Grep\n---\nReview $ARGUMENTS carefully.\n',
      '.claude/commands/git/summary.md': 'Summarise the history of $1 since $2.',
      'src/a.ts': 'export const answer = 42;\n',
    });

  it('a project command from .claude/commands: -p "/review args" sends its prompt with the arguments', async () => {
    const r = await sent(repo(), '/review the parser');
    expect(r.text).toBe('Review the parser carefully.');
    const nested = await sent(repo(), '/git:summary src "last week"');
    expect(nested.text).toBe('Summarise the history of src since last week.');
  });

  it('-p with @path sends the file content along; the notes go to stderr', async () => {
    const r = await sent(repo(), 'What is the answer in @src/a.ts?');
    expect(r.text).toBe('What is the answer in @src/a.ts?\n\n<attached-file path="src/a.ts" lines="1">\nexport const answer = 42;\n</attached-file>');
    expect(r.stderr).toContain('infinity-code: attached src/a.ts (1 line)');
  });

  it('-p from a directory under the root: @path is read from there first, then from the root', async () => {
    const root = repo();
    const r = await sent(join(root, 'src'), 'Compare @a.ts with @.claude/commands/review.md');
    expect(r.stderr).toContain('infinity-code: attached src/a.ts (1 line)');
    expect(r.stderr).toContain('infinity-code: attached .claude/commands/review.md (');
    expect(r.text).toContain('<attached-file path="src/a.ts" lines="1">\nexport const answer = 42;\n</attached-file>');
  });

  it('-p "@path words": a task starting with @ is read from a file; when there is none, the error says how to mention one', async () => {
    const r = await runCli(['-p', '@src/a.ts explain it'], { cwd: repo(), env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('The task file src/a.ts explain it does not exist.');
    expect(r.stderr).toContain('To mention a file in the task, put a word before it: -p "explain @src/a.ts".');
  });

  it('text that names no command goes as written: a path, or a typo (said on stderr)', async () => {
    expect((await sent(repo(), '/etc/hosts is odd')).text).toBe('/etc/hosts is odd');
    const typo = await sent(repo(), '/reveiw it');
    expect(typo.text).toBe('/reveiw it');
    expect(typo.stderr).toContain('infinity-code: /reveiw is not a project command (/git:summary, /review); it was sent to the model as written.');
  });
});
