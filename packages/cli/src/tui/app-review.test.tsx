import { afterEach, describe, expect, it } from 'vitest';
import { readHistory, type CompletionRequest, type ScriptedReply } from '@infinity-code/runtime';
import type { ReviewRequest } from './controller.js';
import type { ReviewDecision, ReviewDiff } from '../review-diff.js';
import { heldTool, lastText, requestText, startRig, threadOf, type Rig } from './testing.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const PARSER_DIFF: ReviewDiff = {
  files: [
    {
      path: 'src/parser.ts',
      status: 'modified',
      hunks: [
        { id: 'src/parser.ts#0', header: '@@ -1,3 +1,3 @@', lines: [' import { lex } from "./lex";', '-const strict = false;', '+const strict = true;'] },
        { id: 'src/parser.ts#1', header: '@@ -20,2 +20,2 @@', lines: ['-  throw new Error("bad token");', '+  throw new SyntaxError(`bad token ${t}`);'] },
      ],
      decisionIds: ['src/parser.ts#0', 'src/parser.ts#1'],
    },
    {
      path: 'test/parser.test.ts',
      status: 'added',
      hunks: [{ id: 'test/parser.test.ts#0', header: '@@ -0,0 +1 @@', lines: ['+it("parses", () => {});'] }],
      decisionIds: ['test/parser.test.ts#0'],
    },
  ],
};

/** Root: spawns "Fix the parser" and "Write the docs", then waits; children work as scripted. */
function scenario(docsGate: Promise<void>) {
  const tasks = new Map<string, string>();
  const rootRequests: string[] = [];
  async function* docsStream() {
    yield 'Drafting the docs privately.';
    await docsGate;
  }
  const brain = (r: CompletionRequest): ScriptedReply => {
    const me = threadOf(r);
    if (me.stack.length === 1) {
      rootRequests.push(requestText(r.messages));
      const spawned = r.messages.flatMap((m) => m.content).filter((b) => b.type === 'tool_use' && b.name === 'spawn_thread').length;
      const last = readHistory(r.messages).at(-1);
      if (last?.kind === 'injected' && last.report?.closed) return { text: 'Noted.' };
      if (spawned < 2) {
        const instructions = spawned === 0 ? 'Fix the parser' : 'Write the docs';
        return { text: spawned === 0 ? 'Splitting the work.' : '', toolCall: { name: 'spawn_thread', input: { instructions, child_of: me.stack } } };
      }
      return { text: 'Waiting for my children.' };
    }
    if (!tasks.has(me.id)) tasks.set(me.id, lastText(r));
    const task = tasks.get(me.id)!;
    const close = (report: string) => ({ toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: report } } });
    if (task.includes('Write the docs')) return { textStream: docsStream(), ...close('Docs written.') };
    return lastText(r).includes('passed') ? close('Parser fixed.') : { toolCall: { name: 'run_tests', input: {} } };
  };
  return { brain, tasks, rootRequests };
}

describe('children, their reports and the review of their diffs', () => {
  it('shows a row per live child with what it does, reports in the transcript, and a review whose reasons reach the parent', async () => {
    let releaseDocs!: () => void;
    const docsGate = new Promise<void>((r) => (releaseDocs = r));
    const { brain, tasks, rootRequests } = scenario(docsGate);
    const tests = heldTool();
    const decisions: ReviewDecision[] = [];
    const reviewed = new Set<string>();
    rig = await startRig({
      brain,
      tools: [tests],
      review: {
        async diffOf(thread) {
          // The parser child changed files (once: a second report would have nothing new).
          if (!tasks.get(thread.id)?.includes('Fix the parser') || reviewed.has(thread.id)) return null;
          reviewed.add(thread.id);
          return PARSER_DIFF;
        },
        async apply(_request: ReviewRequest, decision) {
          decisions.push(decision);
          return { message: `Squashed ${decision.accepted.length} hunks into the parent's sandbox.` };
        },
      },
    });

    await rig.submit('split the work');
    await rig.until((e) => e.type === 'tool-dispatched' && e.threadId !== 'root');
    await rig.until((e) => e.type === 'text-delta' && e.threadId !== 'root');
    let f = rig.frame();
    expect(f).toMatch(/Threads \(2\)\n\s+◇ Fix the parser · waiting on \$ npm test\n\s+. Write the docs · thinking/);
    expect(f).toContain('⏺ Spawn thread: Fix the parser');
    // A child's text is its own business: not streamed into the transcript.
    expect(f).not.toContain('Drafting the docs');

    await rig.run(async () => {
      releaseDocs();
      await rig!.system.whenIdle({ ignoreRunningTools: true });
    });
    f = rig.frame();
    expect(f).toMatch(/↳ Report from Write the docs\n\s+Docs written\./);
    expect(f).toMatch(/Threads \(1\)\n\s+◇ Fix the parser/);

    // The tests pass, the child reports, and its diff waits for the human.
    await rig.run(() => tests.answer('12 passed'));
    await rig.untilState((s) => s.reviews.length === 1);
    f = rig.frame();
    expect(f).toContain('Review: Changes from Fix the parser (2 files, +3 -2)');
    expect(f).toMatch(/▸ M src\/parser\.ts {2}2 undecided[\s│]+A test\/parser\.test\.ts {2}1 undecided/);
    expect(f).toContain('Fix the parser · waiting for your review');

    await rig.press('j'); // onto the first hunk
    expect(f = rig.frame()).toMatch(/▸ · @@ -1,3 \+1,3 @@[\s│]+import \{ lex \}[\s\S]*-const strict = false;[\s│]+\+const strict = true;/);
    await rig.press('a'); // accept it; the cursor moves on to the next undecided hunk
    expect(rig.frame()).toMatch(/✓ @@ -1,3 \+1,3 @@[\s│]+▸ · @@ -20,2 \+20,2 @@[\s│]+- {2}throw new Error/);
    await rig.press('r', 'keep the old error message');
    expect(rig.frame()).toContain('Reason for rejecting src/parser.ts hunk 2: keep the old error message');
    await rig.press('\r');
    // On to the next file's hunk; the list keeps the tally.
    expect(rig.frame()).toMatch(/M src\/parser\.ts {2}✓1 {2}✗1\s[\s\S]*▸ · @@ -0,0 \+1 @@/);
    await rig.press('k', 'k'); // back up, past the file line, to the rejected hunk
    expect(rig.frame()).toContain('▸ ✗ @@ -20,2 +20,2 @@ — keep the old error message');
    await rig.press('\r');
    expect(rig.frame()).toContain('1 hunk still undecided.');
    await rig.press('j', 'j', 'a', '\r');
    await rig.settle();

    expect(decisions).toEqual([
      { accepted: ['src/parser.ts#0', 'test/parser.test.ts#0'], rejected: [{ id: 'src/parser.ts#1', reason: 'keep the old error message' }] },
    ]);
    // The parent's next request carries the human's verdict, reason included.
    expect(rootRequests[rootRequests.length - 1]).toContain('Rejected src/parser.ts#1: keep the old error message');
    f = rig.frame();
    expect(f).toMatch(/↳ Report from Fix the parser \(changes: 2 files, \+3 -2\)\n\s+Parser fixed\./);
    expect(f).toContain("Squashed 2 hunks into the parent's sandbox.");
    expect(f).not.toContain('Threads (');
    expect(f).not.toContain('Review:');
    expect(f).toContain('Ask for a change, or /help');
  });

  it('/diff opens the session diff; rejecting all of it with R asks for one reason', async () => {
    const applied: Array<{ request: ReviewRequest; decision: ReviewDecision }> = [];
    rig = await startRig({
      brain: () => ({ text: 'ok' }),
      hooks: {
        showDiff: async () => PARSER_DIFF,
        applyToWorkingTree: async (request, decision) => {
          applied.push({ request, decision });
          return { message: 'Nothing applied.', conflicts: [] };
        },
      },
    });
    await rig.submit('/diff');
    expect(rig.frame()).toContain('Review: Session changes → working tree (2 files, +3 -2)');
    await rig.press('R', 'not now', '\r', '\r');
    await rig.settle();
    expect(applied).toHaveLength(1);
    expect(applied[0].request.kind).toBe('working-tree');
    expect(applied[0].decision.rejected.map((r) => r.reason)).toEqual(['not now', 'not now', 'not now']);
    expect(rig.frame()).toContain('Session changes → working tree: accepted 0 hunks, rejected 3.');
  });
});

describe('a hunk longer than the screen', () => {
  it('e prints it whole above the review, into the scrollback, and the review goes on below', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `+line ${i + 1}`);
    const big: ReviewDiff = { files: [{ path: 'big.txt', status: 'added', hunks: [{ id: 'big.txt#0', header: '@@ -0,0 +1,200 @@', lines }], decisionIds: ['big.txt#0'] }] };
    rig = await startRig({
      brain: () => ({ text: 'ok' }),
      hooks: { showDiff: async () => big, applyToWorkingTree: async () => ({ message: 'Applied.' }) },
    });
    await rig.submit('/diff');
    expect(rig.frame()).not.toContain('+line 200');
    await rig.press('e');
    const f = rig.frame();
    const printed = f.slice(0, f.indexOf('Review:'));
    expect(printed).toMatch(/Under review: big\.txt, all 200 lines\n\s+@@ -0,0 \+1,200 @@\n\s+\+line 1\n/);
    expect(printed).toMatch(/\+line 199\n\s+\+line 200\n/);
    expect(f.slice(f.indexOf('Review:'))).toContain('shown whole above (e again)');
    await rig.press('a', '\r');
    await rig.settle();
    expect(rig.frame()).toContain('Applied.');
  });
});

describe('quitting with a review pending', () => {
  it('quit abandons a decision that will not come (the runtime re-asks on the next start)', async () => {
    rig = await startRig({
      brain: (r) => {
        const me = threadOf(r);
        if (me.stack.length > 1) return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'done' } } };
        if (lastText(r) === 'go') return { toolCall: { name: 'spawn_thread', input: { instructions: 'edit', child_of: me.stack } } };
        return { text: 'ok' };
      },
      review: { diffOf: async () => PARSER_DIFF, apply: async () => ({ message: 'applied' }) },
    });
    await rig.submit('go');
    await rig.untilState((s) => s.reviews.length === 1);
    await rig.run(() => rig!.controller.quit('keep')); // resolves although nobody decided
    // The review went with the close: a late decision is refused, not applied to a closed session.
    const review = rig.store.getState().reviews[0];
    await expect(rig.run(() => rig!.controller.resolveReview(review, { accepted: [], rejected: [] }))).rejects.toThrow(/no review .* is waiting/);
  });
});

describe('files the user edits during the session', () => {
  it('are listed, flagged in a review that touches them, and /refresh hands them to the agent', async () => {
    let tell: (edits: { paths: string[]; problem?: string }) => void = () => undefined;
    let refreshed = 0;
    rig = await startRig({
      brain: () => ({ text: 'ok' }),
      hooks: {
        watchUserEdits(listener) {
          tell = listener;
          listener({ paths: [] });
          return () => (tell = () => undefined);
        },
        async refreshBase() {
          refreshed++;
          tell({ paths: [] });
          return { message: 'The agent now sees your version of src/parser.ts.' };
        },
        showDiff: async () => PARSER_DIFF,
        applyToWorkingTree: async () => ({ message: 'Applied.' }),
      },
    });
    await rig.submit('/refresh');
    expect(rig.frame()).toContain('You have not edited any file since the session began: nothing to refresh.');
    expect(refreshed).toBe(0);

    await rig.run(async () => tell({ paths: ['README.md', 'src/parser.ts'] }));
    expect(rig.frame()).toContain('✎ You edited 2 files since the session began (README.md, src/parser.ts)');
    // A review of a diff touching one of them says so before anything is applied.
    await rig.submit('/diff');
    const review = rig.frame();
    expect(review).toContain('⚠ You edited src/parser.ts yourself since the session began: applying merges 3-way');
    expect(review).toMatch(/M src\/parser\.ts .*✎ edited by you/);
    expect(review).not.toMatch(/test\/parser\.test\.ts .*edited by you/);
    await rig.press('R', 'later', '\r', '\r');
    await rig.settle();

    await rig.submit('/refresh');
    expect(refreshed).toBe(1);
    const after = rig.frame();
    expect(after).toContain('The agent now sees your version of src/parser.ts.');
    expect(after).not.toContain('✎ You edited');
    // The watcher gave up: the user is told why, once.
    await rig.run(async () => tell({ paths: [], problem: 'Your edits to the working tree are not tracked: the system limit on watched files is reached.' }));
    expect(rig.frame().match(/Your edits to the working tree are not tracked/g)).toHaveLength(1);
  });
});
