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
}

/**
 * Where, inside the namespace, the user's real object directory stays reachable (read-only):
 * there `<repo>/.git/objects` is the sandbox's private .git overlay, which holds whatever
 * commands committed. Relative to the sandbox dir.
 */
export const REAL_OBJECTS_DIR = 'real-objects';

/** Where, relative to the sandbox dir, the namespace shows the session's current snapshot (see MountPlan). */
export const SNAPSHOT_VIEW_DIR = 'sv';

// Runs in the holder's confined view, as root of its namespace. The private overlays for .git and
// node_modules must be mounted before the merged view covers the repository path (afterwards
// "$REPO/.git" would name the merged view's empty mount point), then moved into place.
// The user's object directory is bind-mounted read-only first, while its path still names the
// real one (one mount(8) doing the bind and the read-only remount: util-linux 2.27 or later).
// `volatile` skips the sync of the whole upper filesystem at unmount (seconds on a busy disk, paid
// at every spawn and discard). Data written through it is ordinary page cache of the
// upper filesystem: it survives our process dying (sessions are resumable) and is written back
// by the kernel as usual; only a machine crash within that window can lose recent writes. Every
// mount gets a fresh work dir, which volatile requires. A shared node_modules the user has since
// deleted is skipped (its sandbox sees an empty dir) instead of failing the whole mount: its
// position still names its private upper, so the list itself never changes.
// Last, the session's storage is made read-only in the namespace: the overlays keep writing their
// uppers (each holds its own reference to the mount it was made on), but nothing that runs in the
// view, nor a path this process follows through it, can write another sandbox's layers or the base.
// The object store and scratch dir stay writable for our git (NamespaceHolder.git); commands get
// them read-only and hidden (HolderPlan.commandReadOnly, commandHidden).
const OVERLAY_SCRIPT = `
cd "$1"; SB=$2; REPO=$3; LOWERS=$4; SPAWN=$5; O=$6; OBJ=$7; SNAP=$8; shift 8
mount -n --bind -o ro "$OBJ" "$SB/${REAL_OBJECTS_DIR}"
mount -n -t overlay overlay -o "\${O}volatile,lowerdir=$REPO/.git,upperdir=$SB/git/upper,workdir=$SB/git/work" "$SB/stage/git"
i=0; SKIP=" "
for d in "$@"; do
  if [ -d "$REPO/$d" ]; then
    mount -n -t overlay overlay -o "\${O}volatile,lowerdir=$REPO/$d,upperdir=$SB/nm$i/upper,workdir=$SB/nm$i/work" "$SB/stage/nm$i"
  else
    SKIP="$SKIP$i "
  fi
  i=$((i+1))
done
mount -n -t overlay overlay -o "ro,\${O}lowerdir=$SPAWN" "$SB/lv"
if [ -n "$SNAP" ]; then mount -n -t overlay overlay -o "ro,\${O}lowerdir=$SNAP" "$SB/${SNAPSHOT_VIEW_DIR}"; fi
mount -n -t overlay overlay -o "\${O}volatile,lowerdir=$LOWERS,upperdir=$SB/upper,workdir=$SB/work" "$REPO"
mount -n --move "$SB/stage/git" "$REPO/.git"
i=0
for d in "$@"; do
  case "$SKIP" in *" $i "*) ;; *) mount -n --move "$SB/stage/nm$i" "$REPO/$d" ;; esac
  i=$((i+1))
done
mount -n --bind objects objects
mount -n --bind tmp tmp
mount -n -o remount,bind,ro "$PWD"
`;

/** The holder's setup that mounts one sandbox's overlays (see OVERLAY_SCRIPT). */
export function overlaySetup(mode: OverlayMode, plan: MountPlan): HolderSetup {
  return {
    script: OVERLAY_SCRIPT,
    args: [
      plan.sessionDir,
      plan.sandboxRel,
      plan.repoRoot,
      plan.lowers,
      plan.spawnLowers,
      mode === 'userns' ? 'userxattr,' : '',
      plan.realObjects,
      plan.snapshotLowers ?? '',
      ...plan.heavyDirs,
    ],
  };
}
