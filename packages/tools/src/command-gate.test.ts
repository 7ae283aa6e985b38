import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCopyBackend, type Sandbox, type SandboxSession } from '@infinity-code/sandbox';
import { DECLINED_UNCONTAINED, REFUSED_UNCONTAINED, type CommandRequest, type UncontainedPolicy } from './index.js';
import { textOf, ToolAgent } from './test-support/agent.js';
import { Fixtures } from './test-support/fixtures.js';

/** The same sandbox, as a backend that confines its commands would present it. */
function asContained(sb: Sandbox): Sandbox {
  return new Proxy(sb, {
    get(target, prop) {
      if (prop === 'contained') return true;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

// A real sandbox whose commands are not confined (the copy backend forced to its fallback, as on a
// machine without bubblewrap); the contained case is the same sandbox presented as contained.
describe('execute_command where the sandbox cannot confine commands', { timeout: 30_000 }, () => {
  const fx = new Fixtures();
  let session: SandboxSession;
  let sb: Sandbox;
  let repo: string;
  const agents: ToolAgent[] = [];

  beforeAll(async () => {
    repo = await fx.repo({ 'a.txt': 'alpha\n' });
    session = await fx.session(repo, makeCopyBackend({ containment: 'env-marker' }));
    sb = await session.create('gate');
  });
  afterAll(async () => {
    for (const a of agents) await a.close();
    await fx.cleanup();
  });

  const agentWith = (uncontained: UncontainedPolicy | undefined, sandbox: Sandbox = sb) => {
    const agent = new ToolAgent({ sandboxFor: async () => sandbox, repoRoot: repo, uncontained: uncontained });
    agents.push(agent);
    return agent;
  };

  it('the sandbox under test really is uncontained (else these tests prove nothing)', () => {
    expect(sb.contained).toBe(false);
  });

  it('refuses by default: the command never runs, and the model is told why', async () => {
    const refused: CommandRequest[] = [];
    const agent = agentWith({ kind: 'refuse', hint: 'The user can allow them with --unsandboxed.', onRefused: (r) => refused.push(r) });
    const r = await agent.call('execute_command', { command: 'echo ran > ran.txt' });
    expect(r.isError).toBe(true);
    expect(r.text).toBe(`Error: ${REFUSED_UNCONTAINED} The user can allow them with --unsandboxed.`);
    expect(await sb.exists('ran.txt')).toBe(false);
    expect(refused).toEqual([expect.objectContaining({ command: 'echo ran > ran.txt', callId: r.callId })]);

    const plain = agentWith(undefined);
    const r2 = await plain.call('execute_command', { command: 'echo ran > ran.txt' });
    expect(r2.text).toBe(`Error: ${REFUSED_UNCONTAINED}`);
    expect(await sb.exists('ran.txt')).toBe(false);
  });

  it('our own uses of the sandbox (grep, list_files) are not gated', async () => {
    const agent = agentWith({ kind: 'refuse' });
    const grep = await agent.call('grep', { pattern: 'alpha' });
    expect(grep.isError).toBe(false);
    expect(grep.text).toContain('a.txt');
    const list = await agent.call('list_files', {});
    expect(list.isError).toBe(false);
    expect(list.text).toContain('a.txt');
  });

  it('asks before each command: yes runs it, no tells the model the user declined', async () => {
    const asked: CommandRequest[] = [];
    let answer = true;
    const agent = agentWith({
      kind: 'ask',
      ask: async (request) => {
        asked.push(request);
        return answer;
      },
    });
    const yes = await agent.call('execute_command', { command: 'echo approved > approved.txt; cat approved.txt' });
    expect(yes.text).toBe('approved\n[exit code: 0]');
    answer = false;
    const no = await agent.call('execute_command', { command: 'echo declined > declined.txt' });
    expect(no.isError).toBe(true);
    expect(no.text).toBe(`Error: ${DECLINED_UNCONTAINED}`);
    expect(await sb.exists('declined.txt')).toBe(false);
    expect(asked.map((a) => a.command)).toEqual(['echo approved > approved.txt; cat approved.txt', 'echo declined > declined.txt']);
  });

  it('a question still open when the call is cancelled is withdrawn, and the command never runs', async () => {
    let withdrawn!: () => void;
    const gone = new Promise<void>((resolve) => (withdrawn = resolve));
    let asked!: () => void;
    const open = new Promise<void>((resolve) => (asked = resolve));
    const agent = agentWith({
      kind: 'ask',
      ask: (_request, signal) =>
        new Promise<boolean>((resolve) => {
          signal.addEventListener('abort', () => {
            withdrawn();
            resolve(false);
          });
          asked();
        }),
    });
    await agent.system.sendUserText('t-cancel', `CALL ${JSON.stringify({ name: 'execute_command', input: { command: 'echo late > late.txt' }, id: 'toolu_cancel' })}`);
    await open;
    // The user's message interrupts the pending call: the tool is told to cancel it.
    await agent.system.sendUserText('t-cancel', 'never mind');
    await gone;
    await agent.exec.whenIdle();
    await agent.system.whenIdle();
    expect(await sb.exists('late.txt')).toBe(false);
    expect(agent.exec.running()).toEqual([]);
  });

  it('runs without asking when the user allowed it, or when the sandbox confines commands', async () => {
    const allowed = agentWith({ kind: 'allow' });
    expect((await allowed.call('execute_command', { command: 'echo allowed' })).text).toBe('allowed\n[exit code: 0]');
    const never = agentWith({ kind: 'ask', ask: () => Promise.reject(new Error('must not ask')) }, asContained(sb));
    expect((await never.call('execute_command', { command: 'echo contained' })).text).toBe('contained\n[exit code: 0]');
    const refusing = agentWith({ kind: 'refuse' }, asContained(sb));
    const r = await refusing.call('execute_command', { command: 'echo contained' });
    expect(textOf(r.content)).toBe('contained\n[exit code: 0]');
  });
});
