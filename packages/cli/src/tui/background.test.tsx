// Commands in the background, as the TUI shows and stops them: /bg lists them, /stop stops them
// with the model, Esc stops the model first and them when pressed again. Over a real LocalSystem;
// the command is a tool of the test's that runs as a subscription, as execute_command does.
import { afterEach, describe, expect, it } from 'vitest';
import type { AsyncTool, AsyncToolContext, CancelOptions, CompletionRequest } from '@infinity-code/runtime';
import { backgroundReport, stoppedText } from './background-report.js';
import { heldStream, requestText, startRig, type Rig } from './testing.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/**
 * `serve`: answers at once that it goes on in the background (a subscription), prints a line,
 * and runs until cancelled; its end says who stopped it, quietly when the user did (as
 * execute_command's does: see packages/tools command-run.ts).
 */
function server(): AsyncTool & { cancels: Array<CancelOptions | undefined> } {
  const running = new Map<string, AsyncToolContext>();
  const cancels: Array<CancelOptions | undefined> = [];
  return {
    kind: 'async',
    name: 'serve',
    description: 'Start the dev server.',
    input_schema: { type: 'object', properties: {} },
    display: () => '$ npm run dev',
    cancels,
    async dispatch(_input, ctx) {
      running.set(ctx.call.id, ctx);
      ctx.progress('listening on 3000');
      await ctx.respond({ content: 'The server runs in the background.', subscription: true });
    },
    cancel(ctx, how) {
      cancels.push(how);
      const run = running.get(ctx.call.id);
      if (!run) return;
      running.delete(ctx.call.id);
      const end = how?.byUser ? '[stopped by the user]' : '[cancelled]';
      run.progress(end, { final: true });
      void run.emit({ content: end, final: true, associative: true, id: `${ctx.call.id}:final`, ...(how?.byUser && { quiet: true }) });
    },
  };
}

const lastUser = (r: CompletionRequest) => requestText(r.messages.slice(-1));

describe('commands in the background', () => {
  it('/bg lists them; /stop stops them without waking the agent, who reads so with the next message', async () => {
    const tool = server();
    const requests: CompletionRequest[] = [];
    rig = await startRig({
      tools: [tool],
      brain: (r) => {
        requests.push(r);
        if (lastUser(r) === 'start the server') return { toolCall: { name: 'serve', input: {}, id: 'srv' } };
        return { text: requestText(r.messages).includes('[stopped by the user]') ? 'You stopped the server.' : 'The server runs.' };
      },
    });
    await rig.submit('start the server');
    await rig.settle({ ignoreRunningTools: true });
    await rig.untilState((s) => s.background.length === 1);
    expect(rig.frame()).toMatch(/Running in the background \(1\)\n.*\$ npm run dev/);

    await rig.submit('/bg');
    expect(rig.frame()).toMatch(/One command runs in the background:\n\s+\$ npm run dev · main · \d+s · listening on 3000\n\/stop \(or Esc\) stops them\./);

    const asked = requests.length;
    await rig.submit('/stop');
    await rig.untilState((s) => s.background.length === 0);
    expect(tool.cancels).toEqual([{ byUser: true }]);
    expect(rig.frame()).toContain('Stopped the command running in the background: $ npm run dev.');
    expect(rig.frame()).not.toContain('Running in the background');
    await rig.settle();
    expect(requests).toHaveLength(asked);

    await rig.submit('/bg');
    expect(rig.frame()).toContain('Nothing runs in the background.');
    await rig.submit('/stop');
    expect(rig.frame()).toContain('Nothing is running.');

    await rig.submit('what happened?');
    await rig.settle();
    expect(requestText(requests.at(-1)!.messages)).toMatch(/\[stopped by the user\][\s\S]*what happened\?$/);
    expect(rig.frame()).toContain('● You stopped the server.');
  });

  it('Esc stops the model first, then, pressed again, the commands in the background', async () => {
    const tool = server();
    const held = heldStream('Waiting for the ', 'server.');
    rig = await startRig({
      tools: [tool],
      brain: (r) => (lastUser(r) === 'start the server' ? { toolCall: { name: 'serve', input: {}, id: 'srv' } } : { textStream: held.stream }),
    });
    await rig.submit('start the server');
    await rig.untilState((s) => s.background.length === 1 && s.liveText.includes('Waiting'));

    await rig.press('\u001b');
    // The scripted model notices the stop at its next chunk.
    held.release();
    await rig.settle({ ignoreRunningTools: true });
    expect(tool.cancels).toEqual([]);
    // Read as one line: the notice wraps at the terminal's width.
    expect(rig.frame().replace(/\s+/g, ' ')).toContain(
      'Stopped. Send a message to go on. A command still runs in the background: /bg lists, Esc again or /stop stops it.',
    );
    expect(rig.store.getState().background).toHaveLength(1);

    await rig.press('\u001b');
    await rig.untilState((s) => s.background.length === 0);
    expect(tool.cancels).toEqual([{ byUser: true }]);
    expect(rig.frame()).toContain('Stopped the command running in the background: $ npm run dev.');
  });

  it('/help and Tab know /bg', async () => {
    rig = await startRig({ brain: () => ({ text: 'ok' }) });
    await rig.submit('/help');
    expect(rig.frame()).toMatch(/\/bg\s+list the commands running in the background/);
    await rig.press('/b', '\t');
    expect(rig.frame()).toContain('› /bg');
  });
});

describe('what /bg and a stop say', () => {
  const names = { rootThreadId: 'root', threads: [{ id: 'c1', parentId: 'root', kind: 'child' as const, label: 'Fix the parser', depth: 1, working: false }] };
  const now = 1_000_000;

  it('each command with its thread, how long it has run and its last line', () => {
    const report = backgroundReport(
      [
        { callId: 'a', threadId: 'root', display: '$ npm run dev', tail: ['compiled', 'listening on 3000'], startedAt: now - 75_000 },
        { callId: 'b', threadId: 'c1', display: '$ pytest -x', tail: [], startedAt: now - 4_200 },
      ],
      names,
      now,
    );
    expect(report).toBe(
      [
        '2 commands run in the background:',
        '  $ npm run dev · main · 1m 15s · listening on 3000',
        '  $ pytest -x · Fix the parser · 4s · no output yet',
        '/stop (or Esc) stops them.',
      ].join('\n'),
    );
  });

  it('what was stopped, and what still runs', () => {
    const cmd = { callId: 'a', threadId: 'root', display: '$ npm run dev', tail: [] };
    expect(stoppedText({ model: true, commands: [], leftRunning: 0 })).toBe('Stopped. Send a message to go on.');
    expect(stoppedText({ model: true, commands: [cmd, { ...cmd, callId: 'b', display: '$ make watch' }], leftRunning: 0 })).toBe(
      'Stopped, and 2 commands running in the background ($ npm run dev, $ make watch). Send a message to go on.',
    );
    expect(stoppedText({ model: true, commands: [], leftRunning: 2 })).toBe(
      'Stopped. Send a message to go on. 2 commands still run in the background: /bg lists, Esc again or /stop stops them.',
    );
  });
});
