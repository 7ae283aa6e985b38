import type { HistoryMessage } from '@infinity-code/runtime';
import { describe, expect, it } from 'vitest';
import { demoBrain } from './demo-brain.js';

const SYSTEM = 'The root thread ID is root.\nThread stack: ["root"]';

/** The root's history once both children reported (with what the review said) and the tests ended. */
function finishedRoot(reviewNotes: [string, string]): HistoryMessage[] {
  const call = (id: string, name: string, input: Record<string, unknown>): HistoryMessage => ({
    role: 'assistant',
    content: [{ type: 'tool_use', id, name, input }],
  });
  const result = (id: string, text: string): HistoryMessage => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text }] }],
  });
  return [
    { role: 'user', content: [{ type: 'text', text: 'Fix the greeting and add a farewell.' }] },
    call('s1', 'spawn_thread', { instructions: 'greet' }),
    result('s1', 'Spawned thread c1.'),
    call('s2', 'spawn_thread', { instructions: 'farewell' }),
    result('s2', 'Spawned thread c2.'),
    call('x1', 'execute_command', { command: 'node test.js' }),
    result('x1', 'check 1/1 ok\n[exit code: 0]'),
    call('e1', 'receive_event__injected', {}),
    result('e1', `Child thread with ID c1 has shut down. Report from child thread: done.\n\n${reviewNotes[0]}`),
    call('e2', 'receive_event__injected', {}),
    result('e2', `Child thread with ID c2 has shut down. Report from child thread: done.\n\n${reviewNotes[1]}`),
  ];
}

describe('the demo brain', () => {
  it('says both changes were merged when the review accepted them', () => {
    const reply = demoBrain({
      system: SYSTEM,
      messages: finishedRoot(['The user reviewed these changes.\nAccepted: greet.js#0.', 'The user reviewed these changes.\nAccepted: farewell.js#0.']),
    });
    expect(reply.toolCall).toBeUndefined();
    expect(reply.text).toContain('greet() now says "Hello, <name>!" and farewell.js adds farewell(name); merged');
    expect(reply.text).not.toContain('Left out');
  });

  it('names a rejected file with the reason instead of claiming it was merged', () => {
    const reply = demoBrain({
      system: SYSTEM,
      messages: finishedRoot(['The user reviewed these changes.\nRejected greet.js#0: keep it.', 'The user reviewed these changes.\nAccepted: farewell.js#0.']),
    });
    expect(reply.text).toContain('farewell.js adds farewell(name); merged');
    expect(reply.text).toContain('Left out: greet.js (you rejected it: "keep it").');
    expect(reply.text).not.toContain('greet() now says');
  });
});
