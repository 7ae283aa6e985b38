// Leaving the TUI with changes the working tree lacks, and closing or stopping things with Esc:
// the real App over a real LocalSystem, with the session's sandbox half as hooks.
import { afterEach, describe, expect, it } from 'vitest';
import type { CompletionRequest, ScriptedReply } from '@infinity-code/runtime';
import type { QuitChoice } from '../pending-changes.js';
import type { ReviewDiff } from '../review-diff.js';
import type { PendingChanges, QuitOutcome } from './controller.js';
import type { SessionHooks } from './local-controller.js';
import { quitFlow } from './quit-flow.js';
import { heldStream, lastText, startRig, threadOf, type Rig } from './testing.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const NOTES_DIFF: ReviewDiff = {
  files: [{ path: 'notes.txt', status: 'added', hunks: [{ id: 'notes.txt#0', header: '@@ -0,0 +1 @@', lines: ['+a note'] }], decisionIds: ['notes.txt#0'] }],
};

/**
 * Hooks whose pending changes the test sets, recording how the session was left. `holdQuit`: the
 * quit hook finishes only once `release()` is called, so the frame shown while leaving can be read
 * before the App exits.
 */
function sessionHooks(pending: { files: string[] } | null, { holdQuit = false } = {}) {
  const quits: QuitChoice[] = [];
  const applied: string[][] = [];
  const state = { pending };
  let release = (): void => undefined;
  const held = holdQuit ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const hooks: SessionHooks = {
    pendingChanges: () => Promise.resolve<PendingChanges | null>(state.pending),
    quit: async (changes) => {
      quits.push(changes);
      await held;
      return { message: `left with ${changes}` } satisfies QuitOutcome;
    },
    showDiff: () => Promise.resolve(state.pending ? NOTES_DIFF : null),
    applyToWorkingTree: (_request, decision) => {
      applied.push(decision.accepted);
      return Promise.resolve({ message: 'Applied 1 file(s) to the working tree.' });
    },
  };
  return { hooks, quits, applied, state, release: () => release() };
}

const answer = () => ({ text: 'Done.' });

describe('leaving with changes the working tree lacks', () => {
  it('/quit asks first; Esc stays, and k (or Enter) keeps them for the next run', async () => {
    const s = sessionHooks({ files: ['notes.txt', 'src/a.ts'] }, { holdQuit: true });
    rig = await startRig({ brain: answer, hooks: s.hooks });
    await rig.submit('/quit');
    await rig.untilState((st) => st.quitAsk !== null);
    let f = rig.frame();
    expect(f).toContain('Before you go: 2 files changed in this session are not in your working tree.');
    expect(f).toMatch(/notes\.txt[\s│]+src\/a\.ts/);
    expect(f).toContain('a apply them now · k keep them for later (infinity-code -c, Enter) · d discard them · Esc stay');
    expect(s.quits).toEqual([]);

    await rig.press('\u001b');
    f = rig.frame();
    expect(f).not.toContain('Before you go');
    expect(f).toContain('Ask for a change, or /help');
    expect(s.quits).toEqual([]);

    await rig.submit('/quit');
    await rig.untilState((st) => st.quitAsk !== null);
    await rig.press('k');
    await rig.untilState((st) => st.leaving !== null);
    expect(s.quits).toEqual(['keep']);
    expect(rig.frame()).toContain('Closing the session…');
    s.release();
  });

  it('Ctrl+D asks too; a applies them before leaving', async () => {
    const s = sessionHooks({ files: ['notes.txt'] }, { holdQuit: true });
    rig = await startRig({ brain: answer, hooks: s.hooks });
    await rig.press('\u0004');
    await rig.untilState((st) => st.quitAsk !== null);
    expect(rig.frame()).toContain('Before you go: 1 file changed in this session is not in your working tree.');
    await rig.press('a');
    await rig.untilState((st) => st.leaving !== null);
    expect(s.quits).toEqual(['apply']);
    expect(rig.frame()).toContain('Applying the changes to your working tree…');
    s.release();
  });

  it('discarding takes a second d; any other key goes back to the question', async () => {
    const s = sessionHooks({ files: ['notes.txt'] });
    rig = await startRig({ brain: answer, hooks: s.hooks });
    await rig.submit('/quit');
    await rig.untilState((st) => st.quitAsk !== null);
    await rig.press('d');
    expect(rig.frame()).toContain('Discard the changes to 1 file for good? d discards it, any other key goes back.');
    await rig.press('x');
    expect(rig.frame()).toContain('d discard it · Esc stay');
    expect(s.quits).toEqual([]);
    await rig.press('d', 'd');
    await rig.untilState((st) => st.leaving !== null);
    expect(s.quits).toEqual(['discard']);
  });

  it('Ctrl+C twice, then Ctrl+C at the question, keeps them', async () => {
    const s = sessionHooks({ files: ['notes.txt'] });
    rig = await startRig({ brain: answer, hooks: s.hooks });
    await rig.press('\u0003', '\u0003');
    await rig.untilState((st) => st.quitAsk !== null);
    await rig.press('\u0003');
    await rig.untilState((st) => st.leaving !== null);
    expect(s.quits).toEqual(['keep']);
  });

  it('with nothing pending, /quit leaves at once', async () => {
    const s = sessionHooks(null);
    rig = await startRig({ brain: answer, hooks: s.hooks });
    await rig.submit('/quit');
    await rig.untilState((st) => st.leaving !== null);
    expect(s.quits).toEqual(['keep']);
    expect(rig.store.getState().quitAsk).toBeNull();
  });

  it('with no way to ask (no keyboard), the changes are kept and the outcome goes to the caller', async () => {
    const s = sessionHooks({ files: ['notes.txt'] });
    rig = await startRig({ brain: answer, hooks: s.hooks });
    const exits: unknown[] = [];
    let exited!: () => void;
    const done = new Promise<void>((resolve) => (exited = resolve));
    const flow = quitFlow({
      controller: rig.controller,
      store: rig.store,
      canAsk: false,
      exit: (result) => {
        exits.push(result);
        exited();
      },
    });
    flow.request();
    await rig.run(() => done);
    expect(rig.store.getState().quitAsk).toBeNull();
    expect(s.quits).toEqual(['keep']);
    expect(exits).toEqual(['left with keep']);
  });

  it('/new says where the changes the working tree lacks went (the session left behind)', async () => {
    const s = sessionHooks({ files: ['notes.txt'] });
    rig = await startRig({ brain: answer, hooks: { ...s.hooks, newSession: () => Promise.resolve({ sessionId: 'second' }) } });
    await rig.submit('/new');
    await rig.untilState((st) => st.status.sessionId === 'second' && st.items.length > 1);
    expect(rig.frame().replace(/\s+/g, ' ')).toContain(
      'New session second. ℹ 1 file changed in the previous session is not in your working tree: infinity-code -r root brings it back (then /diff).',
    );
  });

  it("after the agent's answer, says when changes wait for /diff", async () => {
    const s = sessionHooks({ files: ['notes.txt'] });
    rig = await startRig({ brain: answer, hooks: s.hooks });
    await rig.submit('add a note');
    await rig.untilState((st) => st.items.some((i) => i.kind === 'notice' && i.text.includes('/diff')));
    expect(rig.frame()).toMatch(/● Done\.\n+ℹ 1 file changed in this session is not in your working tree: \/diff to review and apply\./);
  });

  it('and says nothing when the working tree has every change', async () => {
    const s = sessionHooks(null);
    rig = await startRig({ brain: answer, hooks: s.hooks });
    await rig.submit('add a note');
    await rig.settle();
    // The question the answer raised has been asked and answered by now.
    await rig.run(() => s.hooks.pendingChanges!());
    expect(rig.frame()).not.toContain('not in your working tree');
  });
});

describe('Esc', () => {
  it('closes a review of the session changes without applying anything; /diff brings it back', async () => {
    const s = sessionHooks({ files: ['notes.txt'] });
    rig = await startRig({ brain: answer, hooks: s.hooks });
    await rig.submit('/diff');
    await rig.untilState((st) => st.reviews.length === 1);
    expect(rig.frame()).toContain('Enter finish · Esc close');
    await rig.press('\u001b');
    const f = rig.frame();
    expect(f).not.toContain('Review: Session changes');
    expect(f).toContain('Review closed: nothing was applied. The changes wait for /diff.');
    expect(s.applied).toEqual([]);
    await rig.submit('/diff');
    await rig.untilState((st) => st.reviews.length === 1);
    expect(rig.frame()).toContain('Review: Session changes → working tree');
  });

  it("on a child's review, says a decision is needed (the child waits for it) and keeps it open", async () => {
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length > 1) return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'done' } } };
      if (lastText(r) === 'go') return { toolCall: { name: 'spawn_thread', input: { instructions: 'Write the notes', child_of: me.stack } } };
      return { text: 'ok' };
    };
    rig = await startRig({ brain, review: { diffOf: () => Promise.resolve(NOTES_DIFF), apply: () => Promise.resolve({ message: 'applied' }) } });
    await rig.submit('go');
    await rig.untilState((st) => st.reviews.length === 1);
    expect(rig.frame()).not.toContain('Esc close');
    await rig.press('\u001b');
    const f = rig.frame();
    expect(f).toContain('Review: Changes from Write the notes');
    expect(f).toContain('A child thread waits for this decision: A accepts all of it, R rejects it (with a reason).');
    // It waits for the user: a still mark, no spinner.
    expect(f).toContain('◆ Write the notes · waiting for your review');
  });

  it('stops a running answer and says so', async () => {
    const { stream, release } = heldStream('Working on it', ' and more');
    rig = await startRig({ brain: () => ({ textStream: stream }) });
    await rig.submit('long task');
    await rig.until((e) => e.type === 'text-delta');
    await rig.press('\u001b');
    await rig.run(async () => {
      release();
      await rig!.system.whenIdle();
    });
    expect(rig.events.find((e) => e.type === 'slice-finished')).toMatchObject({ outcome: 'interrupted' });
    expect(rig.frame()).toContain('Stopped. Send a message to go on.');
  });
});

describe('long task labels', () => {
  it('are cut at the terminal edge in thread rows, and shown whole in the review title', async () => {
    const task = `Rewrite the parser ${'so that every token keeps its source position '.repeat(3)}end`;
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length > 1) return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'done' } } };
      if (lastText(r) === 'go') return { toolCall: { name: 'spawn_thread', input: { instructions: task, child_of: me.stack } } };
      return { text: 'ok' };
    };
    rig = await startRig({ brain, review: { diffOf: () => Promise.resolve(NOTES_DIFF), apply: () => Promise.resolve({ message: 'applied' }) } });
    await rig.submit('go');
    await rig.untilState((st) => st.reviews.length === 1);
    const f = rig.frame();
    // The row takes the terminal's width (100 here), the label giving way, the activity kept.
    const row = f.split('\n').find((l) => l.includes('◆ Rewrite the parser'))!;
    expect(row).toMatch(/…\s*· waiting for your review$/);
    expect(row.length).toBeLessThanOrEqual(100);
    expect(row.indexOf('…')).toBeGreaterThan(60);
    // The title wraps inside the review box: every word of the label is there.
    const review = f.slice(f.indexOf('Review:')).replace(/[│\s]+/g, ' ');
    expect(review).toContain(`Review: Changes from ${task} (1 file, +1 -0)`);
  });
});
