import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { classifyChanges, resolveLink, type ApplyPolicyOptions, type OmittedFile, type PolicyChange } from './apply-policy.js';
import type { SessionContext } from './backend.js';
import { readObjects } from './blobs.js';
import { diffTrees, type SandboxDiff } from './diff.js';
import { nulFields, text, type GitRunner } from './git.js';
import { sealedGit } from './trusted-git.js';
import { reposAbove } from './nested-repos.js';
import { workingTreeFactsOf, type WorkingTreeFacts } from './working-tree-facts.js';
import { diffFacts, NO_MODE, type RawChange } from './raw-changes.js';
import { hasOddBytes, nameBytes } from './utf8-names.js';

const SYMLINK = '120000';
const GITLINK = '160000';
/** Rounds of git lookups while resolving links: each finds at least one more link or ends. */
const MAX_LINK_ROUNDS = 50;
/** Diffs of at most this many changes get their patch made with their listing (see policyDiff). */
const PATCH_WITH_LISTING_UP_TO = 64;

export interface PolicyDiffRequest {
  from: string;
  to: string;
  /** Nested repositories the backend met among the sandbox's changes (their files are not in `to`). */
  nestedRepos?: readonly string[];
  /** Paths the backend found too long to read (see long-paths.ts; their files are not in `to`). */
  tooLong?: readonly string[];
  /** The sandbox's merged view, which `to` was taken from. */
  view: {
    /** Host path of it, to look for `.git` above changed paths. */
    hostRoot: string;
    /** git that sees it at `workTree` (inside the namespace on overlay backends), sealed (trusted-git.ts). */
    git: GitRunner;
    workTree: string;
  };
  policy: ApplyPolicyOptions;
  /** The user's working tree, when the diff is meant for it: files it ignores are checked. */
  workingTree?: string;
}

interface Candidate extends PolicyChange {
  raw: RawChange;
}

/**
 * The diff from `from` to `to` minus what the apply policy leaves out, with the reasons: the
 * dropped changes are undone in a copy of `to` (through a temporary index, so path bytes and
 * modes stay exactly git's), and the patch is made between `from` and that tree. Files left out
 * never go through git's patch output, whatever their size.
 */
export async function policyDiff(ctx: SessionContext, req: PolicyDiffRequest): Promise<SandboxDiff> {
  // Most diffs leave nothing out: their patch is made with the listing, before the policy is
  // checked. Only for a few files, so that a huge diff never makes a patch it would throw away.
  const facts = await diffFacts(ctx, req.from, req.to, PATCH_WITH_LISTING_UP_TO);
  const { sizes, patch } = facts;
  const raw = splitRenamesToUtf8(facts.raw);
  const newLinks = await linkTargets(ctx, raw);
  const candidates = raw.map((c): Candidate => {
    const change: Candidate = { raw: c, path: c.path };
    if (c.oldPath !== undefined) change.oldPath = c.oldPath;
    if (c.oldMode !== NO_MODE) change.oldMode = c.oldMode;
    if (c.newMode !== NO_MODE) change.newMode = c.newMode;
    const oldSize = sizes.get(c.oldId);
    const newSize = sizes.get(c.newId);
    if (oldSize !== undefined && c.oldMode !== GITLINK) change.oldSize = oldSize;
    if (newSize !== undefined && c.newMode !== GITLINK) change.newSize = newSize;
    const target = newLinks.get(c.path);
    if (target !== undefined) change.linkTarget = target;
    return change;
  });
  const [links, nestedRepos, tooLong, treeFacts] = await Promise.all([
    linksOnTheWay(ctx, req.to, newLinks),
    nestedReposOf(ctx, req, raw),
    tooLongNotIgnored(ctx, req),
    req.workingTree === undefined ? undefined : workingTreeFactsOf(ctx, req.workingTree, candidates),
  ]);
  const { dropped, omitted } = classifyChanges(candidates, { nestedRepos, links, tooLong, ...treeFacts }, req.policy);
  const made = await madeDiff(ctx, req, raw, dropped, omitted, patch);
  if (req.workingTree !== undefined && treeFacts !== undefined) {
    workingTreeFacts.set(made, { workingTree: req.workingTree, changes: candidates, facts: treeFacts });
  }
  return made;
}

/** What a diff for the user's working tree took from it, to tell later whether it still holds. */
interface TreeFacts {
  workingTree: string;
  changes: readonly PolicyChange[];
  facts: WorkingTreeFacts;
}

const workingTreeFacts = new WeakMap<SandboxDiff, TreeFacts>();

/**
 * Whether a diff made for the working tree earlier would be made the same now, as far as the tree
 * goes: what workingTreeFactsOf found then it finds now.
 */
export async function stillFitsWorkingTree(ctx: SessionContext, diff: SandboxDiff): Promise<boolean> {
  const before = workingTreeFacts.get(diff);
  if (!before) return false;
  return factsKey(await workingTreeFactsOf(ctx, before.workingTree, before.changes)) === factsKey(before.facts);
}

function factsKey(f: WorkingTreeFacts): string {
  return JSON.stringify([[...f.userIgnored].sort(), [...f.obstacles].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
}

async function madeDiff(
  ctx: SessionContext,
  req: PolicyDiffRequest,
  raw: readonly RawChange[],
  dropped: ReadonlyArray<Candidate>,
  omitted: readonly OmittedFile[],
  patch: Buffer | undefined,
): Promise<SandboxDiff> {
  if (dropped.length === 0) return diffTrees(ctx, req.from, req.to, { omitted, raw, ...(patch ? { patch } : {}) });
  const to = await withoutChanges(ctx, req.to, dropped.map((c) => c.raw));
  return diffTrees(ctx, req.from, to, { omitted });
}

/**
 * A rename from a name that is not UTF-8 to one that is (an agent giving a file a name that can
 * be carried) as the deletion and the addition it is made of: the deletion is left out, saying
 * so (see OmitRule 'non-utf8-name'), and the file comes through under its new name. Whole, the
 * rename would be left out, new name and all. A change split here is always left out in part,
 * so the patch made with the listing, which holds it whole, is never used.
 */
function splitRenamesToUtf8(raw: readonly RawChange[]): RawChange[] {
  return raw.flatMap((c): RawChange[] => {
    if (c.oldPath === undefined || !hasOddBytes(c.oldPath) || hasOddBytes(c.path)) return [c];
    const none = '0'.repeat(c.oldId.length);
    return [
      { letter: 'D', path: c.oldPath, pathBytes: c.oldPathBytes ?? nameBytes(c.oldPath), oldMode: c.oldMode, newMode: NO_MODE, oldId: c.oldId, newId: none },
      { letter: 'A', path: c.path, pathBytes: c.pathBytes, oldMode: NO_MODE, newMode: c.newMode, oldId: none, newId: c.newId },
    ];
  });
}

/** Targets of the symlinks the diff creates or changes, by path. */
async function linkTargets(ctx: SessionContext, raw: readonly RawChange[]): Promise<Map<string, string>> {
  const links = raw.filter((c) => c.newMode === SYMLINK);
  const blobs = await readObjects(ctx, links.map((c) => c.newId));
  return new Map(links.flatMap((c) => (blobs.has(c.newId) ? [[c.path, blobs.get(c.newId)!.toString('utf8')] as const] : [])));
}

/**
 * The symlinks of `tree` that the new links' targets lead through, with their targets: found
 * round by round (each round asks git about the paths the resolution reached and could not
 * place), so the cost follows the links, not the size of the tree.
 */
async function linksOnTheWay(ctx: SessionContext, tree: string, newLinks: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const known = new Map<string, string | null>(newLinks);
  for (let round = 0; round < MAX_LINK_ROUNDS; round++) {
    const asked = new Set<string>();
    const lookup = {
      get(p: string): string | undefined {
        const v = known.get(p);
        if (v === undefined) asked.add(p);
        return v ?? undefined;
      },
    };
    for (const [p, target] of newLinks) resolveLink(p, target, lookup);
    if (asked.size === 0) break;
    const found = await symlinksAt(ctx, tree, [...asked]);
    for (const p of asked) known.set(p, found.get(p) ?? null);
  }
  return new Map([...known].flatMap(([p, t]) => (t === null ? [] : [[p, t] as const])));
}

/** The symlinks among `paths` in `tree`, with their targets. */
async function symlinksAt(ctx: SessionContext, tree: string, paths: readonly string[]): Promise<Map<string, string>> {
  const out = await sealedGit(ctx.plumbingGitDir)(['--literal-pathspecs', 'ls-tree', '-z', tree, '--', ...paths], {
    cwd: ctx.tmpDir,
    env: { ...ctx.objectEnv },
  });
  // "<mode> <type> <id>\t<path>"
  const entries = nulFields(out.stdout)
    .filter((e) => e.startsWith(`${SYMLINK} `))
    .map((e) => ({ id: e.slice(0, e.indexOf('\t')).split(' ')[2], path: e.slice(e.indexOf('\t') + 1) }));
  const targets = await readObjects(ctx, entries.map((e) => e.id));
  return new Map(entries.map((e) => [e.path, targets.get(e.id)?.toString('utf8') ?? '']));
}

/**
 * Nested repositories: those the backend met (unless git ignores where they are, like the rest
 * of such a directory), and any above a changed path in the view (a repository made in a
 * directory that already had files, or by an ancestor sandbox).
 */
async function nestedReposOf(ctx: SessionContext, req: PolicyDiffRequest, raw: readonly RawChange[]): Promise<Set<string>> {
  const paths = raw.flatMap((c) => (c.oldPath === undefined ? [c.path] : [c.oldPath, c.path]));
  const [fromBackend, above] = await Promise.all([notIgnoredInView(ctx, req, req.nestedRepos ?? []), reposAbove(req.view.hostRoot, paths)]);
  return new Set([...fromBackend, ...above]);
}

/** The paths the backend found too long to read, but those git ignores: like a nested repository's, left out without a word. */
async function tooLongNotIgnored(ctx: SessionContext, req: PolicyDiffRequest): Promise<string[]> {
  const all = req.tooLong ?? [];
  const dir = (p: string) => p.replace(/\/$/, '');
  const kept = new Set(await notIgnoredInView(ctx, req, all.map(dir)));
  return all.filter((p) => kept.has(dir(p)));
}

async function notIgnoredInView(ctx: SessionContext, req: PolicyDiffRequest, dirs: readonly string[]): Promise<string[]> {
  if (dirs.length === 0) return [];
  // Sealed, as every git over sandbox content: in the view, the repository's .git is the
  // sandbox's own, whose config (fsmonitor, hooks) a command writes. The session's git dir holds
  // the ignore rules from outside the tree (info/exclude, the user's excludes file).
  const out = await req.view.git([`--work-tree=${req.view.workTree}`, 'check-ignore', '-z', '--stdin'], {
    cwd: ctx.tmpDir,
    env: { ...ctx.objectEnv, GIT_INDEX_FILE: ctx.baseIndex },
    input: dirs.map((d) => `${d}\0`).join(''),
    okExitCodes: [1],
  });
  const ignored = new Set(nulFields(out.stdout));
  return dirs.filter((d) => !ignored.has(d));
}

/**
 * `to` with `dropped` undone: each path back at its old version (or gone, if it is new), through
 * a temporary index. Removals go first, so a file put back where a dropped directory was does
 * not collide with it.
 */
async function withoutChanges(ctx: SessionContext, to: string, dropped: readonly RawChange[]): Promise<string> {
  const index = path.join(ctx.tmpDir, `policy-${randomUUID()}.index`);
  const env = { ...ctx.objectEnv, GIT_INDEX_FILE: index };
  const git = sealedGit(ctx.plumbingGitDir);
  const removals: Buffer[] = [];
  const restores: Buffer[] = [];
  const entry = (mode: string, id: string, p: Buffer) => Buffer.concat([Buffer.from(`${mode} ${id}\t`), p, Buffer.from([0])]);
  for (const c of dropped) {
    const zero = '0'.repeat(c.newId.length);
    if (c.newMode !== NO_MODE) removals.push(entry('0', zero, c.pathBytes));
    if (c.oldMode !== NO_MODE) restores.push(entry(c.oldMode, c.oldId, c.oldPathBytes ?? c.pathBytes));
  }
  try {
    await git(['read-tree', to], { cwd: ctx.tmpDir, env });
    await git(['update-index', '-z', '--index-info'], { cwd: ctx.tmpDir, env, input: Buffer.concat([...removals, ...restores]) });
    return text(await git(['write-tree'], { cwd: ctx.tmpDir, env }));
  } finally {
    await rm(index, { force: true });
    await rm(`${index}.lock`, { force: true });
  }
}
