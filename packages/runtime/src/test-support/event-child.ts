// A process running one thread on a SQLite file, for crash tests of subscriptions and timers.
// argv: <db> <scenario: tail <file> | sleep> [kill-on-dispatch]
// Prints one line per injected event ("injected <n>") and per dispatch ("dispatched <name> <ms>").
import { readFileSync } from 'node:fs';
import { LocalSystem } from '../local-system.js';
import type { CompletionRequest } from '../provider.js';
import { ScriptedProvider } from '../scripted-provider.js';
import { SqliteStore } from '../sqlite-store.js';
import type { AsyncTool, AsyncToolContext } from '../tool.js';

const [db, scenario, arg] = process.argv.slice(2);
if (!db || !scenario) throw new Error('usage: event-child <db> <tail <file>|sleep> [kill-on-dispatch]');

/** Emits each line of a file as an associative event, with the line number as its stable id. */
function tailTool(): AsyncTool {
  const follow = (ctx: AsyncToolContext, file: string) => {
    let sent = 0;
    const poll = async () => {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.pop(); // the last piece is incomplete (or empty)
      while (sent < lines.length) {
        const line = lines[sent];
        await ctx.emit({ id: `line-${sent}`, content: line, associative: true, final: line === 'END' });
        sent++;
        if (line === 'END') return;
      }
      setTimeout(() => void poll(), 10);
    };
    void poll();
  };
  return {
    kind: 'async',
    name: 'tail_file',
    description: 'Follow a file; each new line arrives as an event.',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    // The file outlives the process: after a restart the tool re-reads it and dedup drops repeats.
    survivesRestart: true,
    async dispatch(input, ctx) {
      await ctx.respond({ content: 'following', subscription: true });
      follow(ctx, String(input.path));
    },
    resume(ctx) {
      follow(ctx, String(ctx.call.input.path));
    },
  };
}

function brain(r: CompletionRequest) {
  const last = r.messages.at(-1)!.content[0];
  if (last.type === 'text' && last.text === 'follow') return { toolCall: { name: 'tail_file', input: { path: arg } } };
  if (last.type === 'text' && last.text === 'nap') return { text: 'Napping.', toolCall: { name: 'sleep', input: { seconds: 2 } } };
  if (last.type === 'tool_result' && JSON.stringify(last).includes('The wait is over')) return { text: `awake at ${Date.now()}` };
  return { text: 'noted' };
}

const store = new SqliteStore({ path: db });
const system = new LocalSystem({ store, provider: new ScriptedProvider(brain), tools: [tailTool()], model: 'scripted' });
let subscribed = false;
system.subscribe((e) => {
  if (e.type === 'event-injected') process.stdout.write(`injected ${e.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}\n`);
  if (e.type === 'tool-dispatched') {
    process.stdout.write(`dispatched ${e.callId} ${Date.now()}\n`);
    if (process.argv.includes('kill-on-dispatch')) process.kill(process.pid, 'SIGKILL');
  }
});
await system.start();
await system.sendUserText('t', scenario === 'tail' ? 'follow' : 'nap', 'task');
for (;;) {
  await system.whenIdle();
  const t = await store.loadThread('t');
  subscribed ||= t!.record.subscriptions.length > 0;
  const waiting = t!.record.batch.length > 0 || (scenario === 'tail' && (!subscribed || t!.record.subscriptions.length > 0));
  if (!waiting) break;
  // Something is still expected (events or a timer): wait for the next slice to finish.
  await new Promise<void>((resolve) => {
    const off = system.subscribe((e) => {
      if (e.type === 'slice-finished') {
        off();
        resolve();
      }
    });
  });
}
await system.close();
process.stdout.write('finished\n');
