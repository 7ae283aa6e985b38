// Run in a child process by loop-drain.test.ts: a thread waits on a subscription that nothing
// serves, so the event loop runs dry while the run still waits. Prints how the wait ended.
import { join } from 'node:path';
import { LocalSystem, ScriptedProvider, SqliteStore, type AsyncTool, type CompletionRequest } from '@infinity-code/runtime';
import { whenLoopDrains } from '../loop-drain.js';

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: stall-child <dir>');

// Its "process" is gone: it answered that it runs in the background, and will never send more.
const orphan: AsyncTool = {
  kind: 'async',
  name: 'watch_forever',
  description: 'Watch.',
  input_schema: { type: 'object', properties: {} },
  dispatch: async (_input, ctx) => {
    await ctx.respond({ content: 'watching in the background', subscription: true });
  },
};
const brain = (r: CompletionRequest) =>
  r.messages.at(-1)!.content[0].type === 'text' ? { toolCall: { name: 'watch_forever', input: {} } } : { text: 'Waiting for it.' };

async function main(): Promise<string> {
  const store = new SqliteStore({ path: join(dir, 'state.db') });
  const system = new LocalSystem({ store, provider: new ScriptedProvider(brain), tools: [orphan], model: 'm' });
  const loop = whenLoopDrains();
  await system.sendUserText('t1', 'watch');
  const end = await system.whenQuiescent({ stalled: loop.drained });
  loop.dispose();
  await system.close();
  return JSON.stringify(end);
}

// Not a top-level await: like the CLI's entry, a pending promise alone does not keep Node alive.
void main().then((out) => process.stdout.write(`${out}\n`));
