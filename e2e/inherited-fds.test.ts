// Issue 33 (12): descriptors the CLI's parent left open reach no command and no MCP server. Node
// marks 0-15 (and a run of open ones right after) close-on-exec as it starts, but not what lies
// past a gap: a directory open there let a command write the host through /proc/self/fd/N (the
// view's mounts don't matter to a descriptor). The CLI closes them at start-up; one its command
// line names (`--mcp-config <(…)` is /dev/fd/N) stays open for the CLI to read, and children get
// /dev/null in its place.
import { closeSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STDIO_FIXTURE } from '@infinity-code/mcp/testing';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTemps, gitRepo, runCli, tempDir } from './support/cli.js';
import { toolCalls, toolResults, type Msg } from './support/model.js';
import { events } from './support/run.js';

let api: FakeMessagesApi | undefined;
afterAll(async () => {
  await api?.close();
  cleanupTemps();
});

/** The shell's descriptors with where each leads, then writes through the inherited ones. */
const ATTACK = [
  // readlink, not $(…): the shell would hold the substitution's pipe while it runs.
  'for f in /proc/$$/fd/*; do printf "fd %s " "${f##*/}"; readlink "$f" || echo; done',
  'echo pwned > /proc/self/fd/20/escaped.txt; echo "through-dir=$?"',
  'echo pwned >> /proc/self/fd/24; echo "through-file=$?"',
].join('\n');

describe('descriptors the CLI inherits', () => {
  it('reach neither commands nor MCP servers: a host directory left open at 20 leads nowhere, a log at 24 takes nothing; an MCP config named as /dev/fd/30 is still read', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    // On the host, outside anything a command can see (its /tmp is its own).
    const outside = tempDir();
    writeFileSync(join(outside, 'keep.txt'), 'HOST FILE\n');
    const log = join(outside, 'host.log');
    writeFileSync(log, 'host log\n');
    const servers = join(tempDir(), 'servers.json');
    writeFileSync(servers, JSON.stringify({ mcpServers: { files: { command: process.execPath, args: [STDIO_FIXTURE] } } }));

    api = await startFakeMessagesApi({
      brain: (body) => {
        const calls = toolCalls((body.messages ?? []) as Msg[]);
        if (calls.length === 0) return { toolUse: { name: 'execute_command', input: { command: ATTACK } } };
        if (calls.length === 1) {
          return {
            content: [
              { type: 'tool_use', name: 'mcp__files__read_file', input: { path: '/proc/self/fd/20/keep.txt' } },
              { type: 'tool_use', name: 'mcp__files__read_file', input: { path: '/proc/self/fd/30' } },
            ],
          };
        }
        return { text: 'Done.' };
      },
    });
    // Past 15 and a gap, where Node leaves them be.
    const inherit = { 20: openSync(outside, 'r'), 24: openSync(log, 'a'), 30: openSync(servers, 'r') };
    const run = runCli(['-p', 'Look around.', '--output-format', 'stream-json', '--mcp-config', '/dev/fd/30'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url },
      inherit,
    });
    for (const fd of Object.values(inherit)) closeSync(fd);
    const r = await run;
    expect(r.code, r.stderr).toBe(0);

    const messages = (api.requests.at(-1)!.body.messages ?? []) as Msg[];
    const results = toolResults(messages);
    const [command, mcpDir, mcpConfig] = toolCalls(messages).map((c) => results.get(c.id)!);
    // The MCP config came through /dev/fd/30: its server started and answered.
    expect(events(r.stdout).find((e) => e.type === 'mcp_server' && e.state === 'ready')).toMatchObject({ name: 'files' });
    expect(mcpDir.text).not.toContain('HOST FILE');
    expect(mcpConfig.text).not.toContain('mcpServers');

    expect(command.text).toMatch(/through-dir=[1-9]/);
    const fds = [...command.text.matchAll(/^fd (\d+) (.*)$/gm)].map((m) => [Number(m[1]), m[2]] as const);
    expect(fds.map(([fd]) => fd)).toEqual(expect.arrayContaining([0, 1, 2]));
    // Beyond 0-2: 20 and 24 closed, 30 (kept for the CLI) /dev/null, and at most the listing's own
    // directory, gone by the time readlink looks.
    expect(fds.filter(([fd]) => fd > 2)).toEqual(expect.arrayContaining([[30, '/dev/null']]));
    for (const [fd, to] of fds.filter(([n]) => n > 2 && n !== 30)) expect([fd, to]).toEqual([fd, '']);
    expect(readdirSync(outside).sort()).toEqual(['host.log', 'keep.txt']);
    expect(readFileSync(log, 'utf8')).toBe('host log\n');
  });
});
