// An asynchronous result is matched to its call whether it arrives before or after a restart.
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toolResult, userText } from './input.js';
import { LocalSystem } from './local-system.js';
import { text } from './messages.js';
import { ScriptedProvider } from './scripted-provider.js';
import { SqliteStore } from './sqlite-store.js';
import { StepSystem } from './step-system.js';
import type { CompletionRequest } from './provider.js';
import { shape, tempDir } from './test-support/harness.js';
import type { AsyncTool } from './tool.js';

const brain = (r: CompletionRequest) =>
  r.messages.at(-1)!.content[0]!.type === 'tool_result'
    ? { text: 'Got the result.' }
    : { text: 'Starting a job on the tool server.', toolCall: { name: 'remote_job', input: {} } };

/** A tool served by another process: its calls outlive ours, its result may come any time. */
function remoteJob(dispatched: string[]): AsyncTool {
  return {
    kind: 'async',
    name: 'remote_job',
    description: 'Run a job on the tool server.',
    input_schema: { type: 'object', properties: {} },
    survivesRestart: true,
    dispatch: (_input, ctx) => {
      dispatched.push(ctx.call.id);
    },
  };
}

type Mode = 'local' | 'step';

async function firstLife(mode: Mode, db: string, dispatched: string[]): Promise<string> {
  const store = new SqliteStore({ path: db });
  const opts = { store, provider: new ScriptedProvider(brain), tools: [remoteJob(dispatched)], model: 'm' };
  if (mode === 'local') {
    const system = new LocalSystem(opts);
    await system.send(userText('t1', 'go', 'u1'));
    await system.whenIdle({ ignoreRunningTools: true });
    await system.close();
  } else {
    const system = new StepSystem({ ...opts, send: async () => {} });
    await system.step([userText('t1', 'go', 'u1')]);
    await store.close();
  }
  expect(dispatched).toHaveLength(1);
  return dispatched[0]!;
}

async function secondLife(mode: Mode, db: string, deliverAfterStart: string | null, dispatched: string[]) {
  const store = new SqliteStore({ path: db });
  const opts = { store, provider: new ScriptedProvider(brain), tools: [remoteJob(dispatched)], model: 'm' };
  if (mode === 'local') {
    const system = new LocalSystem(opts);
    await system.start();
    if (deliverAfterStart) await system.send(toolResult('t1', deliverAfterStart, [text('job output')]));
    await system.whenIdle({ ignoreRunningTools: true });
    await system.close();
  } else {
    const system = new StepSystem({ ...opts, send: async () => {} });
    const queued = await store.pendingInputs();
    const batch = deliverAfterStart ? [...queued, toolResult('t1', deliverAfterStart, [text('job output')])] : queued;
    await system.step(batch);
    await store.close();
  }
  const reader = new SqliteStore({ path: db });
  const t = await reader.loadThread('t1');
  await reader.close();
  return t!;
}

describe.each(['local', 'step'] as const)('restart in %s mode', (mode) => {
  it('a result that arrives after a restart is matched to its call', async () => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    const dispatched: string[] = [];
    const callId = await firstLife(mode, db, dispatched);
    const t = await secondLife(mode, db, callId, dispatched);
    expect(shape(t.history)).toEqual(['user:text', 'assistant:text+tool_use', 'user:tool_result', 'assistant:text']);
    expect(t.history[2]!.content[0]).toMatchObject({ tool_use_id: callId, content: [{ text: 'job output' }] });
    expect(dispatched).toEqual([callId]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a result queued before a restart is matched to its call after it', async () => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    const dispatched: string[] = [];
    const callId = await firstLife(mode, db, dispatched);
    // The result reached the durable queue, then the process went down before a slice ran.
    const store = new SqliteStore({ path: db });
    await store.enqueue([toolResult('t1', callId, [text('job output')])]);
    await store.close();
    const t = await secondLife(mode, db, null, dispatched);
    expect(shape(t.history)).toEqual(['user:text', 'assistant:text+tool_use', 'user:tool_result', 'assistant:text']);
    expect(t.history[2]!.content[0]).toMatchObject({ tool_use_id: callId });
    expect(dispatched).toEqual([callId]);
    rmSync(dir, { recursive: true, force: true });
  });
});
