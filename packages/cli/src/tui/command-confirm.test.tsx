import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCopyBackend, openSession, type Sandbox, type SandboxSession } from '@infinity-code/sandbox';
import { codingTools, DECLINED_UNCONTAINED } from '@infinity-code/tools';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CompletionRequest, ScriptedReply } from '@infinity-code/runtime';
import { createCommandApprovals } from './command-approvals.js';
import { lastText, ROOT, startRig, type Rig } from './testing.js';

// A real sandbox whose commands are not confined (the copy backend forced to its fallback, as on a
// machine without bubblewrap: `contained` is false) and the real execute_command tool asking
// through the TUI.
let dir: string;
let session: SandboxSession;
let sb: Sandbox;
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'ic-confirm-')));
  const repo = join(dir, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: repo });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'initial');
  session = await openSession({ repo, stateDir: join(dir, 'state'), backend: makeCopyBackend({ containment: 'env-marker' }) });
  sb = await session.create('root');
});
afterAll(async () => {
  await session.close();
  rmSync(dir, { recursive: true, force: true });
});

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Root runs `command` once, then says what it got back. */
function brainRunning(command: string) {
  return (r: CompletionRequest): ScriptedReply => {
    const calls = r.messages.flatMap((m) => m.content).filter((b) => b.type === 'tool_use').length;
    if (calls === 0) return { toolCall: { name: 'execute_command', input: { command } } };
    return { text: `Got: ${lastText(r).split('\n')[0]}` };
  };
}

async function start(command: string): Promise<Rig> {
  const approvals = createCommandApprovals();
  const { executeCommand } = codingTools({ sandboxFor: async () => sb, uncontained: { kind: 'ask', ask: approvals.ask } });
  rig = await startRig({ brain: brainRunning(command), tools: [executeCommand], approvals });
  return rig;
}

describe('commands where the sandbox cannot confine them: the TUI asks first', () => {
  it('the sandbox under test is uncontained (else nothing here is asked)', () => {
    expect(sb.contained).toBe(false);
  });

  it('y runs the command, and the prompt comes back', async () => {
    const r = await start('echo yes > approved.txt; echo approved-ran');
    await r.submit('run it');
    await r.untilState((s) => s.approvals.length === 1);
    expect(r.frame()).toContain('Run this command? The agent asks.');
    expect(r.frame()).toContain('$ echo yes > approved.txt; echo approved-ran');
    expect(r.frame()).not.toContain('Ask for a change');
    expect(await sb.exists('approved.txt')).toBe(false);
    await r.press('y');
    await r.until((e) => e.type === 'tool-result');
    await r.settle();
    expect(await sb.readText('approved.txt')).toBe('yes\n');
    expect(r.frame()).toContain('Got: approved-ran');
    expect(r.frame()).not.toContain('Run this command?');
    expect(r.frame()).toContain('Ask for a change');
  });

  it('n declines: the command never runs and the agent is told the user declined', async () => {
    const r = await start('echo no > declined.txt');
    await r.submit('run it');
    await r.untilState((s) => s.approvals.length === 1);
    await r.press('n');
    const result = await r.until((e) => e.type === 'tool-result');
    expect(result).toMatchObject({ isError: true });
    await r.settle();
    expect(await sb.exists('declined.txt')).toBe(false);
    expect(r.frame()).toContain(`Got: Error: ${DECLINED_UNCONTAINED.slice(0, 40)}`);
  });

  it('a question whose call ends first (the user sent a message) is taken down unanswered', async () => {
    const r = await start('echo late > late.txt');
    await r.submit('run it');
    await r.untilState((s) => s.approvals.length === 1);
    await r.run(() => r.system.sendUserText(ROOT, 'never mind'));
    await r.untilState((s) => s.approvals.length === 0);
    await r.settle();
    expect(r.frame()).not.toContain('Run this command?');
    expect(await sb.exists('late.txt')).toBe(false);
  });
});
