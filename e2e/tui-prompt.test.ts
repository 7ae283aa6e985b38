// The prompt in a real terminal (tmux) against the fake Messages API: a project command from
// .claude/commands is listed, Tab-completed and sent expanded; a multi-line paste is one message.
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { TmuxScreen } from './support/tmux.js';

/** The text blocks of the user messages a request carries, one string per message. */
function userTexts(body: FakeRequestBody): string[] {
  const messages = (body.messages ?? []) as Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  return messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : m.content.flatMap((b) => (b.type === 'text' && b.text ? [b.text] : [])).join('')))
    .filter((t) => t !== '');
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain: (_body, i) => ({ text: `Answer number ${i + 1}.` }) });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

function startTui(repo: string): TmuxScreen {
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: tempDir(), TERM: 'xterm-256color' };
  return TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], { cwd: repo, env });
}

/** The user messages the session sent, from its last request. */
function sentByUser(from: number): string[] {
  const last = api.requests.slice(from).at(-1);
  return last ? userTexts(last.body) : [];
}

describe('the prompt in a real terminal', () => {
  it('a project command from .claude/commands with $ARGUMENTS: /help lists it, Tab completes it, its prompt reaches the model', async () => {
    const repo = gitRepo({
      'a.txt': 'a\n',
      '.claude/commands/review.md': '---\ndescription: Review a part of the code\nargument-hint: <part>\n---\nReview $ARGUMENTS carefully.\n',
      '.claude/commands/draft.md': '---\ndescription: never closed\n',
    });
    const from = api.requests.length;
    const screen = startTui(repo);
    try {
      // A file that defines no command is said once, at the start.
      const start = await screen.waitFor(/sandbox (on|off)/);
      expect(start).toContain('✗ .claude/commands/draft.md is left out: its frontmatter');
      screen.type('/help');
      screen.press('Enter');
      await screen.waitFor(/\/review <part> +Review a part of the code \(\.claude\/commands\)/);
      screen.type('/rev');
      await screen.waitFor(/› \/rev/);
      screen.press('Tab');
      await screen.waitFor(/› \/review /);
      screen.type('the parser');
      screen.press('Enter');
      const after = await screen.waitFor(/● Answer number \d+\./);
      // The transcript shows the command as typed; the model got its prompt.
      expect(after).toContain('› /review the parser');
      expect(sentByUser(from)).toEqual(['Review the parser carefully.']);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });

  it('a pasted multi-line text is one message: the paste waits in the prompt, Enter sends all its lines', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const from = api.requests.length;
    const screen = startTui(repo);
    try {
      await screen.waitFor(/sandbox (on|off)/);
      screen.paste('first pasted line\nsecond pasted line\nthird pasted line\n');
      await screen.waitFor(/› first pasted line\s*│\n│\s+second pasted line\s*│\n│\s+third pasted line/);
      // Nothing was sent by the paste's line breaks.
      expect(api.requests.length).toBe(from);
      screen.type(' (end)');
      screen.press('Enter');
      await screen.waitFor(/● Answer number \d+\./);
      expect(api.requests.length).toBe(from + 1);
      expect(sentByUser(from)).toEqual(['first pasted line\nsecond pasted line\nthird pasted line\n (end)']);
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
