import { describe, expect, it } from 'vitest';
import { initialState, reduce } from './state.js';

const info = { model: 'claude-sonnet-4-5', contextWindow: 200_000, backend: 'copy', sessionId: 's1' };

describe('a resumed session shows its earlier transcript', () => {
  it('turns the stored history into the items live events would have made', () => {
    const s = reduce(initialState(info), {
      type: 'ui:history',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'fix the bug' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Reading it.' }, { type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'a.ts' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: '1\tconst a = 1;' }] }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'execute_command', input: { command: 'npm test' } }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'e1', name: 'receive_event__injected', input: { original_tool_name: 'spawn_thread', original_tool_call_id: 'sp1' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'e1', content: [{ type: 'text', text: 'Report from child thread: done' }] }] },
        { role: 'assistant', content: [{ type: 'text', text: 'All fixed.' }] },
      ],
    });
    expect(s.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'tool', 'tool', 'report', 'assistant']);
    expect(s.items[2]).toMatchObject({ kind: 'tool', status: 'ok', summary: '1\tconst a = 1;' });
    expect(s.items[3]).toMatchObject({ kind: 'tool', status: 'interrupted' });
    expect(s.items[4]).toMatchObject({ kind: 'report', text: 'Report from child thread: done' });
  });
});
