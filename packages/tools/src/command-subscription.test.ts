import { afterAll, describe, expect, it } from 'vitest';
import { INJECTED_TOOL_NAME, type CompletionRequest, type RuntimeEvent, type ScriptedReply } from '@infinity-code/runtime';
import type { ExecProcess } from '@infinity-code/sandbox';
import { RESTARTED_MESSAGE } from './index.js';
import { textOf, ToolAgent } from './test-support/agent.js';
import { backendsUnderTest, Fixtures, groupEnded, groupMembers, watchExec } from './test-support/fixtures.js';

const backends = await backendsUnderTest();

/** What the model just received: a tool result for `id`, an injected event for `original`, or user text. */
function lastInput(r: CompletionRequest): { kind: 'user' } | { kind: 'result'; id: string } | { kind: 'event'; original: string } {
  const msgs = r.messages;
  const last = msgs[msgs.length - 1];
  const result = last.content.find((b) => b.type === 'tool_result');
  if (!result || result.type !== 'tool_result') return { kind: 'user' };
  const call = msgs[msgs.length - 2].content.find((b) => b.type === 'tool_use' && b.id === result.tool_use_id);
  if (call?.type === 'tool_use' && call.name === INJECTED_TOOL_NAME) {
    return { kind: 'event', original: String(call.input.original_tool_call_id) };
  }
  return { kind: 'result', id: result.tool_use_id };
}

const isResult = (id: string) => (e: RuntimeEvent): e is Extract<RuntimeEvent, { type: 'tool-result' }> =>
  e.type === 'tool-result' && e.toolUseId === id;

describe('execute_command as a subscription', { timeout: 45_000 }, () => {
  const fx = new Fixtures();
  afterAll(() => fx.cleanup());

  /** An agent on a fresh repo; `started` resolves with the first command's process once it printed. */
  async function setup(backend: (typeof backends)[number], brain: (r: CompletionRequest) => ScriptedReply, extra = {}) {
    const repo = await fx.repo({ 'notes.txt': 'some notes\n' });
    const session = await fx.session(repo, backend);
    let report: (proc: ExecProcess) => void = () => undefined;
    const started = new Promise<ExecProcess>((resolve) => (report = resolve));
    const sb = watchExec(await session.create('main'), (proc) => proc.stdout.once('data', () => report(proc)));
    const agent = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo, brain, ...extra });
    return Object.assign(agent, { started, sb });
  }

  it(`keeps a long command's output in quiet batches while the thread keeps working, and wakes it once at the end (${backends[0]} backend)`, async () => {
    const ticks = 16;
    const agent = await setup(
      backends[0],
      (r) => {
        const input = lastInput(r);
        if (input.kind === 'user') {
          const command = `for i in $(seq 1 ${ticks}); do echo "tick $i"; sleep 0.5; done`;
          return { toolCall: { name: 'execute_command', input: { command }, id: 'cmd' } };
        }
        if (input.kind === 'result' && input.id === 'cmd') return { toolCall: { name: 'read_file', input: { path: 'notes.txt' }, id: 'read' } };
        if (input.kind === 'result') return { text: 'Read the notes; waiting for the command.' };
        return { text: 'Noted the output.' };
      },
      // A shorter wait than the default 2 minutes, so the 8 s command goes on in the background.
      { commandTimeouts: { waitMs: 1_500, batchMs: 2_000 } },
    );
    try {
      let commandRunningAtRead: string | undefined;
      const readDone = agent.waitFor((e) => {
        if (!isResult('read')(e)) return false;
        commandRunningAtRead = agent.exec.running().find((c) => c.callId === 'cmd')?.phase;
        return true;
      });
      await agent.system.sendUserText('main', 'Run the ticker.');

      const started = await agent.waitFor(isResult('cmd'));
      expect(started.isError).toBe(false);
      expect(textOf(started.content)).toMatch(/^The command is still running after 1\.5 s; it goes on in the background \(subscription id: cmd\)\. You will be woken when it exits/);
      expect(started.display).toMatchObject({ summary: 'running in the background' });
      // The thread keeps working: another tool call completes while the command runs.
      await readDone;
      expect(commandRunningAtRead).toBe('streaming');
      const threadNow = await agent.store.loadThread('main');
      expect(threadNow!.record.subscriptions.map((s) => s.callId)).toEqual(['cmd']);
      expect(textOf(agent.answer('read').content)).toContain('some notes');

      await agent.exec.whenIdle();
      await agent.system.whenIdle();
      const injected = agent.events.filter(
        (e): e is Extract<RuntimeEvent, { type: 'event-injected' }> => e.type === 'event-injected' && e.originalCallId === 'cmd',
      );
      const texts = injected.map((e) => textOf(e.content));
      // The output batches woke nobody: they came in with the read's result (which woke the
      // thread anyway) or with the exit, one injected call per wake.
      expect(injected.length).toBeGreaterThanOrEqual(1);
      expect(injected.length).toBeLessThanOrEqual(2);
      const requests = agent.events.filter((e) => e.type === 'completion-started').length;
      // The call, the read, the answer to the read, the answer to the exit.
      expect(requests).toBe(4);
      expect(texts.at(-1)).toMatch(/\[exit code: 0\]$/);
      expect(injected.at(-1)!.display).toMatchObject({ summary: 'exit code 0' });
      expect(texts.slice(0, -1).every((t) => !t.includes('[exit code'))).toBe(true);
      // Every line arrives exactly once, in order, across the result and the events.
      const all = [textOf(started.content).split('Output so far:\n')[1], ...texts].join('\n');
      expect(all.match(/tick \d+/g)).toEqual(Array.from({ length: ticks }, (_, i) => `tick ${i + 1}`));

      // The UI's live tail saw every line as it came, from the first one (inside the inline
      // window, before the result said the command went on in the background).
      const progress = agent.events.filter(
        (e): e is Extract<RuntimeEvent, { type: 'tool-progress' }> => e.type === 'tool-progress' && e.callId === 'cmd',
      );
      const lines = progress.filter((e) => !e.final).flatMap((e) => e.text.split('\n'));
      expect(lines).toEqual(Array.from({ length: ticks }, (_, i) => `tick ${i + 1}`));
      expect(agent.events.indexOf(progress[0])).toBeLessThan(agent.events.indexOf(started));
      // The last one says the command is over, with its status.
      expect(progress.at(-1)).toMatchObject({ final: true, text: '[exit code: 0]' });
      expect(progress.filter((e) => e.final)).toHaveLength(1);

      // The events are in the thread's own history as injected calls on the original call.
      const thread = await agent.store.loadThread('main');
      const injectedCalls = thread!.history.flatMap((m) => m.content).filter((b) => b.type === 'tool_use' && b.name === INJECTED_TOOL_NAME);
      expect(injectedCalls).toHaveLength(injected.length);
      expect(injectedCalls[0]).toMatchObject({ input: { original_tool_name: 'execute_command', original_tool_call_id: 'cmd', original_args: { command: expect.stringContaining('tick') } } });
      // The final event ended the subscription, and nothing of the call is left in the tool.
      expect(thread!.record.subscriptions).toEqual([]);
      expect(agent.exec.running()).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  describe.each(backends)('cancelling (%s backend)', (backend) => {
    // Children in the background and a grandchild in a subshell: all must go with the group.
    const command = 'sleep 300 & (sleep 300 & wait) & echo started; wait';

    it('cancel_subscription kills the process group and sends a final [cancelled] event', async () => {
      const agent = await setup(
        backend,
        (r) => {
          const input = lastInput(r);
          if (input.kind === 'user') return { toolCall: { name: 'execute_command', input: { command }, id: 'long' } };
          if (input.kind === 'result' && input.id === 'long') {
            return { toolCall: { name: 'cancel_subscription', input: { tool_call_id: 'long' }, id: 'stop' } };
          }
          return { text: 'Stopped it.' };
        },
        { commandTimeouts: { waitMs: 300 } },
      );
      try {
        await agent.system.sendUserText('main', 'Start the server, then stop it.');
        const proc = await agent.started;
        const started = await agent.waitFor(isResult('long'));
        expect(textOf(started.content)).toContain('Output so far:\nstarted');
        expect(agent.exec.running()).toMatchObject([{ callId: 'long', pid: proc.pid, phase: expect.any(String) }]);
        await agent.exec.whenIdle();
        await agent.system.whenIdle();
        expect(textOf(agent.answer('stop').content)).toBe("Subscription 'long' cancelled successfully.");
        expect(await proc.done).toMatchObject({ cancelled: true });
        expect(await groupEnded(proc.pid), JSON.stringify(groupMembers(proc.pid))).toBe(true);
        expect(agent.exec.running()).toEqual([]);
        // The final [cancelled] event was sent; the runtime had already ended the subscription
        // (cancel_subscription is synchronous), so it drops the event as inactive.
        const dropped = agent.events.find((e) => e.type === 'input-dropped' && e.inputId === 'long:final');
        expect(dropped).toMatchObject({ reason: 'inactive' });
      } finally {
        await agent.close();
      }
    });

    it('the user stopping it from the UI kills the group without waking the thread; the thread reads so with its next input', async () => {
      const requests: CompletionRequest[] = [];
      const agent = await setup(backend, (r) => {
        requests.push(r);
        const input = lastInput(r);
        if (input.kind === 'user' && r.messages.length === 1) {
          return { toolCall: { name: 'execute_command', input: { command, run_in_background: true }, id: 'bg' } };
        }
        return { text: input.kind === 'user' ? 'Understood.' : 'It runs.' };
      });
      try {
        await agent.system.sendUserText('main', 'Start the server.');
        const proc = await agent.started;
        await agent.waitFor(isResult('bg'));
        await agent.system.whenIdle({ ignoreRunningTools: true });
        const asked = requests.length;
        expect(await agent.system.stopSubscription('main', 'bg')).toBe(true);
        await agent.exec.whenIdle();
        await agent.system.whenIdle();
        expect(await proc.done).toMatchObject({ cancelled: true });
        expect(await groupEnded(proc.pid), JSON.stringify(groupMembers(proc.pid))).toBe(true);
        // Over, as far as the UI goes; the model was not asked anything more.
        expect(agent.events.filter((e) => e.type === 'tool-progress' && e.callId === 'bg' && e.final)).toMatchObject([{ text: '[stopped by the user]' }]);
        expect(requests).toHaveLength(asked);
        expect(await agent.system.stopSubscription('main', 'nothing-such')).toBe(false);

        await agent.system.sendUserText('main', 'Why did it stop?');
        await agent.system.whenIdle();
        const last = requests.at(-1)!;
        const sent = last.messages.map((m) => m.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? textOf(b.content) : '')).join('')).join('\n');
        expect(sent).toMatch(/\[stopped by the user\][\s\S]*Why did it stop\?$/);
        expect((await agent.store.loadThread('main'))!.record.subscriptions).toEqual([]);
      } finally {
        await agent.close();
      }
    });

    it('a user writing during the wait moves the command to the background: it is not killed, and its end still wakes the thread', async () => {
      // Ends once the test lets it (a file in its sandbox): after the user's message moved it.
      const finishing = 'echo started; while [ ! -e go ]; do sleep 0.05; done; echo done';
      const agent = await setup(backend, (r) =>
        lastInput(r).kind === 'user' && r.messages.length === 1
          ? { toolCall: { name: 'execute_command', input: { command: finishing }, id: 'slow' } }
          : { text: 'ok' },
      );
      try {
        await agent.system.sendUserText('main', 'Start it.');
        // Running, and the call still waits for it (2 minutes by default): the user writes.
        const proc = await agent.started;
        expect(agent.exec.running()).toMatchObject([{ callId: 'slow', phase: 'fast', pid: proc.pid }]);
        await agent.system.sendUserText('main', 'Meanwhile, look at the docs.');
        const moved = await agent.waitFor(isResult('slow'));
        expect(moved.subscription).toBe(true);
        expect(agent.exec.running()).toMatchObject([{ callId: 'slow', phase: 'streaming' }]);
        await agent.sb.writeFile('go', '');
        await agent.exec.whenIdle();
        await agent.system.whenIdle();
        expect(await proc.done).toMatchObject({ exitCode: 0 });
        expect(agent.events.some((e) => e.type === 'tool-interrupted' && e.callId === 'slow')).toBe(false);
        const thread = await agent.store.loadThread('main');
        const all = JSON.stringify(thread!.history);
        expect(all).toContain('it goes on in the background (subscription id: slow)');
        const final = agent.events.find((e): e is Extract<RuntimeEvent, { type: 'event-injected' }> => e.type === 'event-injected' && e.originalCallId === 'slow' && e.final === true);
        expect(textOf(final!.content)).toMatch(/done\n\[exit code: 0\]$/);
        expect(thread!.record.subscriptions).toEqual([]);
      } finally {
        await agent.close();
      }
    });
  });

  it('run_in_background answers at once; the exit wakes the thread once, with the output since', async () => {
    const agent = await setup(backends[0], (r) => {
      const input = lastInput(r);
      if (input.kind === 'user') {
        return { toolCall: { name: 'execute_command', input: { command: 'echo started; while [ ! -e go ]; do sleep 0.05; done; echo built', run_in_background: true }, id: 'bg' } };
      }
      return { text: 'ok' };
    });
    try {
      await agent.system.sendUserText('main', 'Build in the background.');
      const started = await agent.waitFor(isResult('bg'));
      expect(textOf(started.content)).toMatch(/^The command runs in the background \(subscription id: bg\)\. You will be woken when it exits/);
      await agent.started;
      await agent.system.whenIdle({ ignoreRunningTools: true });
      const before = agent.events.filter((e) => e.type === 'completion-started').length;
      await agent.sb.writeFile('go', '');
      await agent.exec.whenIdle();
      await agent.system.whenIdle();
      expect(agent.events.filter((e) => e.type === 'completion-started').length).toBe(before + 1);
      const injected = agent.events.filter((e): e is Extract<RuntimeEvent, { type: 'event-injected' }> => e.type === 'event-injected' && e.originalCallId === 'bg');
      expect(injected).toHaveLength(1);
      expect(textOf(injected[0].content)).toMatch(/built\n\[exit code: 0\]$/);
    } finally {
      await agent.close();
    }
  });

  it('notify_on ends the wait at a matching line, and wakes the thread again on a later match while the command runs on', async () => {
    // A server: says it is ready, later reports an error, then waits to be stopped.
    const command = 'echo booting; echo "listening on 4000"; while [ ! -e fail ]; do sleep 0.05; done; echo "ERROR: lost the database"; sleep 300';
    const agent = await setup(backends[0], (r) => {
      const input = lastInput(r);
      if (input.kind === 'user') return { toolCall: { name: 'execute_command', input: { command, notify_on: 'listening on|ERROR' }, id: 'srv' } };
      if (input.kind === 'event') return { toolCall: { name: 'cancel_subscription', input: { tool_call_id: 'srv' }, id: 'stop' } };
      return { text: 'ok' };
    }, { commandTimeouts: { waitMs: 60_000 } });
    try {
      await agent.system.sendUserText('main', 'Start the server.');
      const ready = await agent.waitFor(isResult('srv'));
      // Long before the 60 s wait: the matching line ended it.
      expect(textOf(ready.content)).toMatch(/^A line of output matched notify_on: listening on 4000\nThe command goes on in the background/);
      expect(ready.subscription).toBe(true);
      await agent.system.whenIdle({ ignoreRunningTools: true });
      await agent.sb.writeFile('fail', '');
      const woken = await agent.waitFor((e): e is Extract<RuntimeEvent, { type: 'event-injected' }> => e.type === 'event-injected' && e.originalCallId === 'srv');
      expect(textOf(woken.content)).toContain('ERROR: lost the database');
      expect(textOf(woken.content)).toContain('[woken: a line matched notify_on: ERROR: lost the database; the command goes on]');
      expect(woken.final).toBeUndefined();
      // The model stopped it when woken.
      await agent.exec.whenIdle();
      await agent.system.whenIdle();
      expect(agent.exec.running()).toEqual([]);
      expect((await agent.store.loadThread('main'))!.record.subscriptions).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it('a host shutdown (the tools\' signal) kills running commands and ends their subscriptions', async () => {
    const shutdown = new AbortController();
    const agent = await setup(backends[0], serverBrain, { commandTimeouts: { waitMs: 200 }, signal: shutdown.signal });
    try {
      await agent.system.sendUserText('main', 'Start a server.');
      const proc = await agent.started;
      await agent.waitFor(isResult('srv'));
      await agent.system.whenIdle();
      shutdown.abort();
      await agent.exec.whenIdle();
      await agent.system.whenIdle();
      expect(await groupEnded(proc.pid), JSON.stringify(groupMembers(proc.pid))).toBe(true);
      const final = agent.events.find((e) => e.type === 'event-injected' && e.originalCallId === 'srv');
      expect(final?.type === 'event-injected' && textOf(final.content)).toBe('[cancelled]');
      expect((await agent.store.loadThread('main'))!.record.subscriptions).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  describe('the time limit of a command', () => {
    // Children in the background and a grandchild: the whole group goes at the limit.
    const command = 'sleep 300 & (sleep 300 & wait) & echo started; wait';
    const help = 'Raise sandbox.commandTimeoutMs.';

    it('a command still running in the background at the limit is killed, and its final event says so', async () => {
      const agent = await setup(
        backends[0],
        (r) => (lastInput(r).kind === 'user' ? { toolCall: { name: 'execute_command', input: { command }, id: 'bg' } } : { text: 'ok' }),
        { commandTimeouts: { waitMs: 200, maxRunMs: 1_500 }, timeLimitHelp: help },
      );
      try {
        await agent.system.sendUserText('main', 'Start it.');
        const proc = await agent.started;
        expect(textOf((await agent.waitFor(isResult('bg'))).content)).toMatch(/^The command is still running after 0\.2 s/);
        const final = await agent.waitFor(
          (e): e is Extract<RuntimeEvent, { type: 'event-injected' }> => e.type === 'event-injected' && e.originalCallId === 'bg',
        );
        expect(textOf(final.content)).toBe(`[stopped after 1.5 s, at the time limit for a command. ${help}]`);
        expect(await proc.done).toMatchObject({ cancelled: true });
        expect(await groupEnded(proc.pid), JSON.stringify(groupMembers(proc.pid))).toBe(true);
        await agent.exec.whenIdle();
        await agent.system.whenIdle();
        expect((await agent.store.loadThread('main'))!.record.subscriptions).toEqual([]);
        expect(agent.exec.running()).toEqual([]);
      } finally {
        await agent.close();
      }
    });

    it('a limit inside the inline window: the result is an error saying it was stopped', async () => {
      const agent = await setup(
        backends[0],
        (r) => (lastInput(r).kind === 'user' ? { toolCall: { name: 'execute_command', input: { command }, id: 'fg' } } : { text: 'ok' }),
        { commandTimeouts: { waitMs: 5_000, maxRunMs: 500 } },
      );
      try {
        await agent.system.sendUserText('main', 'Start it.');
        const proc = await agent.started;
        const result = await agent.waitFor(isResult('fg'));
        expect(result.isError).toBe(true);
        expect(textOf(result.content)).toMatch(/^started\n\[stopped after 0\.5 s, at the time limit for a command\. .*ask the user to raise the limit\.\]$/);
        expect(await groupEnded(proc.pid), JSON.stringify(groupMembers(proc.pid))).toBe(true);
        await agent.exec.whenIdle();
        expect(agent.exec.running()).toEqual([]);
      } finally {
        await agent.close();
      }
    });
  });

  it('after a crash and restart, a subscription whose command was lost gets a final event', async () => {
    const dbDir = await fx.tempDir('ic-tools-db-');
    const killCrashed = new AbortController();
    const crashed = await setup(backends[0], serverBrain, {
      sqlitePath: `${dbDir}/state.db`,
      commandTimeouts: { waitMs: 200 },
      signal: killCrashed.signal,
    });
    await crashed.system.sendUserText('main', 'Start a server.');
    const proc = await crashed.started;
    await crashed.waitFor(isResult('srv'));
    await crashed.system.whenIdle();
    // The system stops without its tools being told (as in a crash): the subscription stays open.
    await crashed.close();

    const restarted = await setup(backends[0], serverBrain, { sqlitePath: `${dbDir}/state.db` });
    try {
      await restarted.system.start();
      await restarted.system.whenIdle();
      const final = restarted.events.find((e) => e.type === 'event-injected' && e.originalCallId === 'srv');
      expect(final?.type === 'event-injected' && textOf(final.content)).toBe(RESTARTED_MESSAGE);
      expect((await restarted.store.loadThread('main'))!.record.subscriptions).toEqual([]);
    } finally {
      await restarted.close();
      // What a crash would have taken down with it.
      killCrashed.abort();
      await crashed.exec.whenIdle();
      expect(await groupEnded(proc.pid)).toBe(true);
    }
  });
});

function serverBrain(r: CompletionRequest): ScriptedReply {
  return lastInput(r).kind === 'user'
    ? { toolCall: { name: 'execute_command', input: { command: 'echo serving; sleep 300' }, id: 'srv' } }
    : { text: 'ok' };
}
