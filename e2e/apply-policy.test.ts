// "The sandbox must contain the agent": a scripted model makes one legitimate edit and, next to
// it, everything a user would not expect to be applied: symlinks to /etc/passwd, to ~/.ssh and to
// ../outside; overwrites of .infinity/config.json and .infinity/sessions.json; an un-ignored .env
// written over the user's own ignored one; a nested repository (`git init sub`); a 120 MB file.
// With --yes only the legitimate edit (and the .gitignore edit, an ordinary change to a tracked
// file) reaches the working tree, the run ends normally, `-c` still works, and the result says
// what was left out and why. Without --yes the working tree is untouched and the saved patch
// leaves the same things out.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeReply, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, git, gitRepo, runCli, tempDir } from './support/cli.js';
import { toolCalls, toolResults, type Msg } from './support/model.js';
import { events, STACK_TRACE } from './support/run.js';
import { treeFingerprint } from './support/tree.js';

const USER_ENV = 'API_KEY=the-users-own-secret\n';
const BIG = 125829120; // 120 MB

/** The model's tool calls, in order; then it answers "All done." */
function plan(home: string): FakeReply[] {
  const call = (text: string, name: string, input: Record<string, unknown>): FakeReply => ({ text, toolUse: { name, input } });
  const run = (text: string, command: string) => call(text, 'execute_command', { command });
  return [
    call('The real fix.', 'edit_file', { path: 'a.txt', old_str: 'alpha', new_str: 'ALPHA' }),
    run('Links out.', `ln -s /etc/passwd passwd-link && ln -s ${home}/.ssh ssh-link && ln -s ../outside outside-link`),
    call('My own config.', 'create_file', { path: '.infinity/config.json', content: '{"model":"attacker-model"}\n' }),
    run('And the sessions.', `echo '{"sessions":[]}' > .infinity/sessions.json`),
    call('Un-ignore .env.', 'edit_file', { path: '.gitignore', old_str: '.env\n*.log', new_str: '*.log' }),
    call('Write .env.', 'create_file', { path: '.env', content: 'API_KEY=planted-by-the-agent\n' }),
    run('A repository of my own.', 'git init -q sub && echo nested > sub/readme.txt'),
    run('A huge file.', `head -c ${BIG} /dev/urandom > big.bin && ls -l big.bin`),
  ];
}

function brain(home: string) {
  const steps = plan(home);
  return (body: FakeRequestBody): FakeReply => {
    const i = toolCalls((body.messages ?? []) as Msg[]).length;
    return i < steps.length ? { ...steps[i], chunks: 2 } : { text: 'All done.' };
  };
}

let api: FakeMessagesApi;
let home: string;
beforeAll(async () => {
  home = tempDir();
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
  api = await startFakeMessagesApi({ brain: brain(home) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

/** A user's repository: a tracked .gitignore ignoring .env, and the user's own .env. */
function userRepo(): string {
  const repo = gitRepo({ 'a.txt': 'alpha\nbeta\n', '.gitignore': '.env\n*.log\n' }, { commandTimeoutMs: 60_000 });
  writeFileSync(join(repo, '.env'), USER_ENV);
  return repo;
}

const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });

const EXPECTED_LEFT_OUT: Record<string, { rule: string; reason: RegExp }> = {
  'sub/': { rule: 'nested-repo', reason: /^sub\/ holds a nested git repository; its files were not included$/ },
  '.env': { rule: 'user-ignored', reason: /your working tree has its own copy, ignored by your git rules/ },
  '.infinity/config.json': { rule: 'reserved-dir', reason: /inside \.infinity\/, which holds infinity-code's own configuration and sessions/ },
  '.infinity/sessions.json': { rule: 'reserved-dir', reason: /inside \.infinity\// },
  'big.bin': { rule: 'too-large', reason: /^120 MB, over the 20 MB limit for one file/ },
  'outside-link': { rule: 'outside-symlink', reason: /^a symbolic link to \.\.\/outside, which is outside the repository$/ },
  'passwd-link': { rule: 'outside-symlink', reason: /^a symbolic link to \/etc\/passwd, which is outside the repository$/ },
  'ssh-link': { rule: 'outside-symlink', reason: /\/\.ssh, which is outside the repository$/ },
};

function expectEveryStepRan(): void {
  const messages = api.requests.at(-1)!.body.messages as Msg[];
  const results = toolResults(messages);
  const calls = toolCalls(messages);
  expect(calls).toHaveLength(plan(home).length);
  for (const c of calls) expect(results.get(c.id)?.isError, `${c.name} ${JSON.stringify(c.input)}: ${results.get(c.id)?.text}`).toBe(false);
}

describe('what --yes applies', () => {
  it('only the legitimate edits; every hostile change is left out with its reason, the user .env and .infinity stay, and -c still works', async () => {
    const repo = userRepo();
    const before = treeFingerprint(repo);
    const config = readFileSync(join(repo, '.infinity', 'config.json'));
    const r = await runCli(['-p', 'Fix a.txt.', '--yes', '--output-format', 'stream-json'], { cwd: repo, env: env(), home });
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expectEveryStepRan();

    const result = events(r.stdout).at(-1)!;
    expect(result).toMatchObject({ type: 'result', status: 'success', exit_code: 0, diff_applied: true, conflicts: [], result: 'All done.' });
    expect([...(result.files_changed as string[])].sort()).toEqual(['.gitignore', 'a.txt']);
    const leftOut = result.left_out as Array<{ path: string; rule: string; reason: string; size?: number; target?: string }>;
    expect(leftOut.map((l) => l.path).sort()).toEqual(Object.keys(EXPECTED_LEFT_OUT).sort());
    for (const l of leftOut) {
      expect(l.rule, l.path).toBe(EXPECTED_LEFT_OUT[l.path].rule);
      expect(l.reason, l.path).toMatch(EXPECTED_LEFT_OUT[l.path].reason);
    }
    expect(leftOut.find((l) => l.path === 'big.bin')!.size).toBe(BIG);
    expect(leftOut.find((l) => l.path === 'ssh-link')!.target).toBe(`${home}/.ssh`);

    // File by file: a.txt and .gitignore changed as the agent wrote them; nothing else did.
    const after = treeFingerprint(repo);
    const files = (fp: Record<string, string>) => Object.fromEntries(Object.entries(fp).filter(([k]) => !k.startsWith('<')));
    expect(files(after)).toEqual({ ...files(before), 'a.txt': after['a.txt'], '.gitignore': after['.gitignore'] });
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('ALPHA\nbeta\n');
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toBe('*.log\n');
    expect(readFileSync(join(repo, '.env'), 'utf8')).toBe(USER_ENV);
    expect(readFileSync(join(repo, '.infinity', 'config.json')).equals(config)).toBe(true);
    expect(readFileSync(join(repo, '.infinity', 'sessions.json'), 'utf8')).toContain(result.session_id as string);
    expect(after['<HEAD>']).toBe(before['<HEAD>']);
    expect(after['<index>']).toBe(before['<index>']);

    const again = await runCli(['-c', '-p', 'Anything else?', '--output-format', 'json'], { cwd: repo, env: env(), home });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ session_id: result.session_id, status: 'success', result: 'All done.' });
  });
});

describe('without --yes', () => {
  it('the working tree stays byte for byte; the saved patch leaves the same changes out, and the summary lists them', async () => {
    const repo = userRepo();
    const before = treeFingerprint(repo);
    const config = readFileSync(join(repo, '.infinity', 'config.json'));
    const r = await runCli(['-p', 'Fix a.txt.'], { cwd: repo, env: env(), home });
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.code, r.stderr.slice(-3000)).toBe(4);
    expectEveryStepRan();
    expect(treeFingerprint(repo)).toEqual(before);
    expect(readFileSync(join(repo, '.env'), 'utf8')).toBe(USER_ENV);
    expect(readFileSync(join(repo, '.infinity', 'config.json')).equals(config)).toBe(true);

    expect(r.stderr).toMatch(/Changes to 2 file\(s\) were not applied \(run with --yes to apply them\)\. The patch is at \S+; .* It leaves out the changes listed below, which --yes would not apply either\./);
    expect(r.stderr).toContain('Left out 8 change(s) the agent made; they were not applied:');
    for (const [path, { reason }] of Object.entries(EXPECTED_LEFT_OUT)) {
      const line = r.stderr.split('\n').find((l) => l.startsWith(`  ${path} — `));
      expect(line, path).toBeDefined();
      expect(line!.slice(`  ${path} — `.length), path).toMatch(reason);
    }
    const patchFile = /The patch is at (\S+?);/.exec(r.stderr)![1];
    const patch = readFileSync(join(repo, patchFile), 'utf8');
    expect(patch.match(/^diff --git .*$/gm)).toEqual(['diff --git a/.gitignore b/.gitignore', 'diff --git a/a.txt b/a.txt']);
    expect(patch.length).toBeLessThan(2000);
    git(repo, 'apply', '--check', patchFile);
  });
});
