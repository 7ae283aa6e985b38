import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { CommandConfirm } from './command-confirm.js';
import { formatCost, formatTokens, summarize } from './format.js';
import { LiveTurn } from './live-turn.js';
import { initialState, reduce, type UiState } from './state.js';
import { StatusLine } from './status-line.js';
import { ThreadRows } from './thread-rows.js';
import { ToolRow } from './tool-row.js';

const frame = (node: React.ReactElement) => {
  const ui = render(node);
  const out = stripVTControlCharacters(ui.lastFrame() ?? '');
  ui.unmount();
  return out;
};

describe('components render state', () => {
  it('CommandConfirm asks to run a command again with network, and y answers yes', async () => {
    const answers: boolean[] = [];
    const ui = render(<CommandConfirm command="npm install" kind="network" from="The agent" isActive onAnswer={(a) => answers.push(a)} />);
    const out = stripVTControlCharacters(ui.lastFrame() ?? '');
    expect(out).toContain('Run it again with network? The agent asks.');
    expect(out).toContain('It failed without network');
    expect(out).not.toContain("can't be confined");
    await new Promise((r) => setImmediate(r));
    ui.stdin.write('y');
    await new Promise((r) => setImmediate(r));
    expect(answers).toEqual([true]);
    ui.unmount();
  });

  it('ToolRow keeps the count of further result lines when the first line is too long for the terminal', () => {
    const result = `The command is still running after 5 s; it goes on in the background ${'and on '.repeat(12)}\nline 2\nline 3`;
    const out = frame(<ToolRow display="$ node test.js" status="ok" summary={summarize(result)} />);
    const row = out.split('\n')[1];
    expect(row).toMatch(/^ {2}⎿ The command is still running.*…/);
    expect(row).toMatch(/\(\+2 lines\)$/);
  });

  it('ThreadRows shows at most maxRows, busy children first, in spawn order', () => {
    let s: UiState = initialState({ model: 'm', contextWindow: 0, backend: 'copy', sessionId: 'root' });
    for (let i = 0; i < 10; i++) {
      s = reduce(s, { type: 'thread-spawned', threadId: 'root', childId: `c${i}`, kind: 'child', spawnCallId: `call${i}` });
      if (i % 4 === 3) s = reduce(s, { type: 'slice-started', threadId: `c${i}`, inputs: 1 });
    }
    const f = frame(<ThreadRows threads={s.threads} animate={false} maxRows={4} />);
    expect(f).toContain('Threads (10)');
    expect(f.match(/thread c\d/g)).toEqual(['thread c0', 'thread c1', 'thread c3', 'thread c7']);
    expect(f).toContain('thread c3 · thinking');
    expect(f).toContain('… and 6 more');
  });

  it('StatusLine shows tokens, cost and context use; n/a where unknown', () => {
    const s = initialState({ model: 'local-model', contextWindow: 0, backend: 'fuse-overlayfs', sessionId: '0123456789abcdef' });
    expect(frame(<StatusLine status={s.status} />)).toContain('local-model · ↑0 ↓0 · cost n/a · ctx n/a · sandbox fuse-overlayfs · session 01234567');
    const busy = { ...s.status, contextWindow: 1000, contextTokens: 800, usage: { ...s.status.usage, input_tokens: 1500, cache_read_input_tokens: 2_000_000, output_tokens: 42 }, cost: 0.004 };
    expect(frame(<StatusLine status={busy} hint="Press Ctrl+C again to quit." />)).toMatch(/↑2\.0M ↓42 · <\$0\.01 · ctx 80%.*\nPress Ctrl\+C again to quit\./);
    expect([formatTokens(999), formatTokens(1234), formatTokens(56_789), formatCost(12.345)]).toEqual(['999', '1.2k', '57k', '$12.35']);
  });

  it('LiveTurn keeps long streaming text to its last lines', () => {
    const text = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const f = frame(<LiveTurn text={text} busy running={[]} maxLines={5} animate={false} />);
    expect(f).toContain('… 25 more lines above (shown in full when done)');
    expect(f).toContain('● line 25');
    expect(f).not.toContain('line 24');
    expect(f).toContain('Writing… (Esc to stop)');
  });
});
