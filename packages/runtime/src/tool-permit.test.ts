// A host's say over tools (SystemOptions.withhold and .permit): withheld tools are never offered
// nor run, built-ins included; a call the permit denies is answered with its reason instead of
// running, the model reads that and goes on, and observers hear of it as `tool-denied`.
import { describe, expect, it } from 'vitest';
import { userText } from './input.js';
import type { CompletionRequest } from './provider.js';
import { LocalSystem } from './local-system.js';
import { MemoryStore } from './memory-store.js';
import { ScriptedProvider, type ScriptedReply } from './scripted-provider.js';
import { lastText, makeHarness, threadOf, type Mode, type StoreKind } from './test-support/harness.js';
import { echoTool } from './test-support/tools.js';
import type { AsyncTool } from './tool.js';

const combos: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

const lastIsToolResult = (r: CompletionRequest) => r.messages.at(-1)!.content.some((c) => c.type === 'tool_result');

/** An async tool that changes things (as far as the test knows): records each run. */
function writeTool(runs: string[]): AsyncTool {
  return {
    kind: 'async',
    name: 'write_thing',
    description: 'Write something.',
    input_schema: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'], additionalProperties: false },
    display: (input) => `Write ${String(input.what)}`,
    dispatch(input, ctx) {
      runs.push(String(input.what));
      setImmediate(() => void ctx.respond({ content: `wrote ${String(input.what)}` }));
    },
  };
}

describe.each(combos)('tool permissions in %s mode with the %s store', (mode, storeKind) => {
  it('a denied call does not run: the model gets the reason as an error result, observers a tool-denied event', async () => {
    const runs: string[] = [];
    const echo = echoTool();
    const requests: CompletionRequest[] = [];
    const asked: Array<{ threadId: string; name: string; input: unknown }> = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      requests.push(r);
      if (lastIsToolResult(r)) return { text: 'Understood, I will not do that.' };
      const stack = threadOf(r).stack;
      return {
        toolCalls: [
          { id: 'toolu_write', name: 'write_thing', input: { what: 'secret' } },
          { id: 'toolu_echo', name: 'echo', input: { text: 'hi' } },
          { id: 'toolu_spawn', name: 'spawn_thread', input: { instructions: 'help', child_of: stack } },
          // Bad arguments: the correction comes first, the permit is not even asked.
          { id: 'toolu_bad', name: 'write_thing', input: { nope: 1 } },
        ],
      };
    };
    const h = makeHarness(mode, storeKind, {
      brain,
      tools: [writeTool(runs), echo],
      system: {
        permit: (threadId, call) => {
          asked.push({ threadId, name: call.name, input: call.input });
          return call.name === 'echo' ? undefined : { deny: `${call.name} is not permitted (--test-flag).` };
        },
      },
    });
    await h.send(userText('t1', 'go', 'u1'));
    await h.settle();

    expect(runs).toEqual([]);
    expect(echo.log).toEqual(['toolu_echo']);
    // No child was made.
    expect(h.events.filter((e) => e.type === 'thread-spawned')).toEqual([]);
    expect(asked).toEqual([
      { threadId: 't1', name: 'write_thing', input: { what: 'secret' } },
      { threadId: 't1', name: 'echo', input: { text: 'hi' } },
      { threadId: 't1', name: 'spawn_thread', input: { instructions: 'help', child_of: ['t1'] } },
    ]);
    const denied = h.events.filter((e) => e.type === 'tool-denied');
    expect(denied).toEqual([
      { type: 'tool-denied', threadId: 't1', call: { id: 'toolu_write', name: 'write_thing', input: { what: 'secret' } }, reason: 'write_thing is not permitted (--test-flag).' },
      { type: 'tool-denied', threadId: 't1', call: { id: 'toolu_spawn', name: 'spawn_thread', input: { instructions: 'help', child_of: ['t1'] } }, reason: 'spawn_thread is not permitted (--test-flag).' },
    ]);
    // UIs still see the denied call with its display line, then its error result.
    const writeCall = h.events.find((e) => e.type === 'tool-call' && e.call.id === 'toolu_write');
    expect(writeCall).toMatchObject({ display: 'Write secret', sync: true });

    // The model's next request carries every answer, in call order.
    expect(requests).toHaveLength(2);
    const results = requests[1].messages.at(-1)!.content;
    expect(results.map((b) => (b.type === 'tool_result' ? [b.tool_use_id, b.is_error === true] : b.type))).toEqual([
      ['toolu_write', true],
      ['toolu_echo', false],
      ['toolu_spawn', true],
      ['toolu_bad', true],
    ]);
    const text = lastText(requests[1]);
    expect(text).toContain('Error: write_thing is not permitted (--test-flag).');
    expect(text).toContain('Error: spawn_thread is not permitted (--test-flag).');
    expect(text).toContain('Error: invalid arguments for write_thing: Missing required property "what"');
    const t = await h.store.loadThread('t1');
    expect(t!.history.at(-1)!.content).toEqual([{ type: 'text', text: 'Understood, I will not do that.' }]);
    await h.close();
  });

  it('withheld tools, built-ins too, are neither offered nor run: a call to one is an unknown tool', async () => {
    const runs: string[] = [];
    const requests: CompletionRequest[] = [];
    const h = makeHarness(mode, storeKind, {
      brain: (r) => {
        requests.push(r);
        if (lastIsToolResult(r)) return { text: 'done' };
        return {
          toolCalls: [
            { id: 'toolu_w', name: 'write_thing', input: { what: 'x' } },
            { id: 'toolu_s', name: 'spawn_thread', input: { instructions: 'help', child_of: threadOf(r).stack } },
          ],
        };
      },
      tools: [writeTool(runs), echoTool()],
      system: { withhold: (name) => name === 'write_thing' || name === 'spawn_thread' },
    });
    await h.send(userText('t1', 'go', 'u1'));
    await h.settle();
    const offered = requests[0].tools.map((t) => t.name);
    expect(offered).toContain('echo');
    expect(offered).toContain('sleep');
    expect(offered).not.toContain('write_thing');
    expect(offered).not.toContain('spawn_thread');
    expect(runs).toEqual([]);
    expect(h.events.filter((e) => e.type === 'thread-spawned')).toEqual([]);
    const text = lastText(requests[1]);
    expect(text).toContain("Error: tool 'write_thing' does not exist.");
    expect(text).toContain("Error: tool 'spawn_thread' does not exist.");
    await h.close();
  });
});

describe('withheld tools that arrive later', () => {
  it("a tool server's withheld tool is left out quietly (not a rejection) and never offered", async () => {
    const runs: string[] = [];
    const offered: string[][] = [];
    const system = new LocalSystem({
      store: new MemoryStore(),
      model: 'm',
      provider: new ScriptedProvider((r) => {
        offered.push(r.tools.map((t) => t.name));
        return { text: 'ok' };
      }),
      withhold: (name) => name.startsWith('mcp__files__'),
    });
    await system.start();
    const late = { ...writeTool(runs), name: 'mcp__files__write' };
    const other = { ...echoTool(), name: 'mcp__notes__read' };
    expect(await system.addTools([late, other])).toEqual([]);
    await system.send([userText('t1', 'go', 'u1')]);
    await system.whenIdle();
    expect(offered[0]).toContain('mcp__notes__read');
    expect(offered[0]).not.toContain('mcp__files__write');
    expect(system.toolNames).not.toContain('mcp__files__write');
    await system.close();
  });
});
