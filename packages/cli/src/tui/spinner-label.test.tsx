// The spinner says how long the model has been at its reply, and when the API has sent nothing
// for a while; a stream that stays silent is given up with a clear message.
import { afterEach, describe, expect, it } from 'vitest';
import type { CompletionRequest, ModelProvider, StreamEvent } from '@infinity-code/runtime';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { busyLabel, elapsedText } from './busy-label.js';
import { LiveTurn } from './live-turn.js';
import { initialState, reduce } from './state.js';
import { startRig, type Rig } from './testing.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('the busy label', () => {
  it('says how long, from a second on, and how long the API has been silent', () => {
    expect(busyLabel({ writing: false })).toBe('Thinking… (Esc to stop)');
    expect(busyLabel({ writing: false, since: 10_000, now: 10_400 })).toBe('Thinking… (Esc to stop)');
    expect(busyLabel({ writing: false, since: 10_000, now: 22_900 })).toBe('Thinking… 12s (Esc to stop)');
    expect(busyLabel({ writing: true, since: 0, now: 75_000 })).toBe('Writing… 1m 15s (Esc to stop)');
    expect(busyLabel({ writing: false, since: 0, silentSince: 4_000, now: 12_000 })).toBe('Thinking… 12s · no data for 8s (Esc to stop)');
    // The silence is said even where running times are not (no clock ticking: animation off).
    expect(busyLabel({ writing: false, silentSince: 4_000, now: 9_000 })).toBe('Thinking… · no data for 5s (Esc to stop)');
    expect(elapsedText(3_720_000)).toBe('1h 02m');
  });

  it('the live turn shows the running time while animated, and leaves it out otherwise (stable frames)', () => {
    const since = Date.now() - 12_000;
    const shown = (animate: boolean) => {
      const ui = render(<LiveTurn text="" busy since={since} running={[]} maxLines={10} animate={animate} />);
      const out = stripVTControlCharacters(ui.lastFrame() ?? '');
      ui.unmount();
      return out;
    };
    expect(shown(true)).toMatch(/Thinking… 1\ds \(Esc to stop\)/);
    expect(shown(false)).toContain('Thinking… (Esc to stop)');
  });

  it("follows the root's completion: when it began, when the API went silent, and when it ended", () => {
    let s = initialState({ model: 'm', contextWindow: 0, backend: 'copy', sessionId: 'root' });
    s = reduce(s, { type: 'slice-started', threadId: 'root', inputs: 1 }, 1_000);
    s = reduce(s, { type: 'completion-started', threadId: 'root', model: 'm' }, 2_000);
    expect(s.completionSince).toBe(2_000);
    s = reduce(s, { type: 'completion-silence', threadId: 'root', since: 2_500 }, 7_500);
    expect(s.silentSince).toBe(2_500);
    // A child's silence is not the root's.
    expect(reduce(s, { type: 'completion-silence', threadId: 'c1', since: null }, 8_000).silentSince).toBe(2_500);
    s = reduce(s, { type: 'completion-silence', threadId: 'root', since: null }, 8_000);
    expect(s.silentSince).toBeUndefined();
    s = reduce(s, { type: 'completion-started', threadId: 'root', model: 'm' }, 9_000);
    expect(s.completionSince).toBe(9_000);
    s = reduce(s, { type: 'slice-finished', threadId: 'root', outcome: 'completed', usage: s.status.usage, completions: 2, contextTokens: 0 }, 9_500);
    expect(s.completionSince).toBeUndefined();
  });
});

/** Its first attempt sends a few words, then nothing until it is given up; the next one answers. */
function silentOnce(): ModelProvider {
  let attempts = 0;
  return {
    name: 'silent-once',
    async *stream(_r: CompletionRequest, signal: AbortSignal): AsyncGenerator<StreamEvent> {
      if (attempts++ === 0) {
        yield { type: 'text', text: 'Let me look' };
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
      }
      yield { type: 'text', text: 'Found it.' };
      yield { type: 'done', stopReason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } };
    },
  };
}

describe('a silent model API in the TUI', () => {
  it('the spinner says there is no data; the stalled stream is then given up, said, and retried', async () => {
    rig = await startRig({
      brain: () => ({ text: 'unused' }),
      system: { provider: silentOnce(), retry: { baseDelayMs: 1, maxDelayMs: 2, initTimeoutMs: 1_000, stallTimeoutMs: 1_000 } },
    });
    await rig.submit('where is the bug?');
    await rig.untilState((s) => s.silentSince !== undefined);
    expect(rig.frame()).toMatch(/Writing… · no data for \ds \(Esc to stop\)/);
    await rig.settle();
    const f = rig.frame();
    expect(f).toContain('The model API stream stalled: nothing arrived for 1 s. Retrying in');
    expect(f).toContain('● Found it.');
    expect(f).not.toContain('no data for');
  });
});
