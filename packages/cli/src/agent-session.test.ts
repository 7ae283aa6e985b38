// One session bootstrap for both front ends, and the session object owning the current root:
// `/new` gives the new session its own sandboxes, its diff holds only its changes, and -c after
// it resumes it with them. Real git repositories, real sandboxes, real SQLite; a scripted model.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STDIO_FIXTURE } from '@infinity-code/mcp/testing';
import { ScriptedProvider, type CompletionRequest } from '@infinity-code/runtime';
import { listSessions } from '@infinity-code/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentSession } from './agent-session.js';
import { basePrompt } from './instructions.js';
import { autoAcceptReviewer } from './review.js';
import { setUpSession, type SessionRequest } from './session-setup.js';

const dirs: string[] = [];
const open: AgentSession[] = [];
afterEach(async () => {
  for (const a of open.splice(0)) await a.close({ keep: true }).catch(() => {});
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

/** "write x" creates x.txt; "mcp x" has the MCP server "files" write it; anything else is answered in words. */
function brain(r: CompletionRequest) {
  const last = r.messages.at(-1)!.content[0];
  const asked = last.type === 'text' ? /^write (\w+)$/.exec(last.text) : null;
  if (asked) return { toolCall: { name: 'create_file', input: { path: `${asked[1]}.txt`, content: `${asked[1]}\n` } } };
  const put = last.type === 'text' ? /^put ([\w/]+)$/.exec(last.text) : null;
  if (put) return { toolCall: { name: 'create_file', input: { path: `${put[1]}.txt`, content: 'x\n' } } };
  const viaMcp = last.type === 'text' ? /^mcp (\w+)$/.exec(last.text) : null;
  if (viaMcp) return { toolCall: { name: 'mcp__files__write_file', input: { path: `${viaMcp[1]}.txt`, text: `${viaMcp[1]}\n` } } };
  return { text: 'Done.' };
}

function project(userConfig?: object) {
  const repo = temp('ic-session-');
  git(repo, 'init', '-q');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'empty');
  // A home of its own: no user config is read unless given; sandboxes are stored apart.
  const env = { HOME: temp('ic-session-home-') };
  if (userConfig) {
    mkdirSync(join(env.HOME, '.config', 'infinity-code'), { recursive: true });
    writeFileSync(join(env.HOME, '.config', 'infinity-code', 'config.json'), JSON.stringify(userConfig));
  }
  const stateDir = temp('ic-session-state-');
  const request = (more: Partial<SessionRequest> = {}): SessionRequest => ({
    cwd: repo,
    env,
    title: 'interactive session',
    provider: new ScriptedProvider(brain),
    ...more,
  });
  const openAgent = async (more: Partial<SessionRequest> = {}, opts: { sandboxesAfterFirstRequest?: boolean } = {}) => {
    const agent = await AgentSession.open(setUpSession(request(more)), { reviewer: autoAcceptReviewer, sandboxStateDir: stateDir, ...opts });
    open.push(agent);
    return agent;
  };
  return { repo, stateDir, openAgent };
}

async function ask(agent: AgentSession, threadId: string, text: string): Promise<void> {
  await agent.system.sendUserText(threadId, text);
  expect(await agent.system.whenQuiescent()).toEqual({ kind: 'quiescent' });
}

const changed = async (agent: AgentSession) => (await agent.rootDiff()).files.map((f) => f.path).sort();

describe('AgentSession', () => {
  it('/new: the new session diffs only its own changes, and the earlier one keeps working in its sandboxes', async () => {
    const { openAgent } = project();
    const agent = await openAgent();
    const first = agent.rootId;
    await ask(agent, first, 'write a');
    expect(await changed(agent)).toEqual(['a.txt']);

    const second = await agent.newSession('interactive session');
    expect(second).not.toBe(first);
    expect(agent.rootId).toBe(second);
    expect(await changed(agent)).toEqual([]);
    await ask(agent, second, 'write b');
    expect(await changed(agent)).toEqual(['b.txt']);

    // The earlier session's thread still edits its own sandbox, not the new session's.
    await ask(agent, first, 'write c');
    expect(await changed(agent)).toEqual(['b.txt']);
    await agent.close({ keep: true });

    const back = await openAgent({ resume: first });
    expect(back.rootId).toBe(first);
    expect(await changed(back)).toEqual(['a.txt', 'c.txt']);
  });

  it('-c after /new resumes the new session with its sandboxes', async () => {
    const { openAgent } = project();
    const agent = await openAgent();
    await ask(agent, agent.rootId, 'write a');
    const second = await agent.newSession('interactive session');
    await ask(agent, second, 'write b');
    await agent.close({ keep: true });

    const continued = await openAgent({ continueLatest: true });
    expect(continued.rootId).toBe(second);
    expect(await changed(continued)).toEqual(['b.txt']);
    // Its transcript is the new session's.
    expect((await continued.history()).map((m) => m.content[0])).toContainEqual({ type: 'text', text: 'write b' });
  });

  it("shows a thread a subdirectory's instructions with its first call there, once, outside the system prompt", async () => {
    const { repo, openAgent } = project();
    mkdirSync(join(repo, 'src', 'api'), { recursive: true });
    writeFileSync(join(repo, 'AGENTS.md'), 'ROOT RULES\n');
    writeFileSync(join(repo, 'src', 'api', 'AGENTS.md'), 'API RULES\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'instructions');
    const agent = await openAgent();
    await ask(agent, agent.rootId, 'put src/api/one');
    await ask(agent, agent.rootId, 'put src/api/two');
    const results = (await agent.history())
      .flatMap((m) => m.content)
      .flatMap((b) => (b.type === 'tool_result' ? [b.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')] : []));
    expect(results).toHaveLength(2);
    expect(results[0]).toContain('<instructions from="src/api/AGENTS.md" applies-to="src/api/">\nAPI RULES\n</instructions>');
    expect(results[1]).not.toContain('API RULES');
    expect(results.join('')).not.toContain('ROOT RULES');
  });

  it('/new takes a fresh snapshot: what the earlier session applied to the working tree is in the new base', async () => {
    const { repo, openAgent } = project();
    const agent = await openAgent();
    await ask(agent, agent.rootId, 'write a');
    await agent.applyToWorkingTree(await agent.rootDiff());
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    await agent.newSession('interactive session');
    // Not offered again, and not taken for the user's own edits.
    expect(await changed(agent)).toEqual([]);
    expect(await agent.changedSinceBase()).toEqual([]);
  });
});

describe('AgentSession opening its sandboxes after the first request (headless)', () => {
  it("opens no sandbox session while the first completion runs; the reply's tool call opens it and works", async () => {
    const { stateDir, openAgent } = project();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const askedOnce = new Promise<void>((resolve) => (asked = resolve));
    let first = true;
    const provider = new ScriptedProvider(async (r) => {
      if (first) {
        first = false;
        asked();
        await held;
      }
      return brain(r);
    });
    const agent = await openAgent({ provider }, { sandboxesAfterFirstRequest: true });
    await agent.system.sendUserText(agent.rootId, 'write early');
    await askedOnce;
    // The model has the task; nothing of the sandboxes has started (no snapshot, no session).
    expect(await listSessions({ stateDir })).toEqual([]);
    release();
    expect(await agent.system.whenQuiescent()).toEqual({ kind: 'quiescent' });
    expect(await changed(agent)).toEqual(['early.txt']);
    expect(await listSessions({ stateDir })).toHaveLength(1);
  });
});

describe('AgentSession with an MCP server', () => {
  it("a stdio server writes in the current root's sandbox: /new moves it to the new session's, and /refresh works with it running", async () => {
    const { repo, openAgent } = project({ mcpServers: { files: { command: process.execPath, args: [STDIO_FIXTURE] } } });
    const agent = await openAgent();
    const first = agent.rootId;
    await agent.mcp!.settled();
    await ask(agent, first, 'mcp a');
    expect(await changed(agent)).toEqual(['a.txt']);

    await agent.newSession('interactive session');
    await agent.mcp!.settled();
    await ask(agent, agent.rootId, 'mcp b');
    // In the new session's sandbox, not the first's.
    expect(await changed(agent)).toEqual(['b.txt']);
    expect(agent.mcp!.status()[0]).toMatchObject({ state: 'ready', restarts: 0 });

    // The refresh waits for the sandbox's processes: the server is stopped for it, then back.
    writeFileSync(join(repo, 'user.txt'), 'mine\n');
    await agent.refreshBase();
    await agent.mcp!.settled();
    await ask(agent, agent.rootId, 'mcp c');
    expect(await changed(agent)).toEqual(['b.txt', 'c.txt']);
  });
});

describe('AgentSession: model and effort', () => {
  it('sends the model and effort chosen at setup (an alias resolved), and /model and /effort from the next completion on', async () => {
    const seen: Array<{ model: string; effort?: string }> = [];
    const { openAgent } = project({ model: 'opus', effort: 'low' });
    const agent = await openAgent({ provider: new ScriptedProvider((r) => (seen.push({ model: r.model, effort: r.effort }), { text: 'Done.' })) });
    expect([agent.model, agent.effort]).toEqual(['claude-opus-5-5', 'low']);
    await ask(agent, agent.rootId, 'one');
    agent.setModel('claude-fable-5-2');
    agent.setEffort('max');
    await ask(agent, agent.rootId, 'two');
    // Unset: nothing is sent, the model's own default applies.
    agent.setEffort(undefined);
    await ask(agent, agent.rootId, 'three');
    expect(seen).toEqual([
      { model: 'claude-opus-5-5', effort: 'low' },
      { model: 'claude-fable-5-2', effort: 'max' },
      { model: 'claude-fable-5-2' },
    ]);
  });
});

describe('setUpSession', () => {
  it('reads INFINITY_CODE_RETRY for every front end, and refuses a bad one before anything opens', () => {
    const repo = temp('ic-setup-');
    git(repo, 'init', '-q');
    const env = { HOME: temp('ic-setup-home-'), INFINITY_CODE_RETRY: '{"maxRetries": 0, "baseDelayMs": 5}' };
    const provider = new ScriptedProvider(brain);
    expect(setUpSession({ cwd: repo, env, title: 't', provider }).retry).toEqual({ maxRetries: 0, baseDelayMs: 5 });
    expect(() => setUpSession({ cwd: repo, env: { ...env, INFINITY_CODE_RETRY: 'soon' }, title: 't', provider })).toThrow(/INFINITY_CODE_RETRY is not valid JSON/);
  });

  it("keeps a session's project instructions as it first read them: an edited AGENTS.md applies to new sessions, not to -c", () => {
    const repo = temp('ic-setup-');
    git(repo, 'init', '-q');
    const env = { HOME: temp('ic-setup-home-') };
    const provider = new ScriptedProvider(brain);
    writeFileSync(join(repo, 'AGENTS.md'), 'Use tabs.\n');
    const first = setUpSession({ cwd: repo, env, title: 't', provider });
    expect(first.instructions.project).toEqual({ files: [{ file: 'AGENTS.md', text: 'Use tabs.' }] });
    writeFileSync(join(repo, 'AGENTS.md'), 'Use spaces.\n');
    // The session under way: its system prompt (to which its thinking is bound) stays the same.
    const resumed = setUpSession({ cwd: repo, env, title: 't', provider, continueLatest: true });
    expect(resumed.session.id).toBe(first.session.id);
    expect(basePrompt(repo, resumed.instructions.project)).toBe(basePrompt(repo, first.instructions.project));
    expect(basePrompt(repo, resumed.instructions.project)).toContain('Use tabs.');
    // A new session reads the file as it is now.
    const fresh = setUpSession({ cwd: repo, env, title: 't2', provider });
    expect(fresh.instructions.project?.files.map((f) => f.text)).toEqual(['Use spaces.']);
    // A project without instructions is kept as such too.
    rmSync(join(repo, 'AGENTS.md'));
    const none = setUpSession({ cwd: repo, env, title: 't3', provider });
    writeFileSync(join(repo, 'AGENTS.md'), 'Added later.\n');
    expect(setUpSession({ cwd: repo, env, title: 't', provider, resume: none.session.id }).instructions.project).toBeUndefined();
  });
});
