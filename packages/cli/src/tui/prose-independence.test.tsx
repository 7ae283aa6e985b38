// The TUI shows what the runtime's typed events and its reading of a stored history say, never
// what it finds in the text the model reads. Here every phrase the runtime frames things with for
// the model is reworded (its readers follow, being built from the same phrases): the screen, live
// and resumed, must not change. A TUI that went back to matching the runtime's words would show
// the new framing, or lose the reports.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, readHistory, type CompletionRequest, type ScriptedReply } from '@infinity-code/runtime';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { initialState, reduce } from './state.js';
import { requestText, startRig, threadOf, type Rig } from './testing.js';
import { Entry } from './transcript.js';

const REWORDED = vi.hoisted(() => ({
  childReport: 'CHILD SAYS >> ',
  childClosedWithReport: '<{child}> SIGNED OFF, SAYING: ',
  childClosed: '<{child}> SIGNED OFF',
  eventReport: 'EVENT HELPER SAYS >> ',
  eventClosedWithReport: 'HELPER {child} OF {subscription} SIGNED OFF, SAYING: ',
  parentMessage: 'PARENT SAYS >> ',
  summary: '== RECAP ==\n',
  interruptedByUser: 'STOPPED BY THE HUMAN',
  wokenByInput: 'WOKE UP',
  interruptedByRestart: 'LOST IN A RESTART',
  spawned: 'CHILD {child} IS OFF',
}));

vi.mock('@infinity-code/runtime/wording', async (importOriginal) => {
  const real = await importOriginal<typeof import('@infinity-code/runtime/wording')>();
  return { ...real, ...real.wordingWith(REWORDED) };
});

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const REWORDED_TEXT = /CHILD SAYS|SIGNED OFF|WOKE UP|RECAP|IS OFF/;
const INFO = { model: 'm', contextWindow: 0, backend: 'copy', sessionId: 'root' };

/** Root: splits off "Fix the parser", sleeps until both its reports are in. Child: reports, then closes with a report. */
function brain(rootRequests: string[]) {
  return (r: CompletionRequest): ScriptedReply => {
    const me = threadOf(r);
    const uses = r.messages.flatMap((m) => m.content).filter((b) => b.type === 'tool_use');
    if (me.stack.length > 1) {
      if (uses.some((u) => u.name === 'report_to_parent')) {
        return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'Parser fixed.' } } };
      }
      return { toolCall: { name: 'report_to_parent', input: { report: 'halfway there' } } };
    }
    rootRequests.push(requestText(r.messages));
    if (!uses.some((u) => u.name === 'spawn_thread')) {
      return { text: 'Splitting.', toolCall: { name: 'spawn_thread', input: { instructions: 'Fix the parser', child_of: me.stack } } };
    }
    // The model's side reads the same reworded history through the runtime's reading.
    const reports = readHistory(r.messages).filter((e) => e.kind === 'injected' && e.source === 'report');
    return reports.length < 2 ? { toolCall: { name: 'sleep_until_event_or_input', input: {} } } : { text: 'Noted.' };
  };
}

describe("the TUI doesn't depend on the runtime's wording", () => {
  it('shows reports and woken waits the same, live and resumed, when the runtime rewords them', async () => {
    const rootRequests: string[] = [];
    const store = new MemoryStore();
    rig = await startRig({ brain: brain(rootRequests), system: { store } });
    await rig.submit('fix the parser');
    await rig.untilState((s) => s.items.some((i) => i.kind === 'assistant' && i.text === 'Noted.'));
    await rig.settle();

    // The rewording took effect: the model read the new framing.
    expect(rootRequests.at(-1)).toContain(`${REWORDED.childReport}halfway there`);
    expect(rootRequests.at(-1)).toMatch(/<th_\S+> SIGNED OFF, SAYING: Parser fixed\./);

    const live = rig.frame();
    expect(live).toMatch(/↳ Report from Fix the parser\n\s+halfway there\n/);
    expect(live).toMatch(/↳ Report from Fix the parser\n\s+Parser fixed\.\n/);
    expect(live).toMatch(/⏺ Wait for events or input\n\s+⎿ woken by an event or a message/);
    expect(live).not.toMatch(REWORDED_TEXT);

    // Resumed from the store: the same reports, read by the (reworded) runtime.
    const history = (await store.loadThread('root'))!.history;
    const resumed = reduce(initialState(INFO), { type: 'ui:history', messages: history });
    const reports = resumed.items.flatMap((i) => (i.kind === 'report' ? [[i.from, i.text]] : []));
    expect(reports).toEqual([
      ['Fix the parser', 'halfway there'],
      ['Fix the parser', 'Parser fixed.'],
    ]);
    let replayed = '';
    await rig.run(async () => {
      const ui = render(<>{resumed.items.map((i) => <Entry key={i.id} item={i} />)}</>);
      replayed = stripVTControlCharacters(ui.lastFrame() ?? '');
      ui.unmount();
    });
    expect(replayed).toMatch(/↳ Report from Fix the parser\n\s+halfway there/);
    expect(replayed).toMatch(/⎿ woken by an event or a message/);
    expect(replayed).not.toMatch(REWORDED_TEXT);

  });

  it('starts a resumed transcript at the summary, however the runtime marks it', async () => {
    const store = new MemoryStore();
    // The only child is the compaction's, which writes the summary.
    rig = await startRig({ brain: (r) => ({ text: threadOf(r).stack.length > 1 ? 'We talked.' : 'ok' }), system: { store } });
    await rig.submit('hello');
    await rig.settle();
    await rig.run(() => rig!.controller.compact());
    await rig.settle();
    await rig.submit('again');
    await rig.settle();
    const history = (await store.loadThread('root'))!.history;
    expect(requestText(history)).toContain(REWORDED.summary);
    const resumed = reduce(initialState(INFO), { type: 'ui:history', messages: history });
    expect(resumed.items.map((i) => (i.kind === 'notice' ? i.level : i.kind === 'user' || i.kind === 'assistant' ? i.text : i.kind))).toEqual([
      'compaction',
      'again',
      'ok',
    ]);
  });
});
