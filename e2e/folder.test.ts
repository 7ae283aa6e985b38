// Any folder (issue 35, point 8): outside a git repository the built CLI works on the folder it is
// started in, against the fake Messages API. Its snapshots are kept in a private git dir in the
// state dir, never a `.git` in the folder; the edit is applied (--yes) or saved as a patch that
// plain `git apply` takes; the user is told once per folder; -c continues; the model is told it
// works in a plain folder; `/` and the home directory are refused with exit 2.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeReply, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, runCli, tempDir } from './support/cli.js';
import { blocks, toolCalls, toolResults, type Msg } from './support/model.js';
import { STACK_TRACE } from './support/run.js';

/** The user's latest words: the last message's text, when it is the user's task (not a tool result). */
function task(messages: readonly Msg[]): string {
  const last = messages.at(-1);
  const text = last?.role === 'user' ? blocks([last]).find((b) => b.type === 'text') : undefined;
  return text?.type === 'text' ? text.text : '';
}

/** "capitalise": edit a.txt, then look around with git and ls; "add notes": create notes.txt. */
function brain(body: FakeRequestBody): FakeReply {
  const messages = (body.messages ?? []) as Msg[];
  const asked = task(messages);
  const done = toolCalls(messages).map((c) => c.name);
  if (asked.includes('Capitalise')) return { text: 'Editing.', toolUse: { name: 'edit_file', input: { path: 'a.txt', old_str: 'alpha', new_str: 'ALPHA' } } };
  if (asked.includes('Add notes')) return { text: 'Writing notes.', toolUse: { name: 'create_file', input: { path: 'notes.txt', content: 'notes\n' } } };
  if (done.at(-1) === 'edit_file') return { toolUse: { name: 'execute_command', input: { command: 'git status; ls -A' } } };
  return { text: done.at(-1) === 'create_file' ? 'Added the notes.' : 'Capitalised alpha.' };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: (body) => ({ ...brain(body), chunks: 2 }) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });

/** A plain folder (no repository at or above it) holding a.txt and sub/b.txt. */
function plainFolder(): string {
  const dir = realpathSync(tempDir());
  writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\n');
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'b.txt'), 'b\n');
  return dir;
}

const notice = (folder: string, home: string) =>
  `infinity-code: ${folder} is not a git repository: Infinity Code keeps its snapshots in ${home}/.local/state/infinity-code; ` +
  'your folder is not changed until you accept.\n';

describe('a folder without a git repository', () => {
  it('--yes edits and applies; the user is told once; -c continues; nothing but .infinity/ appears in the folder', async () => {
    const folder = plainFolder();
    const home = realpathSync(tempDir());
    const first = await runCli(['-p', 'Capitalise alpha in a.txt.', '--yes', '--output-format', 'json'], { cwd: folder, home, env: env() });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(notice(folder, home));
    expect(first.stderr).not.toMatch(STACK_TRACE);
    const firstResult = JSON.parse(first.stdout) as { session_id: string; result: string; files_changed: string[] };
    expect(firstResult).toMatchObject({ result: 'Capitalised alpha.', files_changed: ['a.txt'] });
    expect(readFileSync(join(folder, 'a.txt'), 'utf8')).toBe('ALPHA\nbeta\n');
    expect(readdirSync(folder).sort()).toEqual(['.infinity', 'a.txt', 'sub']);

    // What the model was told, and what git in its sandbox said: no repository, no .git.
    const last = api.requests.at(-1)!.body;
    const system = JSON.stringify(last.system);
    expect(system).toContain('This project is a plain folder, not a git repository');
    expect(system).toContain('Git: none. This folder is not a git repository');
    expect(system).toContain(`from the project folder: ${folder}.`);
    expect(system).not.toContain('Git in your sandbox: HEAD');
    expect(system).not.toContain('Git branch:');
    const messages = last.messages as Msg[];
    const command = toolCalls(messages).find((c) => c.name === 'execute_command')!;
    const said = toolResults(messages).get(command.id)!.text;
    expect(said).toMatch(/not a git repository/);
    expect(said).toMatch(/a\.txt/);
    expect(said.split('\n')).not.toContain('.git');

    // The snapshots' git dir is a private one, in the state dir, keyed by the folder.
    const folders = join(home, '.local', 'state', 'infinity-code', 'folders');
    const kept = readdirSync(folders);
    expect(kept).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(folders, kept[0], 'folder.json'), 'utf8'))).toEqual({ version: 1, root: folder });
    expect(existsSync(join(folders, kept[0], 'git', 'HEAD'))).toBe(true);

    const second = await runCli(['-c', '-p', 'Add notes.', '--yes', '--output-format', 'json'], { cwd: folder, home, env: env() });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/is not a git repository/);
    const secondResult = JSON.parse(second.stdout) as { session_id: string; result: string };
    expect(secondResult).toMatchObject({ session_id: firstResult.session_id, result: 'Added the notes.' });
    expect(readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('notes\n');
    expect(readFileSync(join(folder, 'a.txt'), 'utf8')).toBe('ALPHA\nbeta\n');
    expect(readdirSync(folder).sort()).toEqual(['.infinity', 'a.txt', 'notes.txt', 'sub']);
  });

  it('without --yes: exit 4, the folder untouched, and the saved patch applies with plain git apply', async () => {
    const folder = plainFolder();
    const home = realpathSync(tempDir());
    const r = await runCli(['-p', 'Capitalise alpha in a.txt.'], { cwd: folder, home, env: env() });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(notice(folder, home));
    expect(readFileSync(join(folder, 'a.txt'), 'utf8')).toBe('alpha\nbeta\n');
    const patch = /apply it with `git apply (\S+)`\./.exec(r.stderr)?.[1];
    expect(patch, r.stderr).toBe('.infinity/patches/' + (readdirSync(join(folder, '.infinity', 'patches'))[0] ?? ''));
    execFileSync('git', ['apply', patch!], { cwd: folder });
    expect(readFileSync(join(folder, 'a.txt'), 'utf8')).toBe('ALPHA\nbeta\n');
    expect(readdirSync(folder).sort()).toEqual(['.infinity', 'a.txt', 'sub']);
  });

  it('the home directory and / are refused with exit 2, saying to cd into a project folder', async () => {
    const home = realpathSync(tempDir());
    writeFileSync(join(home, 'notes.txt'), 'mine\n');
    const asked = api.requests.length;
    const inHome = await runCli(['-p', 'hello', '--yes'], { cwd: home, home, env: env() });
    expect(inHome.code, inHome.stderr).toBe(2);
    expect(inHome.stderr).toBe(
      `infinity-code: ${home} is your home directory, not a project folder: cd into a project folder and run Infinity Code there ` +
        '(or in a git repository).\n',
    );
    // Nothing was made there, and nothing was asked of the model.
    expect(readdirSync(home)).toEqual(['notes.txt']);

    const atRoot = await runCli(['-p', 'hello', '--yes'], { cwd: '/', home, env: env() });
    expect(atRoot.code, atRoot.stderr).toBe(2);
    expect(atRoot.stderr).toBe('infinity-code: / is the whole filesystem, not a project folder: cd into a project folder and run Infinity Code there.\n');
    expect(existsSync('/.infinity')).toBe(false);
    expect(api.requests.length).toBe(asked);
  });
});
