// The text format's stderr, from a real runtime's events: quiet but for errors, the progress with --verbose.
import { LocalSystem, MemoryStore, ModelError, ScriptedProvider, type AsyncTool, type RuntimeEvent } from '@infinity-code/runtime';
import { describe, expect, it } from 'vitest';
import { newTally, tallyEvent, textPrinter } from './headless.js';

const look: AsyncTool = {
  kind: 'async',
  name: 'look',
  description: 'Looks.',
  input_schema: { type: 'object', properties: {} },
  dispatch(_input, ctx) {
    void ctx.respond({ content: 'saw a tree' });
  },
};

/** The events of two user turns: a reply with a tool call, an early answer, then the final one. */
async function run(): Promise<RuntimeEvent[]> {
  const system = new LocalSystem({
    store: new MemoryStore(),
    model: 'm',
    tools: [look],
    provider: new ScriptedProvider((r) => {
      const last = r.messages.at(-1)?.content[0];
      if (last?.type === 'text' && last.text === 'Look around.') return { text: 'Let me look.', toolCall: { name: 'look', input: {} } };
      if (last?.type === 'tool_result') return { text: 'An early conclusion.' };
      if (last?.type === 'text' && last.text === 'Fail now.') throw new ModelError('invalid_request', 'The model API rejected the request (400: bad).');
      return { text: 'The final answer.' };
    }),
  });
  const events: RuntimeEvent[] = [];
  system.subscribe((e) => events.push(e));
  await system.start();
  await system.sendUserText('root', 'Look around.');
  await system.whenIdle();
  await system.sendUserText('root', 'And then?');
  await system.whenIdle();
  await system.sendUserText('other', 'Fail now.');
  await system.whenIdle();
  await system.close();
  return events;
}

function printed(events: readonly RuntimeEvent[], verbose: boolean): { out: string; err: string } {
  const w = { out: '', err: '' };
  const print = textPrinter({ out: (s) => (w.out += s), err: (s) => (w.err += s) }, 'root', { verbose });
  for (const e of events) print(e);
  return w;
}

describe('headless text output', () => {
  it('without --verbose: stderr has the errors only, and stdout nothing from the printer (the answer comes at the end)', async () => {
    const events = await run();
    const w = printed(events, false);
    expect(w.out).toBe('');
    expect(w.err).toBe('[other] Error: The model API rejected the request (400: bad).\n');
    // What runHeadless writes to stdout: the root's last reply.
    const tally = newTally();
    for (const e of events) tallyEvent(tally, e, 'root');
    expect(tally.answer).toBe('The final answer.');
  });

  it("with --verbose: the progress, and the root's replies that were not its last, in the order they happened", async () => {
    const w = printed(await run(), true);
    expect(w.out).toBe('');
    expect(w.err.split('\n')).toEqual([
      'Let me look.',
      '● look {}',
      '  ⎿ saw a tree',
      'An early conclusion.',
      '[other] Error: The model API rejected the request (400: bad).',
      '',
    ]);
    expect(w.err).not.toContain('The final answer.');
  });
});
