// Starting the TUI in a real terminal (tmux): `infinity-code "task"` opens it with the task sent as
// the first message, which names the session; `-r` alone lists the project's sessions to pick
// from (Esc leaves with exit code 0; none to pick from is said plainly).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, runCli, tempDir } from './support/cli.js';
import { blocks, lastResult, type Msg } from './support/model.js';
import { TmuxScreen } from './support/tmux.js';

/** "write alpha" creates alpha.txt; anything else is answered in words. */
function brain(body: FakeRequestBody) {
  const messages = (body.messages ?? []) as Msg[];
  const last = blocks(messages.slice(-1)).find((b) => b.type === 'text');
  const asked = last?.type === 'text' ? /^write (\w+)$/.exec(last.text.trim()) : null;
  if (asked) return { toolUse: { name: 'create_file', input: { path: `${asked[1]}.txt`, content: `${asked[1]}-line\n` } } };
  const done = lastResult(messages);
  return { text: done ? `Finished: ${done.text.split('\n')[0]}` : `Answered: ${last?.type === 'text' ? last.text.trim() : ''}` };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

/**
 * The CLI in a shell that says how it exited and stays, so the exit code is read too. A script
 * file: tmux runs a command given as several words without a shell, quotes and all. Ink draws
 * only the last frame when CI is set: the terminal must look like a user's.
 */
function start(repo: string, env: Record<string, string>, ...args: string[]): TmuxScreen {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = join(tempDir(), 'run.sh');
  writeFileSync(script, `env -u CI -u CONTINUOUS_INTEGRATION ${quoted}\necho "[exited $?]"\nexec sleep 600\n`);
  return TmuxScreen.start(['sh', script], { cwd: repo, env });
}
const titles = (repo: string) =>
  (JSON.parse(readFileSync(join(repo, '.infinity', 'sessions.json'), 'utf8')) as Array<{ id: string; title: string }>).map((s) => s.title);

function setting() {
  const repo = gitRepo({ 'README.md': 'start\n' });
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
  return { repo, env };
}

describe('starting the TUI', () => {
  it('infinity-code "task": the TUI opens with the task sent, shown, and naming the session', async () => {
    const { repo, env } = setting();
    const screen = start(repo, env, 'what does README.md say?');
    try {
      await screen.waitFor(/› what does README\.md say\?[\s\S]*Answered: what does README\.md say\?[\s\S]*Ask for a change/);
      screen.type('/sessions');
      screen.press('Enter');
      await screen.waitFor(/Sessions \(resume one with[^\n]*\n\* th_\w{5}[^\n]*what does README\.md say\?/);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
    expect(titles(repo)).toEqual(['what does README.md say?']);
  });

  it('a session is named after its first message; one without a message keeps a neutral title', async () => {
    const { repo, env } = setting();
    const quiet = start(repo, env);
    try {
      await quiet.waitFor(/Ask for a change/);
      quiet.type('/quit');
      quiet.press('Enter');
      await quiet.waitFor(/\[exited 0\]/);
    } finally {
      quiet.kill();
    }
    const screen = start(repo, env);
    try {
      await screen.waitFor(/Ask for a change/);
      screen.type('Explain the layout');
      screen.press('Enter');
      await screen.waitFor(/Answered: Explain the layout/);
      screen.type('and another thing');
      screen.press('Enter');
      await screen.waitFor(/Answered: and another thing/);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
    expect(titles(repo)).toEqual(['Explain the layout', 'interactive session']);
  });

  it('-r alone: a list of the sessions, newest first; Enter opens the one chosen, with its transcript', async () => {
    const { repo, env } = setting();
    for (const task of ['write alpha', 'write beta']) {
      const r = await runCli(['-p', task], { cwd: repo, env });
      expect(r.code, r.stderr).toBe(4);
    }
    const screen = start(repo, env, '-r');
    try {
      const list = await screen.waitFor(/Resume a session \(2\)/);
      expect(list).toMatch(/› th_\w{5} {2}just now {2}write beta\n {2}th_\w{5} {2}just now {2}write alpha/);
      screen.press('Down');
      screen.press('Enter');
      const opened = await screen.waitFor(/› write alpha[\s\S]*Finished: [\s\S]*Ask for a change/);
      // The list went; what was chosen is said.
      expect(opened).toMatch(/^Resuming write alpha…/);
      expect(opened).not.toContain('write beta');
      screen.type('/sessions');
      screen.press('Enter');
      await screen.waitFor(/\* th_\w{5}[^\n]*write alpha/);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });

  it('-r alone: Esc leaves with exit code 0; with no sessions, it says so', async () => {
    const { repo, env } = setting();
    const none = start(repo, env, '-r');
    try {
      const said = await none.waitFor(/\[exited \d+\]/);
      expect(said.replace(/\n/g, '')).toContain('There are no sessions in this project to resume yet: start one with infinity-code (without -r).');
      expect(said).toContain('[exited 2]');
    } finally {
      none.kill();
    }

    expect((await runCli(['-p', 'hello'], { cwd: repo, env })).code).toBe(0);
    const screen = start(repo, env, '-r');
    try {
      await screen.waitFor(/Resume a session \(1\)[\s\S]*hello/);
      screen.press('Escape');
      const after = await screen.waitFor(/\[exited \d+\]/);
      expect(after).toContain('[exited 0]');
      expect(after).not.toContain('Ask for a change');
    } finally {
      screen.kill();
    }
  });
});
