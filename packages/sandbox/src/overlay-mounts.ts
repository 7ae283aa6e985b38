import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import path from 'node:path';
import type { HolderSetup } from './ns-holder.js';

export type OverlayMode = 'userns' | 'root';

/** What one sandbox mounts: paths relative to the session dir keep overlay's option string short. */
export interface MountPlan {
  sessionDir: string;
  /** Sandbox dir relative to the session dir. */
  sandboxRel: string;
  repoRoot: string;
  /** Colon-joined lower layers for the merged view, top first, relative to the session dir. */
  lowers: string;
  /** Lower layers as they were at spawn: the read-only "lower view" the diff compares against. */
  spawnLowers: string;
  /**
   * Lower layers of the session's current snapshot (delta over base), mounted read-only at
   * SNAPSHOT_VIEW_DIR for diffs since the snapshot; undefined when the base alone is that view.
   */
  snapshotLowers: string | undefined;
  /** Ignored heavy directories (node_modules) that get private overlays over the user's copy. */
  heavyDirs: readonly string[];
  /** The user's object directory (`<common dir>/objects`), as the host sees it. */
  realObjects: string;
  /**
   * A folder without a repository: no `.git` to give a private overlay, nor objects to keep
   * reachable (its private git dir, under the state dir, holds none and stays out of the view).
   */
  folder?: boolean;
}

/**
 * Where, inside the namespace, the user's real object directory stays reachable (read-only):
 * there `<repo>/.git/objects` is the sandbox's private .git overlay, which holds whatever
 * commands committed. Relative to the sandbox dir.
 */
export const REAL_OBJECTS_DIR = 'real-objects';

/** Where, relative to the sandbox dir, the namespace shows the session's current snapshot (see MountPlan). */
export const SNAPSHOT_VIEW_DIR = 'sv';

// Runs in the holder's confined view, as root of its namespace. Every mount is one line of a
// table (see overlayFstab) that a single mount(8) run makes in order: one mount(8) process per
// mount was most of the time a sandbox took to come up (each loads libmount and its libraries).
// `mount -a` silently skips an entry it believes is mounted already, so it must say
// "successfully mounted" (C locale) as many times as the table has lines, or the holder fails.
// That is also why the last step is a mount of its own: `-a` takes a remount of a mounted path
// for "already mounted". It makes the session's storage read-only in the
// namespace: the overlays keep writing their uppers (each holds its own reference to the mount
// it was made on), but nothing that runs in the view, nor a path this process follows through
// it, can write another sandbox's layers or the base. The object store and scratch dir (mounts
// of their own, made by the table) stay writable for our git (NamespaceHolder.git); commands get
// them read-only and hidden (HolderPlan.commandReadOnly, commandHidden).
const OVERLAY_SCRIPT = `
cd "$1"; F="$2/mounts.fstab"; N=$4
printf '%s' "$3" > "$F"
out=$(LC_ALL=C mount -n -a -v -T "$F")
n=0
while :; do
  case $out in *": successfully mounted"*) out=\${out#*": successfully mounted"}; n=$((n+1)) ;; *) break ;; esac
done
[ "$n" -eq "$N" ] || { echo "only $n of the sandbox's $N mounts were made" >&2; exit 1; }
mount -n -o remount,bind,ro "$PWD"
`;

/** A path as an fstab field: whitespace and backslashes octal-escaped, as libmount reads them back. */
export function fstabField(p: string): string {
  return p.replace(/[\\\s]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * The table of one sandbox's mounts, in the order they are made. Overlay options name the
 * layers relative to the session dir (mount's working directory): short, and free of the commas
 * and colons a user's path may hold.
 * - The user's object directory, their .git and each shared node_modules are bound read-only
 *   into the sandbox dir first, while their paths still name the real ones: once the merged view
 *   covers the repository path, "<repo>/.git" names the view's empty mount point. The private
 *   overlays of .git and node_modules then stack on those binds, over the merged view.
 * - A shared node_modules the user has since deleted is skipped (its sandbox sees an empty dir)
 *   instead of failing the whole mount: its position still names its private upper.
 * - `volatile` skips the sync of the whole upper filesystem at unmount (seconds on a busy disk,
 *   paid at every spawn and discard). Data written through it is ordinary page cache of the upper
 *   filesystem: it survives our process dying (sessions are resumable) and is written back by the
 *   kernel as usual; only a machine crash within that window can lose recent writes. Every mount
 *   gets a fresh work dir, which volatile requires.
 * - Every overlay's source is `tag`, new for each holder: `mount -a` compares sources and
 *   targets with what is mounted, and a nested session (an agent running us in its sandbox) must
 *   never find its mount already there.
 */
export function overlayFstab(mode: OverlayMode, plan: MountPlan, tag: string, isDir: (p: string) => boolean): string[] {
  const O = mode === 'userns' ? 'userxattr,' : '';
  const sb = plan.sandboxRel;
  const inSession = (rel: string): string => path.join(plan.sessionDir, rel);
  const bind = (from: string, to: string, ro: boolean): string => `${fstabField(from)} ${fstabField(to)} none ${ro ? 'bind,ro' : 'bind'} 0 0`;
  const overlay = (at: string, opts: string): string => `${tag} ${fstabField(at)} overlay ${opts} 0 0`;
  const heavy = plan.heavyDirs.map((d, i) => ({ d, i })).filter(({ d }) => isDir(path.join(plan.repoRoot, d)));
  const git = !plan.folder;
  return [
    ...(git ? [bind(plan.realObjects, inSession(`${sb}/${REAL_OBJECTS_DIR}`), true)] : []),
    ...(git ? [bind(path.join(plan.repoRoot, '.git'), inSession(`${sb}/stage/git`), true)] : []),
    ...heavy.map(({ d, i }) => bind(path.join(plan.repoRoot, d), inSession(`${sb}/stage/nm${i}`), true)),
    overlay(inSession(`${sb}/lv`), `ro,${O}lowerdir=${plan.spawnLowers}`),
    ...(plan.snapshotLowers ? [overlay(inSession(`${sb}/${SNAPSHOT_VIEW_DIR}`), `ro,${O}lowerdir=${plan.snapshotLowers}`)] : []),
    overlay(plan.repoRoot, `${O}volatile,lowerdir=${plan.lowers},upperdir=${sb}/upper,workdir=${sb}/work`),
    ...(git ? [overlay(path.join(plan.repoRoot, '.git'), `${O}volatile,lowerdir=${sb}/stage/git,upperdir=${sb}/git/upper,workdir=${sb}/git/work`)] : []),
    ...heavy.map(({ d, i }) =>
      overlay(path.join(plan.repoRoot, d), `${O}volatile,lowerdir=${sb}/stage/nm${i},upperdir=${sb}/nm${i}/upper,workdir=${sb}/nm${i}/work`),
    ),
    bind(inSession('objects'), inSession('objects'), false),
    bind(inSession('tmp'), inSession('tmp'), false),
  ];
}

/** The holder's setup that mounts one sandbox's overlays (see OVERLAY_SCRIPT and overlayFstab). */
export function overlaySetup(mode: OverlayMode, plan: MountPlan): HolderSetup {
  const tag = `infinity-code-${randomBytes(6).toString('hex')}`;
  const lines = overlayFstab(mode, plan, tag, (p) => statSync(p, { throwIfNoEntry: false })?.isDirectory() === true);
  return { script: OVERLAY_SCRIPT, args: [plan.sessionDir, plan.sandboxRel, `${lines.join('\n')}\n`, String(lines.length)] };
}
