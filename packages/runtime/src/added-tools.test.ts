// Tools added once the system runs (a tool server that came up after the session started): offered
// to every thread alike when they came before the first completion, never under a conversation
// already under way (its thinking is bound to its tools); a call of a tool this process doesn't offer
// (yet) after a restart is reported as interrupted, never waited for.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import { MemoryStore } from './memory-store.js';
import type { CompletionRequest } from './provider.js';
import { ScriptedProvider, type Brain } from './scripted-provider.js';
import { SqliteStore } from './sqlite-store.js';
import { tempDir } from './test-support/harness.js';
import type { AsyncTool } from './tool.js';
import { TOOLS_AFTER_START, ToolRegistry } from './tool-registry.js';
import { INTERRUPTED_BY_RESTART } from './wording.js';

function lateTool(calls: string[], answer = true): AsyncTool {
  return {
    kind: 'async',
    name: 'late_tool',
    description: 'A tool that arrived late.',
    input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    dispatch(input, ctx) {
      calls.push(ctx.call.id);
      if (answer) void ctx.respond({ content: `late answer ${String(input.n)}` });
    },
  };
}

const resultText = (r: CompletionRequest): string | undefined => {
  const block = r.messages.at(-1)?.content[0];
  return block?.type === 'tool_result' ? block.content.map((c) => (c.type === 'text' ? c.text : '')).join('') : undefined;
};

/** A started system whose scripted model notes the tool names each request offers. */
async function offering(brain: Brain): Promise<{ system: LocalSystem; offered: string[][] }> {
  const offered: string[][] = [];
  const system = new LocalSystem({
    store: new MemoryStore(),
    model: 'm',
    provider: new ScriptedProvider((r) => {
      offered.push(r.tools.map((t) => t.name));
      return brain(r);
    }),
  });
  await system.start();
  return { system, offered };
}

describe('tools added while the system runs', () => {
  it('are offered when added before the first completion, and their calls run', async () => {
    const calls: string[] = [];
    const { system, offered } = await offering((r) => {
      const result = resultText(r);
      if (result !== undefined) return { text: `read: ${result}` };
      return { toolCall: { name: 'late_tool', input: { n: 7 } } };
    });
    expect(await system.addTools([lateTool(calls)])).toEqual([]);
    await system.sendUserText('t1', 'first');
    await system.whenIdle();
    expect(offered[0]).toContain('late_tool');
    expect(calls).toHaveLength(1);
    await system.close();
  });

  it('are left out, saying why, once a completion has been requested: the tools of a conversation never change', async () => {
    const calls: string[] = [];
    const { system, offered } = await offering(() => ({ text: 'ok' }));
    await system.sendUserText('t1', 'first');
    await system.whenIdle();
    const left = await system.addTools([lateTool(calls)]);
    expect(left).toEqual([{ name: 'late_tool', reason: TOOLS_AFTER_START }]);
    await system.sendUserText('t1', 'second');
    await system.sendUserText('t2', 'another thread');
    await system.whenIdle();
    expect(offered).toHaveLength(3);
    // Byte for byte the same list: the model's thinking stays bound to it.
    expect(offered[1]).toEqual(offered[0]);
    expect(offered[2]).toEqual(offered[0]);
    expect(offered[1]).not.toContain('late_tool');
    await system.close();
  });

  it('leaves out a tool whose name is taken or whose schema is not JSON Schema, and adds the rest', async () => {
    const registry = new ToolRegistry([lateTool([])]);
    const bad: AsyncTool = { ...lateTool([]), name: 'bad_schema', input_schema: { type: 'object', properties: { x: { type: 'no-such-type' } } } };
    const good: AsyncTool = { ...lateTool([]), name: 'good_one' };
    const rejected = await registry.add([lateTool([]), bad, good]);
    expect(rejected.map((r) => r.name)).toEqual(['late_tool', 'bad_schema']);
    expect(rejected[0].reason).toContain('Two tools are named late_tool');
    expect(rejected[1].reason).toContain('input schema is not valid JSON Schema');
    expect(registry.definitions().map((d) => d.name)).toEqual(['late_tool', 'good_one']);
  });

  it('after a restart, a dispatched call of a tool not offered (yet) is answered as interrupted', async () => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    try {
      const calls: string[] = [];
      const brain = (r: CompletionRequest) => {
        const result = resultText(r);
        if (result !== undefined) return { text: `read: ${result}` };
        return { toolCall: { name: 'late_tool', input: { n: 1 } } };
      };
      const first = new LocalSystem({ store: new SqliteStore({ path: db }), model: 'm', provider: new ScriptedProvider(brain) });
      await first.start();
      await first.addTools([lateTool(calls, false)]);
      await first.send(userText('t1', 'go', 'u1'));
      await first.whenIdle({ ignoreRunningTools: true });
      expect(calls).toHaveLength(1);
      await first.close();

      // The tool's server has not come up in the new process: the call can't be answered by it.
      const texts: string[] = [];
      const second = new LocalSystem({
        store: new SqliteStore({ path: db }),
        model: 'm',
        provider: new ScriptedProvider((r) => {
          texts.push(resultText(r) ?? '');
          return brain(r);
        }),
      });
      await second.start();
      await second.whenIdle();
      expect(texts).toEqual([INTERRUPTED_BY_RESTART]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
