// A process that runs one conversation on a SQLite file and can SIGKILL itself at a chosen point
// inside a slice. Used by crash-recovery.test.ts; run with `node --import tsx`.
// argv: <db> <log> <kill spec: "<event type>:<n>" or "none"> [calls per reply, default 1]
import { appendFileSync } from 'node:fs';
import { LocalSystem } from '../local-system.js';
import type { CompletionRequest } from '../provider.js';
import { ScriptedProvider } from '../scripted-provider.js';
import { SqliteStore } from '../sqlite-store.js';
import type { AsyncTool } from '../tool.js';

export const STEPS = 4;
const [dbPath, logPath, killSpec = 'none', perReply = '1'] = process.argv.slice(2);
if (!dbPath || !logPath) throw new Error('usage: crash-child <db> <log> [kill spec] [calls per reply]');
const CALLS = Number(perReply);

function brain(r: CompletionRequest) {
  const results = r.messages.flatMap((m) => m.content).filter((c) => c.type === 'tool_result').length;
  if (results >= STEPS * CALLS) return { text: 'All steps done.' };
  const calls = Array.from({ length: CALLS }, (_, i) => ({ name: 'record', input: { step: results + i } }));
  return {
    text: `Step ${results}: recording progress so far, one careful chunk at a time. `.repeat(2),
    toolCalls: calls,
  };
}

const record: AsyncTool = {
  kind: 'async',
  name: 'record',
  description: 'Record a step.',
  input_schema: { type: 'object', properties: { step: { type: 'number' } }, required: ['step'] },
  dispatch(input, ctx) {
    // The side effect happens inside dispatch, so "executed" is exactly "dispatched".
    appendFileSync(logPath, `${ctx.call.id} ${String(input.step)}\n`);
    setImmediate(() => void ctx.respond({ content: `recorded ${String(input.step)}` }));
  },
};

const system = new LocalSystem({
  store: new SqliteStore({ path: dbPath }),
  provider: new ScriptedProvider(brain),
  tools: [record],
  model: 'scripted',
});
if (killSpec !== 'none') {
  const [type, nth] = killSpec.split(':');
  let seen = 0;
  system.subscribe((e) => {
    if (e.type === type && ++seen === Number(nth)) process.kill(process.pid, 'SIGKILL');
  });
}
await system.start();
// The same input id every run: after a crash the task is not started twice.
await system.sendUserText('root', 'Run the steps.', 'task-1');
await system.whenIdle();
await system.close();
process.stdout.write('finished\n');
