// MCP servers in the TUI, in a real terminal (tmux): a repository's server is asked about once (the
// answer remembered in the user config), /mcp lists it with its state and tools, and the model
// calls its tool.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { STDIO_FIXTURE } from '@infinity-code/mcp/testing';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeRequestBody } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupTemps, gitRepo, tempDir } from './support/cli.js';
import { toolCalls, toolResults, type Msg } from './support/model.js';
import { TmuxScreen } from './support/tmux.js';

/** Echoes through the server's tool, then says what came back. */
function brain(body: FakeRequestBody) {
  const messages = (body.messages ?? []) as Msg[];
  const echo = toolCalls(messages).find((c) => c.name === 'mcp__files__echo');
  if (echo) return { text: `The server said: ${toolResults(messages).get(echo.id)?.text ?? 'nothing'}.` };
  return { toolUse: { name: 'mcp__files__echo', input: { text: 'from the TUI' } } };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({ brain });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('MCP servers in the TUI', () => {
  it("asks once about the repository's server, remembers the answer, lists it in /mcp, and the model calls its tool", async () => {
    const repo = gitRepo({
      'README.md': 'fixture\n',
      '.mcp.json': JSON.stringify({ mcpServers: { files: { command: process.execPath, args: [STDIO_FIXTURE] } } }),
    });
    const home = tempDir();
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, HOME: home, TERM: 'xterm-256color' };
    const start = () => TmuxScreen.start(['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', process.execPath, BIN], { cwd: repo, env, height: 50 });

    let screen = start();
    try {
      const ask = await screen.waitFor(/Start the MCP server "files"\?/);
      expect(ask).toContain('This repository defines it');
      expect(ask).toContain(STDIO_FIXTURE);
      screen.press('y');
      await screen.waitFor(/MCP server "files" is ready: \d+ tools\./);
      screen.type('/mcp');
      screen.press('Enter');
      const list = await screen.waitFor(/tools: mcp__files__echo/);
      expect(list).toMatch(/files · ready · stdio, in the sandbox · from \.mcp\.json/);
      screen.type('Echo something');
      screen.press('Enter');
      expect(await screen.waitFor(/The server said: .*\./)).toContain('The server said: echo: from the TUI.');
      screen.type('/quit');
      screen.press('Enter');
      await screen.waitForExit();
    } finally {
      screen.kill();
    }
    const saved = JSON.parse(readFileSync(join(home, '.config', 'infinity-code', 'config.json'), 'utf8')) as {
      mcpProjectServers: Record<string, Record<string, { allow: boolean; fingerprint: string }>>;
    };
    expect(saved.mcpProjectServers[repo].files).toMatchObject({ allow: true, fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/) });

    // The next session remembers: the server starts without a question.
    screen = start();
    try {
      const ready = await screen.waitFor(/MCP server "files" is ready/);
      expect(ready).not.toContain('Start the MCP server');
    } finally {
      screen.press('C-c');
      screen.press('C-c');
      screen.kill();
    }
  });
});
