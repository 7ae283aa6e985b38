// What a headless run's --verbose says about a child thread: the words a user reads, never the
// text its model is given (the spawn result that tells the child who it is and what to do).
import { LocalSystem, MemoryStore, ScriptedProvider, threadStackOf, type CompletionRequest, type ScriptedReply } from '@infinity-code/runtime';
import { DEFAULT_MODEL } from '@infinity-code/runtime/models';
import { describe, expect, it } from 'vitest';
import { textPrinter } from './headless.js';

function brain(r: CompletionRequest): ScriptedReply {
  const stack = threadStackOf(r)!;
  if (stack.length > 1) return { toolCall: { name: 'close_thread', input: { thread_id: stack.at(-1), report_to_parent: 'Both renamed.' } } };
  const spawned = r.messages.some((m) => m.content.some((b) => b.type === 'tool_use' && b.name === 'spawn_thread'));
  if (spawned) return { text: 'Done.' };
  // Two children from one reply: each also gets a result for its sibling's call.
  const spawn = (instructions: string) => ({ name: 'spawn_thread', input: { instructions, child_of: stack } });
  return { toolCalls: [spawn('Rename colour to color\nin every file.'), spawn('Rename grey to gray.')] };
}

describe('a headless run with --verbose', () => {
  it("says a child started and on what, not the model's spawn text", async () => {
    const system = new LocalSystem({ store: new MemoryStore(), provider: new ScriptedProvider(brain), tools: [], model: DEFAULT_MODEL });
    let stderr = '';
    system.subscribe(textPrinter({ out: () => undefined, err: (t) => (stderr += t) }, 'root', { verbose: true }));
    await system.start();
    await system.sendUserText('root', 'rename the spellings');
    await system.whenQuiescent();
    await system.close();
    expect(stderr).not.toContain('You are now inside the thread');
    expect(stderr).not.toContain('a sibling working in parallel with you');
    expect(stderr).toMatch(/\]\s+⎿ thread started: Rename colour to color\n/);
    expect(stderr).toMatch(/\]\s+⎿ thread started: Rename grey to gray\.\n/);
    expect(stderr).toMatch(/\]\s+⎿ sibling thread th_/);
  });
});
